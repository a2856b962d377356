#include "mcp/in_flight.h"

namespace airlock::mcp {

std::shared_ptr<std::atomic<bool>> InFlight::add(const std::string& key) {
  std::lock_guard lock(mu_);
  if (calls_.size() >= max_ || calls_.count(key)) return nullptr;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  calls_.emplace(key, flag);
  return flag;
}

void InFlight::remove(const std::string& key) {
  std::lock_guard lock(mu_);
  calls_.erase(key);
}

bool InFlight::cancel(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = calls_.find(key);
  if (it == calls_.end()) return false;
  it->second->store(true);
  return true;
}

void InFlight::cancel_all() {
  std::lock_guard lock(mu_);
  for (auto& [_, flag] : calls_) flag->store(true);
}

size_t InFlight::size() const {
  std::lock_guard lock(mu_);
  return calls_.size();
}

std::string in_flight_key(const std::string& client, const nlohmann::json& request_id) {
  // A string id "1" and a number id 1 are different requests: dump keeps the quotes.
  return client + "\n" + request_id.dump();
}

}  // namespace airlock::mcp
