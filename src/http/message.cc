// The plain parts of the HTTP API: request header lookup, JSON responses.
#include "http/server.h"

namespace airlock::api {

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

HttpResponse HttpResponse::json(int status, const nlohmann::json& body) {
  HttpResponse out;
  out.status = status;
  out.headers.emplace_back("Content-Type", "application/json");
  // Strings may carry hostile bytes (names, messages): never throw on bad UTF-8.
  out.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.body += '\n';
  return out;
}

HttpResponse HttpResponse::error(int status, const std::string& code,
                                 const std::string& message) {
  return json(status, {{"error", {{"code", code}, {"message", message}}}});
}

}  // namespace airlock::api
