#include "egress/gateway.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "egress/proxy_request.h"
#include "egress/relay.h"
#include "egress/response_filter.h"

namespace airlock::egress {
namespace {

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One request from the sandbox, from its first byte to its attempt record.
class Exchange {
 public:
  Exchange(const GatewayConfig& config, SSL_CTX* tls, int stop, UniqueFd client)
      : config_(config), tls_(tls), stop_(stop), client_(std::move(client)) {
    attempt_.unix_ms = unix_ms_now();
  }

  // Runs the exchange; returns the attempt, or nullopt when the client sent nothing.
  std::optional<Attempt> run() {
    auto started = std::chrono::steady_clock::now();
    bool any = handle();
    attempt_.duration_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
    if (!any) return std::nullopt;
    return attempt_;
  }

 private:
  // false when the client closed before sending a request.
  bool handle() {
    auto head = read_head();
    if (!head) return sent_anything_;
    auto request = parse_proxy_request(*head);
    if (!request) {
      refuse(400, request.error().what);
      return true;
    }
    const ProxyRequest& req = *request;
    attempt_.method = req.method;
    attempt_.host = req.host;
    attempt_.port = req.port;
    attempt_.path = req.path().substr(0, 256);
    Decision d = decide(config_.policy, {req.host, req.port, req.method, req.path()});
    if (!d.allowed) {
      refuse(403, d.reason);
      return true;
    }
    const Rule& rule = *d.rule;
    auto resolved = resolve_checked(config_.hosts, rule, req.host);
    if (!resolved) {
      refuse(502, resolved.error().what);
      return true;
    }
    if (resolved->addresses.empty()) {
      refuse(403, resolved->reason);
      return true;
    }
    UniqueFd upstream;
    std::string last_error;
    for (const auto& address : resolved->addresses) {
      auto fd = connect_tcp(address, req.port, stop_, config_.connect_timeout_ms);
      if (fd) {
        upstream = std::move(*fd);
        attempt_.address = address;
        break;
      }
      last_error = "connect to " + authority(address, req.port) + ": " + fd.error().message();
    }
    if (!upstream) {
      refuse(502, last_error);
      return true;
    }
    attempt_.allowed = true;
    attempt_.reason = d.reason;
    attempt_.secret = rule.secret;
    if (!continue_if_expected(req)) return true;
    if (req.connect()) tunnel(std::move(upstream));
    else if (rule.tls || !rule.secret.empty()) buffered(req, rule, std::move(upstream));
    else forward(req, std::move(upstream));
    return true;
  }

  // The head, with whatever followed it kept in rest_.
  std::optional<std::string> read_head() {
    std::string buf;
    char chunk[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.head_timeout_ms);
    for (;;) {
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      auto n = recv_some(client_.get(), chunk, sizeof(chunk), stop_, std::max(left, 1));
      if (!n || *n == 0) {
        if (buf.empty()) return std::nullopt;
        refuse(400, n ? "the request head is incomplete"
                      : n.error().err == ETIMEDOUT ? "the request head did not arrive in time"
                                                   : "the job ended before the request head was complete");
        return std::nullopt;
      }
      buf.append(chunk, *n);
      sent_anything_ = true;
      if (auto st = check_line_ends(buf); !st) {
        refuse(400, st.error().what);
        return std::nullopt;
      }
      if (size_t len = head_length(buf); len > 0) {
        rest_ = buf.substr(len);
        buf.resize(len);
        return buf;
      }
      if (buf.size() > kMaxHeadBytes) {
        refuse(400, "the request head is too large");
        return std::nullopt;
      }
    }
  }

  // The client waits for "100 Continue" before it sends the body; the
  // gateway answers that itself (the upstream never sees Expect).
  bool continue_if_expected(const ProxyRequest& req) {
    if (!req.expect_continue || req.version != "HTTP/1.1" || rest_.size() >= req.content_length)
      return true;
    static const std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
    if (!send_all(client_.get(), go_on, stop_, config_.idle_timeout_ms)) return false;
    attempt_.bytes_down += go_on.size();
    return true;
  }

