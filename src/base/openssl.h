// OpenSSL's TLS and public-key functions, loaded from libssl.so.3 (and the
// libcrypto.so.3 it needs) the first time a process asks for them.
//
// Why not linked: every airlock process is started fresh, most often for one
// job, and statically linked, libssl and the parts of libcrypto it needs put
// about 90 pages of pointer tables into the PIE, which the loader relocates
// (and so copies) at every start: 224 -> 120 page faults for a bare start,
// and a cold `airlock run` 0.6 ms faster (docs/performance.md, tenth session).
// Only the egress gateway's TLS and the store's signed checkpoints use these.
// SHA-256, base64 and constant-time comparison stay linked from libcrypto.a:
// they carry no such tables.
//
// Headers give the types: each pointer below has the type of the function
// it is named after, so a call through it is checked like a direct call.
#pragma once

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/result.h"

namespace airlock {

#define AIRLOCK_OPENSSL_FUNCTIONS(X)                                                               \
  X(ERR_get_error) X(ERR_error_string_n) X(ERR_clear_error)                                        \
  X(TLS_client_method) X(SSL_CTX_new) X(SSL_CTX_free) X(SSL_CTX_ctrl) X(SSL_CTX_set_verify)        \
  X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_load_verify_locations)                             \
  X(SSL_new) X(SSL_free) X(SSL_ctrl) X(SSL_get0_param) X(SSL_set1_host) X(SSL_set_fd)              \
  X(SSL_connect) X(SSL_shutdown) X(SSL_get_error) X(SSL_get_verify_result) X(SSL_write_ex)         \
  X(SSL_read_ex) X(X509_VERIFY_PARAM_set1_ip_asc) X(X509_verify_cert_error_string)                 \
  X(BIO_new) X(BIO_s_mem) X(BIO_new_mem_buf) X(BIO_free) X(BIO_ctrl)                               \
  X(EVP_PKEY_Q_keygen) X(EVP_PKEY_free) X(EVP_PKEY_get_id) X(EVP_PKEY_get_raw_public_key)          \
  X(PEM_write_bio_PrivateKey) X(PEM_write_bio_PUBKEY) X(PEM_read_bio_PrivateKey)                   \
  X(PEM_read_bio_PUBKEY) X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestSignInit)                \
  X(EVP_DigestSign) X(EVP_DigestVerifyInit) X(EVP_DigestVerify)

struct OpenSsl {
#define AIRLOCK_OPENSSL_POINTER(name) decltype(&::name) name = nullptr;
  AIRLOCK_OPENSSL_FUNCTIONS(AIRLOCK_OPENSSL_POINTER)
#undef AIRLOCK_OPENSSL_POINTER
};

// The functions, loaded on the first call (once per process, thread-safe).
// An error says which library or function was missing; later calls give the
// same error.
Result<const OpenSsl*> openssl();

// For the deleters of objects that only exist once openssl() succeeded:
// crashes loudly if it did not.
const OpenSsl& openssl_loaded();

// The library set: `library` and the dlsym of each name. For tests (a
// missing library must be a clear error, not a crash).
Result<OpenSsl> load_openssl(const char* library);

}  // namespace airlock
