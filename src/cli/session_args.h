// `airlock session ...`: the command line read into a request, the bodies
// sent to the service, and the exit status of a call. Pure: no files, no
// network, no environment (the caller passes what it read).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace airlock::cli {

// Exit statuses of `airlock session` (listed in its --help).
inline constexpr int kExitOk = 0;
inline constexpr int kExitCallError = 1;    // the Python call raised
inline constexpr int kExitFailed = 2;       // the request failed, or the call ended otherwise
inline constexpr int kExitInputRequested = 3;  // the call asked the application for data
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitUsage = 125;
inline constexpr int kExitInterrupted = 130;

struct SessionArgs {
  std::string verb;                     // create, list, get, exec, files, ...
  std::string files_verb;               // for `files`: upload, ls, download, rm
  std::vector<std::string> positional;  // after the verb(s)
  std::optional<std::string> server, key_file;
  bool json = false;
  // create
  std::optional<int> idle_timeout_s, max_lifetime_s, memory_mb;
  std::optional<double> timeout_s;  // also exec's
  std::vector<std::string> inputs;
  std::optional<std::string> snapshot;
  std::optional<std::string> image;  // NAME, NAME@sha256:HEX or host; unset: the service's default
  // exec
  bool shell = false;
  std::optional<std::string> code_file;  // -f FILE
  std::optional<std::string> figures_dir;
  std::vector<std::string> answers;  // --answer ID: data requests this call answers
};

// Options may come anywhere; "--opt VALUE" or "--opt=VALUE"; after "--"
// everything is positional. Checks that each option belongs to the verb and
// the number of positional arguments.
Result<SessionArgs> parse_session_args(const std::vector<std::string>& args);

// Where the code of `exec` comes from.
enum class CodeSource { kArgument, kFile, kStdin };
CodeSource code_source(const SessionArgs& a);
// The code given on the command line (the words after the session id).
std::string code_argument(const SessionArgs& a);

// The server: --server, else $AIRLOCK_SERVER (`env_server`), else the default.
inline constexpr const char* kDefaultServer = "http://127.0.0.1:8470";
std::string server_url(const SessionArgs& a, const char* env_server);

// The bodies of POST /v1/sessions and POST /v1/sessions/{id}/execs.
nlohmann::json create_body(const SessionArgs& a);
nlohmann::json exec_body(const SessionArgs& a, const std::string& code);

// The exit status for a call's final view ("result": {"status", "exit_code"}).
int exec_exit_status(const nlohmann::json& view, bool shell);

// The part of an output chunk (`text` at byte `offset`) not yet printed when
// `printed` bytes were; empty if all of it was. A resumed stream that
// repeats output does not print it twice.
std::string unseen_part(uint64_t printed, uint64_t offset, const std::string& text);

// One line for a failed request: the status, the service's error code and
// message ({"error": {"code", "message"}}), or the body's start.
std::string describe_http_error(int status, const std::string& body);

// Standard base64 (figures come as base64 PNG); nullopt if malformed.
std::optional<std::string> decode_base64(const std::string& text);

}  // namespace airlock::cli
