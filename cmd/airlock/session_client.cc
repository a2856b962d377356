#include "cmd/airlock/session_client.h"

#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "http/url.h"
#include "cmd/airlock/terminal_out.h"
#include "sys/file_io.h"

namespace airlock::cli {

std::optional<SessionConn> open_conn(const SessionArgs& a) {
  SessionConn conn;
  conn.url = server_url(a, std::getenv("AIRLOCK_SERVER"));
  auto address = api::parse_server_url(conn.url);
  if (!address) {
    std::fprintf(stderr, "airlock: %s\n", address.error().message().c_str());
    return std::nullopt;
  }
  std::string key;
  if (a.key_file) {
    auto text = sys::read_file(*a.key_file, 4096);
    if (!text) {
      std::fprintf(stderr, "airlock: cannot read the key file: %s\n", text.error().message().c_str());
      return std::nullopt;
    }
    key = *text;
  } else if (const char* env = std::getenv("AIRLOCK_API_KEY")) {
    key = env;
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty()) {
    std::fprintf(stderr,
                 "airlock: no API key: set AIRLOCK_API_KEY or pass --key-file FILE "
                 "(airlock keys create makes one)\n");
    return std::nullopt;
  }
  if (key.find_first_of("\r\n") != std::string::npos) {
    std::fprintf(stderr, "airlock: the API key has more than one line\n");
    return std::nullopt;
  }
  conn.http = std::make_unique<api::HttpClient>(address->host, address->port, 120'000);
  conn.auth = {{"Authorization", "Bearer " + key}};
  return conn;
}

std::optional<api::Response> call(SessionConn& conn, const std::string& method, const std::string& target,
                                  const std::string& body, const std::map<std::string, std::string>& headers) {
  auto all = conn.auth;
  all.insert(headers.begin(), headers.end());
  api::Response r = conn.http->request(method, target, body, all);
  if (r.status == 0) {
    std::fprintf(stderr, "airlock: cannot reach the airlock service at %s (%s); is `airlock serve` running there?\n",
                 conn.url.c_str(), r.error.c_str());
    return std::nullopt;
  }
  if (r.status < 200 || r.status > 299) {
    std::fprintf(stderr, "airlock: %s %s: %s\n", method.c_str(), target.substr(0, target.find('?')).c_str(),
                 describe_http_error(r.status, r.body).c_str());
    return std::nullopt;
  }
  return r;
}

void print_json(const nlohmann::json& j) {
  std::string text = json_shown(STDOUT_FILENO, j);
  std::printf("%s\n", text.c_str());
}

}  // namespace airlock::cli
