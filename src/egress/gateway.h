// The egress gateway of one job: an HTTP proxy on a listening socket that
// lives in the job's network namespace (its only way out), run by threads of
// the host. For each request: parse (proxy_request.h), decide (policy.h),
// resolve and check the addresses (resolver.h), connect, relay (relay.h, or
// tls.h for rules that say tls), and log the attempt (attempt_log.h).
// Denials are answered at once with a 403 and the reason.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "egress/attempt_log.h"
#include "egress/policy.h"
#include "egress/resolver.h"
#include "egress/secrets.h"
#include "egress/tls.h"

namespace airlock::egress {

struct GatewayConfig {
  Policy policy;
  HostOverrides hosts;
  Secrets secrets;       // at least those the policy names
  std::string ca_file;   // for tls rules; "": the system's store
  int head_timeout_ms = 10'000;
  int connect_timeout_ms = 5'000;
  int idle_timeout_ms = 60'000;
  size_t max_connections = 64;
};

class Gateway {
 public:
  // Serves connections accepted on `listener` until stop(). Fails when a
  // rule names a secret that `config.secrets` does not have.
  static Result<std::unique_ptr<Gateway>> start(UniqueFd listener, GatewayConfig config);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Ends every connection and joins every thread. Idempotent.
  void stop();
  // Every attempt so far (call after stop() for the complete list).
  std::vector<Attempt> take_attempts() { return log_.take(); }
  uint64_t dropped_attempts() const { return log_.dropped(); }

 private:
  struct Connection {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  Gateway(UniqueFd listener, UniqueFd stop, GatewayConfig config, TlsContext tls);
  void accept_loop();
  void reap_finished();
  void serve(UniqueFd client);

  UniqueFd listener_, stop_;
  GatewayConfig config_;
  TlsContext tls_;
  AttemptLog log_;
  std::thread acceptor_;
  std::mutex mu_;
  std::list<Connection> connections_;
  bool stopped_ = false;
};

}  // namespace airlock::egress
