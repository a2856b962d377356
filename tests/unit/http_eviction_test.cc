// Which connection a full server closes to make room: the one that has
// waited longest for a request header, counted from its accept. Connections
// here are accepted (made) but never started, as under load when the I/O
// threads lag behind the acceptor.
#include "http/connection.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace airlock::api {
namespace {

std::shared_ptr<Connection> accepted(const std::shared_ptr<HttpServer::Core>& core) {
  auto c = std::make_shared<Connection>(core, tcp::socket(net::make_strand(core->ioc)));
  std::lock_guard lock(core->mutex);
  core->connections[c.get()] = c;
  return c;
}

TEST(HttpEviction, AnAcceptedConnectionThatHasNotStartedIsEvictableOldestFirst) {
  auto core = std::make_shared<HttpServer::Core>(ServerOptions{});
  std::vector<std::shared_ptr<Connection>> conns;
  for (int i = 0; i < 5; ++i) conns.push_back(accepted(core));
  for (const auto& c : conns) EXPECT_GT(c->waiting_since.load(), 0) << "waiting from the accept on";

  std::lock_guard lock(core->mutex);
  for (int i = 0; i < 5; ++i) {
    std::shared_ptr<Connection> to_close;
    ASSERT_TRUE(core->evict_oldest_waiting(to_close));
    EXPECT_EQ(to_close, conns[i]) << "eviction " << i << " chose a younger connection";
    EXPECT_EQ(conns[i]->waiting_since.load(), Connection::kEvicted);
  }
  std::shared_ptr<Connection> none;
  EXPECT_FALSE(core->evict_oldest_waiting(none)) << "every connection was already chosen";
  EXPECT_EQ(core->evicting, 5u);
}

TEST(HttpEviction, AConnectionInsideARequestIsNeverChosen) {
  auto core = std::make_shared<HttpServer::Core>(ServerOptions{});
  auto busy = accepted(core);
  auto idle = accepted(core);
  busy->waiting_since.store(0);  // its header arrived: inside a request
  std::lock_guard lock(core->mutex);
  std::shared_ptr<Connection> to_close;
  ASSERT_TRUE(core->evict_oldest_waiting(to_close));
  EXPECT_EQ(to_close, idle);
  EXPECT_EQ(busy->waiting_since.load(), 0);
  EXPECT_FALSE(core->evict_oldest_waiting(to_close));
}

}  // namespace
}  // namespace airlock::api
