#include "cluster/forward.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "cluster/forward_message.h"
#include "http/client.h"

namespace airlock::cluster {
namespace {

using json = nlohmann::json;

// One read from the node, and the most one write to the client queues.
constexpr size_t kPieceBytes = 64 << 10;

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
    log_failure(req, to, why);
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
  if (kind == ForwardKind::kEvents) return run_events(ex, to, address->host, address->port, headers);

  // The upload: from the client's connection as it arrives (a streamed
  // route), from its spool file, or the body in memory; each piece is read
  // only when the node took the one before.
  api::BodySource source;
  UniqueFd spooled;
  bool client_failed = false;
  if (req.body_streamed) {
    if (auto length = req.headers.find("content-length"); length != req.headers.end())
      headers["Content-Length"] = length->second;  // else chunked, as the client sent it
    source = [&](char* buf, size_t cap) -> Result<size_t> {
      auto n = ex->read_body(buf, cap);
      if (!n) client_failed = true;
      return n;
    };
  } else if (!req.body_file.empty()) {
    spooled = UniqueFd(::open(req.body_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!spooled) return answer(ex, api::HttpResponse::error(500, "internal", "open the spooled body"));
    headers["Content-Length"] = std::to_string(req.body_bytes);
    source = [&](char* buf, size_t cap) -> Result<size_t> {
      while (true) {
        ssize_t n = ::read(spooled.get(), buf, cap);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_errno("read the spooled body");
        return static_cast<size_t>(n);
      }
    };
  }
  const bool from_memory = !source;
  int timeout_ms = forward_timeout_ms(req, options_.base_timeout_ms);
  auto late = [&] {
    if (options_.log)
      options_.log({{"event", "forward_timeout"}, {"node", to.node_id}, {"address", to.address},
                    {"method", req.method}, {"path", req.path}, {"timeout_ms", timeout_ms}});
    answer(ex, api::HttpResponse::error(504, "node_timeout", "node " + to.node_id + " did not answer within " +
                                                                 std::to_string(timeout_ms / 1000) + " s"));
  };
  api::HttpClient client(address->host, address->port, timeout_ms);
  api::ResponseReader res = client.open(req.method, req.target, headers, from_memory ? req.body : "", source);
  if (res.status() == 0) {
    // The client left mid-upload, or sent a body the route refuses (the server answered it).
    if (client_failed) return;
    if (res.timed_out()) return late();
    return unreachable(res.error());
  }

  api::HttpResponse head;
  head.status = res.status();
  head.headers = answer_headers(res.headers());
  const size_t buffer_bytes = std::max<size_t>(options_.buffer_bytes, 4096);
  std::vector<char> piece(std::min<size_t>(kPieceBytes, buffer_bytes / 2));
  auto length = res.content_length();
  if (res.done() || (length && *length <= buffer_bytes)) {  // small: passed on whole
    while (!res.done()) {
      auto n = res.read_some(piece.data(), piece.size(), timeout_ms);
      if (!n) return res.timed_out() ? late() : unreachable(n.error().message());
      head.body.append(piece.data(), *n);
    }
    return answer(ex, std::move(head));
  }
  // Large or of unknown length: passed on as it comes, read from the node only
  // as fast as the client takes it, never more than buffer_bytes held here.
  if (options_.answered) options_.answered(head.status);
  ex->start_body(std::move(head), length);
  auto last_bytes = std::chrono::steady_clock::now();
  while (true) {
    if (!ex->wait_writable(buffer_bytes - piece.size())) return res.close();  // the client left
    // In slices of a second, so that a client that leaves (or the server
    // stopping) ends this thread at once even while the node is silent.
    auto n = res.read_some(piece.data(), piece.size(), 1000);
    auto now = std::chrono::steady_clock::now();
    if (!n && res.timed_out() && now - last_bytes < std::chrono::milliseconds(timeout_ms)) {
      if (ex->closed()) return res.close();
      continue;
    }
    if (n) last_bytes = now;
    if (!n) {
      // The status is out: the client sees a cut answer (short of its length, or unended chunks).
      log_failure(req, to, "the answer broke off: " + n.error().message());
      return ex->end_body(false);
    }
    if (*n == 0) return ex->end_body(true);
    ex->write_body(std::string_view(piece.data(), *n));
  }
}

void Forwarder::run_events(const std::shared_ptr<api::Exchange>& ex, const ForwardTarget& to, const std::string& host,
                           uint16_t port, const std::map<std::string, std::string>& headers) {
  const api::HttpRequest& req = ex->request();
  api::HttpClient client(host, port, options_.connect_timeout_ms);
  api::EventStream stream = client.open_events(req.target, headers);
  if (stream.status() == 0) {
    log_failure(req, to, stream.error());
    return answer(ex, api::HttpResponse::error(502, "node_unreachable", "node " + to.node_id + " is unreachable"));
  }
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
  // Events are passed on as they arrive; while the client has buffer_bytes
  // unread, nothing more is read from the node (it keeps what comes meanwhile,
  // and ends a stream that falls too far behind; the client resumes).
  auto resumed = std::chrono::steady_clock::now();
  while (!ex->closed()) {
    auto before = std::chrono::steady_clock::now();
    if (!ex->wait_writable(options_.buffer_bytes)) break;
    auto now = std::chrono::steady_clock::now();
    if (now - before > std::chrono::milliseconds(100)) resumed = now;  // the client's pace, not the node's silence
    if (auto e = stream.next(1000)) {
      ex->send_event(e->id, e->event, e->data);
      continue;
    }
    if (stream.ended()) break;
    auto silent = std::chrono::steady_clock::now() - std::max(stream.last_bytes_at(), resumed);
    if (silent > std::chrono::milliseconds(options_.event_silence_ms)) break;  // a dead link
  }
  // Ended by the worker (or lost): the client resumes with Last-Event-ID.
  stream.close();
  ex->end_events();
}

void Forwarder::log_failure(const api::HttpRequest& req, const ForwardTarget& to, const std::string& why) {
  if (options_.log)
    options_.log({{"event", "forward_failed"}, {"node", to.node_id}, {"address", to.address},
                  {"method", req.method}, {"path", req.path}, {"error", why}});
}

}  // namespace airlock::cluster
