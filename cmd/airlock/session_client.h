// What the `airlock session` subcommands share: the connection to the
// service (server URL and API key) and one request with its errors printed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "http/client.h"
#include "cli/session_args.h"

namespace airlock::cli {

struct SessionConn {
  std::string url;  // as given, for messages
  std::unique_ptr<api::HttpClient> http;
  std::map<std::string, std::string> auth;  // the Authorization header
};

// From --server / $AIRLOCK_SERVER and --key-file / $AIRLOCK_API_KEY; prints
// why and returns nullopt when either is unusable.
std::optional<SessionConn> open_conn(const SessionArgs& a);

// One request. A transport failure or an HTTP error (any status not 2xx)
// is printed as one line and gives nullopt.
std::optional<api::Response> call(SessionConn& conn, const std::string& method, const std::string& target,
                                  const std::string& body = "",
                                  const std::map<std::string, std::string>& headers = {});

// Prints a JSON value on stdout (pretty, for --json).
void print_json(const nlohmann::json& j);

}  // namespace airlock::cli

// The streaming call (session_exec.cc).
int session_exec(const airlock::cli::SessionArgs& a, airlock::cli::SessionConn& conn);
