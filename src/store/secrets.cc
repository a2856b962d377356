#include "store/secrets.h"

#include <openssl/crypto.h>
#include <sys/random.h>

#include <cerrno>

#include "base/sha256.h"

namespace airlock::store {

namespace {

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int base64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

Result<std::string> random_bytes(size_t n) {
  std::string out(n, '\0');
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::getrandom(out.data() + done, n - done, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail_errno("getrandom");
    }
    done += static_cast<size_t>(got);
  }
  return out;
}

Result<std::string> random_hex(size_t n) {
  auto bytes = random_bytes(n);
  if (!bytes) return bytes;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * n);
  for (unsigned char b : *bytes) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

Result<std::string> new_key_secret() {
  auto bytes = random_bytes(32);
  if (!bytes) return bytes;
  return "alk_" + base64url_encode(*bytes);
}

std::string key_secret_hash(std::string_view secret) { return Sha256::of(secret); }

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64Url[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kBase64Url[(acc << (6 - bits)) & 63]);
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = base64url_value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  // Leftover bits must be zero, so every byte string has exactly one encoding.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace airlock::store
