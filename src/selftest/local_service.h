// `airlock selftest` without --url: an `airlock serve` of its own, on the
// operator's configuration but with a temporary data and state directory
// (0711) and a loopback port, two tenants with a key each, and a canary (a
// random secret) in its environment and data directory for the credentials
// probe to look for. Stopped (SIGTERM to its pid, then SIGKILL) and removed
// when the object goes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"

namespace airlock::selftest {

class LocalService {
 public:
  // `config_path`: the operator's TOML ("" none); its data_dir, state_dir and
  // listen are replaced, work_dir set inside the temporary directory.
  static Result<std::unique_ptr<LocalService>> start(const std::string& airlock_binary,
                                                     const std::string& config_path,
                                                     const std::string& canary_prefix);
  ~LocalService();
  LocalService(const LocalService&) = delete;
  LocalService& operator=(const LocalService&) = delete;

  uint16_t port() const { return port_; }
  const std::string& key() const { return key_; }
  const std::string& other_key() const { return other_key_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& state_dir() const { return state_dir_; }
  const std::string& log_path() const { return log_; }
  // Stops the serve and removes the directory; what failed, "" when all went.
  std::string stop();

 private:
  LocalService() = default;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string dir_, data_dir_, state_dir_, log_, key_, other_key_;
  bool stopped_ = false;
};

}  // namespace airlock::selftest
