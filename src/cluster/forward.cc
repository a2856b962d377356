#include "cluster/forward.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "base/unique_fd.h"
#include "cluster/forward_message.h"
#include "http/client.h"

namespace airlock::cluster {
namespace {

using json = nlohmann::json;

// The spooled body of an upload, read whole (it was bounded by the route's
// max_body_bytes when it arrived).
Result<std::string> read_spooled(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return fail_errno("open the spooled body");
  std::string out;
  char buf[64 << 10];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read the spooled body");
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// A node address that is a name: its first address (a blocking lookup, on
// the forwarding thread).
Result<std::string> resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) return fail(ErrorKind::kUnavailable, "look up " + host + ": " + ::gai_strerror(rc));
  char text[INET6_ADDRSTRLEN] = {};
  const void* addr = found->ai_family == AF_INET6
                         ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(found->ai_addr)->sin6_addr)
                         : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr);
  ::inet_ntop(found->ai_family, addr, text, sizeof text);
  ::freeaddrinfo(found);
  return std::string(text);
}

bool timed_out(const std::string& error) {
  return error.find("timed out") != std::string::npos || error.find("Timer expired") != std::string::npos;
}

}  // namespace

Forwarder::Forwarder(ForwarderOptions options) : options_(std::move(options)) {}

Forwarder::~Forwarder() { stop(); }

size_t Forwarder::in_flight() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& f : flights_) n += !f->done.load();
  return n;
}

void Forwarder::reap_locked() {
  for (auto it = flights_.begin(); it != flights_.end();) {
    if ((*it)->done.load()) {
      (*it)->thread.join();
      it = flights_.erase(it);
    } else {
      ++it;
    }
  }
}

void Forwarder::answer(const std::shared_ptr<api::Exchange>& ex, api::HttpResponse r) {
  if (options_.answered) options_.answered(r.status);
  ex->respond(std::move(r));
}

void Forwarder::launch(const std::shared_ptr<api::Exchange>& ex, std::function<void()> work) {
  std::lock_guard lock(mu_);
  reap_locked();
  if (stopping_) return answer(ex, api::HttpResponse::error(503, "stopping", "the service is stopping"));
  if (flights_.size() >= options_.max_in_flight)
    return answer(ex, api::HttpResponse::error(503, "busy", "this API node forwards " +
                                                                std::to_string(options_.max_in_flight) +
                                                                " requests already; try again"));
  auto flight = std::make_unique<Flight>();
  Flight* raw = flight.get();
  flights_.push_back(std::move(flight));
  raw->thread = std::thread([raw, work = std::move(work)] {
    work();
    raw->done = true;
  });
}

void Forwarder::send(std::shared_ptr<api::Exchange> ex, const ForwardTarget& to, ForwardKind kind) {
  launch(ex, [this, ex, to, kind] { run(ex, to, kind); });
}

void Forwarder::send_when(std::shared_ptr<api::Exchange> ex, std::function<Decision()> decide,
                          std::function<void()> here, ForwardKind kind) {
  launch(ex, [this, ex, decide = std::move(decide), here = std::move(here), kind] {
    while (!ex->closed()) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
      }
      Decision d = decide();
      if (d.kind == Decision::Kind::kNode) return run(ex, d.node, kind);
      if (d.kind == Decision::Kind::kHere) return here();
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
}

void Forwarder::stop() {
  std::list<std::unique_ptr<Flight>> flights;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    flights.swap(flights_);
  }
  for (auto& f : flights) f->thread.join();
}

void Forwarder::run(const std::shared_ptr<api::Exchange>& ex, const ForwardTarget& to, ForwardKind kind) {
  const api::HttpRequest& req = ex->request();
  auto unreachable = [&](const std::string& why) {
    if (options_.log)
      options_.log({{"event", "forward_failed"}, {"node", to.node_id}, {"address", to.address},
                    {"method", req.method}, {"path", req.path}, {"error", why}});
    // The id, not the address: the address is the cluster's inside, and the
    // operator finds it from the id (/healthz lists the nodes).
    answer(ex, api::HttpResponse::error(502, "node_unreachable", "node " + to.node_id + " is unreachable"));
  };
  auto address = parse_node_address(to.address);
  if (!address) return unreachable(address.error().message());
  if (!address->literal) {
    auto ip = resolve(address->host);
    if (!ip) return unreachable(ip.error().message());
    address->host = *ip;
  }
  auto headers = forwarded_headers(req, options_.node_key, options_.self_node_id);

  if (kind == ForwardKind::kEvents) {
    api::HttpClient client(address->host, address->port, options_.connect_timeout_ms);
    api::EventStream stream = client.open_events(req.target, headers);
    if (stream.status() == 0) return unreachable(stream.error());
    auto content_type = stream.headers().find("content-type");
    bool events = stream.status() == 200 && content_type != stream.headers().end() &&
                  content_type->second.starts_with("text/event-stream");
    if (!events) {  // an error or a 204: a plain answer
      api::HttpResponse r;
      r.status = stream.status();
      r.headers = answer_headers(stream.headers());
      r.body = stream.read_rest(options_.connect_timeout_ms, 1 << 20);
      return answer(ex, std::move(r));
    }
    if (options_.answered) options_.answered(200);
    ex->start_events();
    while (!ex->closed()) {
      if (auto e = stream.next(1000)) {
        ex->send_event(e->id, e->event, e->data);
        continue;
      }
      if (stream.ended()) break;
      auto silent = std::chrono::steady_clock::now() - stream.last_bytes_at();
      if (silent > std::chrono::milliseconds(options_.event_silence_ms)) break;  // a dead link
    }
    // Ended by the worker (or lost): the client resumes with Last-Event-ID.
    stream.close();
    ex->end_events();
    return;
  }

  std::string body = req.body;
  if (!req.body_file.empty()) {
    auto spooled = read_spooled(req.body_file);
    if (!spooled) return answer(ex, api::HttpResponse::error(500, "internal", spooled.error().message()));
    body = std::move(*spooled);
  }
  int timeout_ms = forward_timeout_ms(req, options_.base_timeout_ms);
  api::HttpClient client(address->host, address->port, timeout_ms);
  api::Response res = client.request(req.method, req.target, body, headers);
  if (res.status == 0) {
    if (timed_out(res.error) && !res.error.starts_with("connect:")) {
      if (options_.log)
        options_.log({{"event", "forward_timeout"}, {"node", to.node_id}, {"address", to.address},
                      {"method", req.method}, {"path", req.path}, {"timeout_ms", timeout_ms}});
      return answer(ex, api::HttpResponse::error(504, "node_timeout", "node " + to.node_id + " did not answer within " +
                                                                          std::to_string(timeout_ms / 1000) + " s"));
    }
    return unreachable(res.error);
  }
  if (res.body.size() > options_.max_answer_bytes) return unreachable("answer larger than max_answer_bytes");
  api::HttpResponse r;
  r.status = res.status;
  r.headers = answer_headers(res.headers);
  r.body = std::move(res.body);
  answer(ex, std::move(r));
}

}  // namespace airlock::cluster