  void refuse(int status, const std::string& reason) {
    attempt_.allowed = false;
    attempt_.status = status;
    attempt_.reason = reason;
    std::string answer = gateway_response(status, reason);
    if (send_all(client_.get(), answer, stop_, 1000)) attempt_.bytes_down += answer.size();
  }

  void tunnel(UniqueFd upstream) {
    static const std::string_view established = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (!send_all(client_.get(), established, stop_, config_.idle_timeout_ms)) return;
    if (!rest_.empty()) {
      if (!send_all(upstream.get(), rest_, stop_, config_.idle_timeout_ms)) return;
      attempt_.bytes_up += rest_.size();
    }
    RelayCounts counts;
    (void)relay(client_.get(), upstream.get(), stop_, {std::nullopt, config_.idle_timeout_ms}, counts);
    attempt_.bytes_up += counts.up;
    attempt_.bytes_down += counts.down;
  }

  // Plain HTTP without a credential: head, then exactly the body, then the
  // response, spliced.
  void forward(const ProxyRequest& req, UniqueFd upstream) {
    std::string head = upstream_head(req, std::nullopt);
    size_t first = std::min<uint64_t>(rest_.size(), req.content_length);
    head.append(rest_, 0, first);
    if (!send_all(upstream.get(), head, stop_, config_.idle_timeout_ms)) return;
    attempt_.bytes_up += head.size();
    RelayCounts counts;
    (void)relay(client_.get(), upstream.get(), stop_, {req.content_length - first, config_.idle_timeout_ms}, counts);
    attempt_.bytes_up += counts.up;
    attempt_.bytes_down += counts.down;
  }

  // A rule with a credential or TLS: the gateway writes the request itself
  // and copies the response through user space (TLS, and the scrubber that
  // keeps the credential out of what the code gets back).
  void buffered(const ProxyRequest& req, const Rule& rule, UniqueFd upstream) {
    std::optional<Credential> credential;
    if (!rule.secret.empty()) credential = config_.secrets.at(rule.secret);  // checked at start
    std::optional<TlsStream> tls;
    if (rule.tls) {
      auto made = TlsStream::connect(tls_, std::move(upstream), req.host, stop_, config_.connect_timeout_ms);
      if (!made) {
        attempt_.allowed = false;
        refuse(502, made.error().message());
        return;
      }
      tls.emplace(std::move(*made));
    }
    int timeout = config_.idle_timeout_ms;
    auto write_up = [&](std::string_view data) -> bool {
      bool ok = tls ? bool(tls->write_all(data, stop_, timeout)) : bool(send_all(upstream.get(), data, stop_, timeout));
      if (ok) attempt_.bytes_up += data.size();
      return ok;
    };
    std::string head = upstream_head(req, credential);
    uint64_t body_left = req.content_length;
    size_t first = std::min<uint64_t>(rest_.size(), body_left);
    body_left -= first;
    if (!write_up(head + rest_.substr(0, first))) return;
    std::vector<char> buf(256 << 10);
    while (body_left > 0) {
      auto n = recv_some(client_.get(), buf.data(), std::min<uint64_t>(buf.size(), body_left), stop_, timeout);
      if (!n || *n == 0) return;
      body_left -= *n;
      if (!write_up(std::string_view(buf.data(), *n))) return;
    }
    auto write_down = [&](std::string_view data) -> bool {
      if (data.empty()) return true;
      if (!send_all(client_.get(), data, stop_, timeout)) return false;
      attempt_.bytes_down += data.size();
      return true;
    };
    auto read_up = [&]() -> Result<size_t> {
      return tls ? tls->read_some(buf.data(), buf.size(), stop_, timeout)
                 : recv_some(upstream.get(), buf.data(), buf.size(), stop_, timeout);
    };
    if (!credential) {
      for (auto n = read_up(); n && *n > 0; n = read_up())
        if (!write_down(std::string_view(buf.data(), *n))) return;
    } else if (!scrubbed_response(req, *credential, read_up, buf, write_down)) {
      return;  // cut: the client sees the response end early
    }
    ::shutdown(client_.get(), SHUT_WR);
  }

