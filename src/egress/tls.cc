#include "egress/tls.h"

#include <arpa/inet.h>
#include <poll.h>

#include "egress/relay.h"

namespace airlock::egress {
namespace {

std::string ssl_error(const char* what) {
  const OpenSsl& ssl = openssl_loaded();
  unsigned long e = ssl.ERR_get_error();
  char buf[256] = {};
  if (e) ssl.ERR_error_string_n(e, buf, sizeof(buf));
  ssl.ERR_clear_error();
  return std::string(what) + (e ? std::string(": ") + buf : "");
}

bool is_ip(const std::string& host) {
  in6_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1 || ::inet_pton(AF_INET6, host.c_str(), &a) == 1;
}

}  // namespace

Result<TlsContext> make_tls_context(const std::string& ca_file) {
  auto loaded = openssl();
  if (!loaded) return fail("TLS to upstreams: " + loaded.error().message());
  const OpenSsl& ssl = **loaded;
  TlsContext ctx(ssl.SSL_CTX_new(ssl.TLS_client_method()));
  if (!ctx) return fail(ssl_error("create a TLS context"));
  // SSL_CTX_set_min_proto_version(), a macro over SSL_CTX_ctrl().
  if (ssl.SSL_CTX_ctrl(ctx.get(), SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr) != 1)
    return fail(ssl_error("require TLS 1.2 or later"));
  ssl.SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  int ok = ca_file.empty() ? ssl.SSL_CTX_set_default_verify_paths(ctx.get())
                           : ssl.SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr);
  if (ok != 1) return fail(ssl_error(ca_file.empty() ? "load the system's CA certificates" : "load the egress CA file"));
  return ctx;
}

TlsStream::~TlsStream() {
  if (ssl_) openssl_loaded().SSL_shutdown(ssl_.get());  // one try, non-blocking: a courtesy
}

Status TlsStream::wait_for(int rc, const char* what, int stop_fd, int timeout_ms) {
  const OpenSsl& ssl = openssl_loaded();
  int err = ssl.SSL_get_error(ssl_.get(), rc);
  short events = 0;
  if (err == SSL_ERROR_WANT_READ) events = POLLIN;
  else if (err == SSL_ERROR_WANT_WRITE) events = POLLOUT;
  else if (err == SSL_ERROR_SSL) {
    long verify = ssl.SSL_get_verify_result(ssl_.get());
    if (verify != X509_V_OK)
      return fail(std::string(what) + ": certificate verification failed: " +
                  ssl.X509_verify_cert_error_string(verify));
    return fail(ssl_error(what));
  } else {
    ssl.ERR_clear_error();
    return fail(std::string(what) + ": the connection failed");
  }
  switch (wait_ready(fd_.get(), events, stop_fd, timeout_ms)) {
    case Ready::kYes: return {};
    case Ready::kStopped: return fail("the job ended");
    case Ready::kTimedOut: return fail_with(what, ETIMEDOUT);
  }
  return {};
}

Result<TlsStream> TlsStream::connect(SSL_CTX* ctx, UniqueFd fd, const std::string& host, int stop_fd,
                                     int timeout_ms) {
  const OpenSsl& fn = openssl_loaded();  // `ctx` was made through it
  std::unique_ptr<SSL, SslFree> ssl(fn.SSL_new(ctx));
  if (!ssl) return fail(ssl_error("create a TLS connection"));
  if (is_ip(host)) {
    if (fn.X509_VERIFY_PARAM_set1_ip_asc(fn.SSL_get0_param(ssl.get()), host.c_str()) != 1)
      return fail(ssl_error("set the TLS peer address"));
  } else {
    // SSL_set_tlsext_host_name(), a macro over SSL_ctrl(): the name sent (SNI).
    fn.SSL_ctrl(ssl.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                const_cast<char*>(host.c_str()));
    if (fn.SSL_set1_host(ssl.get(), host.c_str()) != 1)
      return fail(ssl_error("set the TLS peer name"));
  }
  if (fn.SSL_set_fd(ssl.get(), fd.get()) != 1)
    return fail(ssl_error("give the TLS connection its socket"));
  TlsStream stream(std::move(ssl), std::move(fd));
  for (;;) {
    int rc = fn.SSL_connect(stream.ssl_.get());
    if (rc == 1) break;
    if (auto st = stream.wait_for(rc, "TLS handshake", stop_fd, timeout_ms); !st) {
      stream.ssl_.reset();  // no shutdown on a failed handshake
      return std::unexpected(st.error());
    }
  }
  return stream;
}

Status TlsStream::write_all(std::string_view data, int stop_fd, int timeout_ms) {
  while (!data.empty()) {
    size_t written = 0;
    int rc = openssl_loaded().SSL_write_ex(ssl_.get(), data.data(), data.size(), &written);
    if (rc == 1) {
      data.remove_prefix(written);
      continue;
    }
    if (auto st = wait_for(rc, "TLS write", stop_fd, timeout_ms); !st) return st;
  }
  return {};
}

Result<size_t> TlsStream::read_some(char* buf, size_t size, int stop_fd, int timeout_ms) {
  const OpenSsl& ssl = openssl_loaded();
  for (;;) {
    size_t got = 0;
    int rc = ssl.SSL_read_ex(ssl_.get(), buf, size, &got);
    if (rc == 1) return got;
    int err = ssl.SSL_get_error(ssl_.get(), rc);
    if (err == SSL_ERROR_ZERO_RETURN) return 0;
    if (err == SSL_ERROR_SYSCALL) {  // EOF without close_notify: the end, for Connection: close
      ssl.ERR_clear_error();
      return 0;
    }
    if (auto st = wait_for(rc, "TLS read", stop_fd, timeout_ms); !st) return std::unexpected(st.error());
  }
}

}  // namespace airlock::egress
