// Incremental SHA-256 (OpenSSL underneath), hex output.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace airlock {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view data);
  // Lower-case hex digest; the object must not be updated afterwards.
  std::string hex_digest();

  static std::string of(std::string_view data);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace airlock
