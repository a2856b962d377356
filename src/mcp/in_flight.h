// The tool calls under way, by a key that names the client and the
// request id, so that notifications/cancelled finds the call it means and
// no other client's. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace airlock::mcp {

class InFlight {
 public:
  explicit InFlight(size_t max_calls) : max_(max_calls) {}
  // The call's cancel flag; null when the key is already in flight or
  // max_calls are.
  std::shared_ptr<std::atomic<bool>> add(const std::string& key);
  void remove(const std::string& key);
  bool cancel(const std::string& key);  // false: no such call (ended, or never was)
  void cancel_all();
  size_t size() const;
  size_t max_calls() const { return max_; }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> calls_;
  size_t max_;
};

// `client` names the caller (stdio: ""; HTTP: the key id and Mcp-Session-Id).
std::string in_flight_key(const std::string& client, const nlohmann::json& request_id);

}  // namespace airlock::mcp
