#include "cluster/forward_message.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "cluster/node_key.h"

namespace airlock::cluster {
namespace {

constexpr int kMaxWaitS = 300;  // service/job_request.h kMaxWaitSeconds

bool is_ip_literal_char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':';
}

}  // namespace

Result<NodeAddress> parse_node_address(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return fail(ErrorKind::kInvalid, "node address '" + text + "': HOST:PORT");
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  bool literal = !host.empty() && std::all_of(host.begin(), host.end(), is_ip_literal_char) &&
                 (host.find(':') != std::string::npos ||
                  std::all_of(host.begin(), host.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }));
  bool name = !host.empty() && host.size() <= 253 && host.front() != '-' && host.front() != '.' &&
              std::all_of(host.begin(), host.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
              });
  if (!literal && !name)
    return fail(ErrorKind::kInvalid, "node address '" + text + "': the host must be an IP address or a DNS name");
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535)
    return fail(ErrorKind::kInvalid, "node address '" + text + "': bad port");
  return NodeAddress{host, static_cast<uint16_t>(std::stoul(port)), literal};
}

std::map<std::string, std::string> forwarded_headers(const api::HttpRequest& request, const std::string& node_key,
                                                     const std::string& self_node_id) {
  static const std::pair<const char*, const char*> kPassed[] = {
      {"authorization", "Authorization"}, {"content-type", "Content-Type"}, {"idempotency-key", "Idempotency-Key"},
      {"last-event-id", "Last-Event-ID"}, {"accept", "Accept"}};
  std::map<std::string, std::string> out;
  for (const auto& [lower, name] : kPassed)
    if (auto it = request.headers.find(lower); it != request.headers.end()) out[name] = it->second;
  out[kNodeKeyHeader] = node_key;
  out["X-Airlock-Forwarded-By"] = self_node_id;
  std::string remote = request.remote.substr(0, request.remote.rfind(':'));
  if (!remote.empty()) out["X-Forwarded-For"] = remote;
  return out;
}

std::vector<std::pair<std::string, std::string>> answer_headers(const std::map<std::string, std::string>& headers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : headers) {
    if (name == "connection" || name == "keep-alive" || name == "transfer-encoding" || name == "content-length" ||
        name == "te" || name == "trailer" || name == "upgrade" || name.starts_with("proxy-") || name == "server" ||
        name == "date")
      continue;
    out.emplace_back(name, value);
  }
  return out;
}

int forward_timeout_ms(const api::HttpRequest& request, int base_ms) {
  int wait_s = 0;
  if (auto q = request.query.find("wait_s"); q != request.query.end()) {
    const std::string& v = q->second;
    if (!v.empty() && v.size() <= 3 && v.find_first_not_of("0123456789") == std::string::npos) wait_s = std::stoi(v);
  } else if (!request.body.empty() && request.body.size() <= (2u << 20) && request.body.front() == '{') {
    auto body = parse_json_or_discarded(request.body);
    if (body.is_object() && body.contains("wait_s") && body["wait_s"].is_number_integer())
      wait_s = static_cast<int>(std::clamp<int64_t>(body["wait_s"].get<int64_t>(), 0, kMaxWaitS));
  }
  return base_ms + std::min(wait_s, kMaxWaitS) * 1000;
}

}  // namespace airlock::cluster
