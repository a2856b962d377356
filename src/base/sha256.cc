#include "base/sha256.h"

#include <openssl/evp.h>

#include "base/check.h"

namespace airlock {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  AIRLOCK_CHECK(impl_->ctx != nullptr);
  AIRLOCK_CHECK(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(std::string_view data) {
  AIRLOCK_CHECK(EVP_DigestUpdate(impl_->ctx, data.data(), data.size()) == 1);
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  AIRLOCK_CHECK(EVP_DigestFinal_ex(impl_->ctx, md, &len) == 1);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

std::string Sha256::of(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

}  // namespace airlock
