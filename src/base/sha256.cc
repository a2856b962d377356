// OpenSSL's one-shot SHA-256 functions, not EVP: in OpenSSL 3 the first EVP
// digest initialises the provider machinery, about 0.9 ms per process, and
// every airlock run is a new process. SHA256_* are deprecated in 3.0 but kept
// for the 3.x series and use the same assembly (SHA-NI where available).
#define OPENSSL_SUPPRESS_DEPRECATED
#include "base/sha256.h"

#include <openssl/sha.h>

#include "base/check.h"

namespace airlock {

struct Sha256::Impl {
  SHA256_CTX ctx;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) { AIRLOCK_CHECK(SHA256_Init(&impl_->ctx) == 1); }

Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) {
  AIRLOCK_CHECK(SHA256_Update(&impl_->ctx, data.data(), data.size()) == 1);
}

std::string Sha256::hex_digest() {
  unsigned char md[SHA256_DIGEST_LENGTH];
  AIRLOCK_CHECK(SHA256_Final(md, &impl_->ctx) == 1);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : md) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string Sha256::of(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

}  // namespace airlock
