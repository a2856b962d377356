#include "store/notifier.h"

#include <poll.h>

#include <cerrno>
#include <thread>

#include "store/libpq.h"
#include "store/postgres.h"

namespace airlock::store {

namespace {

bool channel_name_ok(const std::string& c) {
  if (c.empty() || c.size() > 63) return false;
  for (char ch : c)
    if (!((ch >= 'a' && ch <= 'z') || ch == '_')) return false;
  return true;
}

void ignore_notice(void*, const char*) {}

}  // namespace

struct Notifier::Impl {
  std::string url;  // "" = SQLite: sleep
  std::vector<std::string> channels;
  const LibPq* pq = nullptr;
  PGconn* conn = nullptr;

  ~Impl() { disconnect(); }

  void disconnect() {
    if (conn) pq->finish(conn);
    conn = nullptr;
  }

  // Connects and LISTENs on every channel. Errors never repeat the URL.
  Status connect() {
    disconnect();
    conn = pq->connectdb(url.c_str());
    if (!conn) return fail(ErrorKind::kUnavailable, "notifier: connect to PostgreSQL: out of memory");
    if (pq->status(conn) != CONNECTION_OK) {
      std::string why = pq->error_message(conn);
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      disconnect();
      return fail(ErrorKind::kUnavailable, "notifier: connect to PostgreSQL: " + why);
    }
    pq->set_notice_processor(conn, ignore_notice, nullptr);
    for (const auto& c : channels) {
      // LISTEN takes no parameter; the names were checked to be [a-z_]+.
      std::string text = "LISTEN " + c;
      PGresult* r = pq->exec(conn, text.c_str());
      bool ok = r && pq->result_status(r) == PGRES_COMMAND_OK;
      std::string why = ok ? "" : pq->error_message(conn);
      if (r) pq->clear(r);
      if (!ok) {
        disconnect();
        return fail(ErrorKind::kUnavailable, "notifier: LISTEN " + c + ": " + why);
      }
    }
    return {};
  }

  // A notification already read from the connection, if any.
  std::optional<Notification> take() {
    PGnotify* n = pq->notifies(conn);
    if (!n) return std::nullopt;
    Notification out{n->relname ? n->relname : "", n->extra ? n->extra : ""};
    pq->freemem(n);
    return out;
  }
};

Notifier::Notifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Notifier::~Notifier() = default;

Result<std::unique_ptr<Notifier>> Notifier::open(const std::string& database_url,
                                                 const std::vector<std::string>& channels) {
  auto impl = std::make_unique<Impl>();
  for (const auto& c : channels)
    if (!channel_name_ok(c)) return fail(ErrorKind::kInvalid, "notifier: channel name '" + c + "' is not [a-z_]+");
  impl->channels = channels;
  if (!database_url.empty()) {
    if (!is_postgres_url(database_url)) return fail(ErrorKind::kInvalid, "notifier: database_url is not PostgreSQL");
    auto pq = libpq();
    if (!pq) return std::unexpected(pq.error());
    impl->pq = *pq;
    impl->url = database_url;
    if (auto st = impl->connect(); !st) return std::unexpected(st.error());
  }
  return std::unique_ptr<Notifier>(new Notifier(std::move(impl)));
}

Result<std::optional<Notification>> Notifier::wait(std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  Impl& m = *impl_;
  if (m.url.empty()) {
    std::this_thread::sleep_for(timeout);
    return std::optional<Notification>();
  }
  if (!m.conn || m.pq->status(m.conn) != CONNECTION_OK) {
    // Reconnect; notifications sent while no connection listened are lost,
    // which is why every caller also polls the store.
    if (auto st = m.connect(); !st) {
      std::this_thread::sleep_for(timeout);  // no busy loop while the server is away
      return std::unexpected(st.error());
    }
  }
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto n = m.take()) return n;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::optional<Notification>();
    pollfd p{m.pq->socket(m.conn), POLLIN, 0};
    if (p.fd < 0) {
      m.disconnect();
      return fail(ErrorKind::kUnavailable, "notifier: the PostgreSQL connection has no socket");
    }
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno != EINTR) return fail_errno("notifier: poll");
    if (r > 0 && m.pq->consume_input(m.conn) != 1) {
      std::string why = m.pq->error_message(m.conn);
      m.disconnect();
      return fail(ErrorKind::kUnavailable, "notifier: read from PostgreSQL: " + why);
    }
  }
}

}  // namespace airlock::store
