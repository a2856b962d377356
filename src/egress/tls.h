// TLS to an upstream for rules that say `tls`: the code talks plain HTTP to
// the gateway, and the gateway verifies the upstream's certificate (system
// store, or the operator's CA file) and its name before sending anything.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/openssl.h"
#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::egress {

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { openssl_loaded().SSL_CTX_free(ctx); }
};
using TlsContext = std::unique_ptr<SSL_CTX, SslCtxFree>;

// Peer verification on, TLS 1.2 or later. `ca_file` "": the system's store.
// Loads OpenSSL (base/openssl.h) on the first call.
Result<TlsContext> make_tls_context(const std::string& ca_file);

// One TLS connection over a non-blocking socket; deadlines and the stop fd as
// in relay.h.
class TlsStream {
 public:
  static Result<TlsStream> connect(SSL_CTX* ctx, UniqueFd fd, const std::string& host, int stop_fd, int timeout_ms);
  TlsStream(TlsStream&&) = default;
  ~TlsStream();

  Status write_all(std::string_view data, int stop_fd, int timeout_ms);
  Result<size_t> read_some(char* buf, size_t size, int stop_fd, int timeout_ms);  // 0 at EOF

 private:
  struct SslFree {
    void operator()(SSL* ssl) const { openssl_loaded().SSL_free(ssl); }
  };
  TlsStream(std::unique_ptr<SSL, SslFree> ssl, UniqueFd fd) : ssl_(std::move(ssl)), fd_(std::move(fd)) {}
  // Waits for what OpenSSL asked for after a call returned `rc`.
  Status wait_for(int rc, const char* what, int stop_fd, int timeout_ms);
  std::unique_ptr<SSL, SslFree> ssl_;
  UniqueFd fd_;
};

}  // namespace airlock::egress