  // What comes back from an upstream that got the credential: decoded and
  // scrubbed (response_filter.h). false when the response could not be
  // passed on whole.
  template <class Read, class Write>
  bool scrubbed_response(const ProxyRequest& req, const Credential& credential, Read& read_up,
                         const std::vector<char>& buf, Write& write_down) {
    ResponseFilter filter(credential.value, req.method == "HEAD", req.version == "HTTP/1.0");
    auto fault = [&](const std::string& reason) {
      if (!filter.started()) {
        refuse(502, reason);
      } else {
        attempt_.reason += "; the response was cut: " + reason;
      }
      return false;
    };
    while (!filter.done()) {
      auto n = read_up();
      if (!n) return fault("the upstream response: " + n.error().message());
      auto out = *n == 0 ? filter.finish() : filter.feed(std::string_view(buf.data(), *n));
      if (!out) return fault(out.error().what);
      if (!write_down(*out)) return false;
      if (*n == 0) break;
    }
    return true;
  }

  const GatewayConfig& config_;
  SSL_CTX* tls_;
  int stop_;
  UniqueFd client_;
  std::string rest_;
  Attempt attempt_;
  bool sent_anything_ = false;
};

}  // namespace

Gateway::Gateway(UniqueFd listener, UniqueFd stop, GatewayConfig config, TlsContext tls)
    : listener_(std::move(listener)), stop_(std::move(stop)), config_(std::move(config)), tls_(std::move(tls)) {}

Result<std::unique_ptr<Gateway>> Gateway::start(UniqueFd listener, GatewayConfig config) {
  bool any_tls = false;
  for (const auto& rule : config.policy.rules) {
    if (!rule.secret.empty() && !config.secrets.count(rule.secret))
      return fail("the network rule for " + rule.host + " names the secret '" + rule.secret +
                  "', which the secrets file does not hold");
    any_tls = any_tls || rule.tls;
  }
  TlsContext tls;
  if (any_tls) {
    auto made = make_tls_context(config.ca_file);
    if (!made) return std::unexpected(made.error());
    tls = std::move(*made);
  }
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop) return fail_errno("create the gateway's stop event");
  std::unique_ptr<Gateway> g(new Gateway(std::move(listener), std::move(stop), std::move(config), std::move(tls)));
  g->acceptor_ = std::thread([gw = g.get()] { gw->accept_loop(); });
  return g;
}

Gateway::~Gateway() { stop(); }

void Gateway::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof(one));
  if (acceptor_.joinable()) acceptor_.join();
  std::lock_guard lock(mu_);
  for (auto& c : connections_) c.thread.join();
  connections_.clear();
  listener_.reset();
}

void Gateway::reap_finished() {
  std::lock_guard lock(mu_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done.load()) {
      it->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void Gateway::accept_loop() {
  for (;;) {
    if (wait_ready(listener_.get(), POLLIN, stop_.get(), -1) != Ready::kYes) return;
    UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) {
      // EAGAIN or ECONNABORTED: nothing to do for this one. EMFILE and the
      // like: wait a little instead of spinning on a listener that stays readable.
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
        (void)wait_ready(-1, 0, stop_.get(), 50);
      continue;
    }
    reap_finished();
    std::lock_guard lock(mu_);
    if (connections_.size() >= config_.max_connections) {
      Attempt a;
      a.unix_ms = unix_ms_now();
      a.status = 503;
      a.reason = "too many connections to the gateway at once (at most " + std::to_string(config_.max_connections) + ")";
      std::string answer = gateway_response(503, a.reason);
      (void)!::send(client.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
      log_.add(std::move(a));
      continue;
    }
    Connection& c = connections_.emplace_back();
    c.thread = std::thread([this, &c, fd = client.release()] {
      serve(UniqueFd(fd));
      c.done.store(true);
    });
  }
}

void Gateway::serve(UniqueFd client) {
  Exchange exchange(config_, tls_.get(), stop_.get(), std::move(client));
  if (auto attempt = exchange.run()) log_.add(std::move(*attempt));
}

}  // namespace airlock::egress
