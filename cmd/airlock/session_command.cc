// airlock session ...: the command-line client of the sessions of a running
// `airlock serve` (long-lived sandboxes with a Python kernel and a shell),
// over its HTTP API. The streaming call is in session_exec.cc.
#include <cstdio>
#include <string>
#include <vector>

#include "http/url.h"
#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/terminal_text.h"
#include "cmd/airlock/session_client.h"
#include "sys/file_io.h"

using namespace airlock;
using namespace airlock::cli;
using json = nlohmann::json;

namespace {

const char* const kSessionUsage =
    "usage: airlock session COMMAND [ARGS] [--server URL] [--key-file FILE] [--json]\n"
    "Sessions of a running `airlock serve`: a sandbox that lives across calls, with a Python\n"
    "kernel (state kept between calls), a shell and a private /workspace.\n"
    "\n"
    "  create [--idle-timeout S] [--max-lifetime S] [--memory MB] [--timeout S]\n"
    "         [--input FILE_ID ...] [--snapshot DIGEST] [--image IMAGE]\n"
    "                                 open a session; prints its id (--timeout: each call's default)\n"
    "  list                           your sessions, open and closed\n"
    "  get ID                         a session's state, clocks and calls\n"
    "  exec ID [--shell] [--timeout S] [--figures DIR] (CODE... | -f FILE | -)\n"
    "                                 run Python (or a shell command) in the session; output is\n"
    "                                 printed live, then the value or the error; figures are saved\n"
    "                                 as DIR/<exec id>-<n>.png. '-' reads the code from stdin; put\n"
    "                                 code that starts with '-' after '--'. Ctrl-C interrupts the\n"
    "                                 call; a second Ctrl-C leaves it running and exits.\n"
    "         [--answer REQUEST_ID ...]  the data requests (r1, ...) this call answers: upload\n"
    "                                 what they asked for first\n"
    "  refuse ID REQUEST_ID REASON... refuse a data request of the session, with a reason\n"
    "  interrupt ID                   interrupt the running call\n"
    "  restart ID                     restart the kernel (variables go, files stay)\n"
    "  files upload ID LOCAL_FILE [REMOTE_PATH]   into /workspace (default: the file's name)\n"
    "  files ls ID [PATH]             list a directory of /workspace\n"
    "  files download ID REMOTE_PATH [LOCAL_FILE|-]   checked against the sha256 the service sent\n"
    "  files rm ID REMOTE_PATH        remove a file or directory\n"
    "  snapshot ID                    snapshot /workspace; prints the digest (use: create --snapshot)\n"
    "  snapshots                      your snapshots\n"
    "  snapshot-rm DIGEST             delete a snapshot\n"
    "  close ID                       close the session; prints why and how many calls it had\n"
    "\n"
    "Connection: --server URL, else $AIRLOCK_SERVER, else http://127.0.0.1:8470. Plain HTTP to a\n"
    "loopback address only (127.0.0.1, [::1], localhost): the key would otherwise travel in clear.\n"
    "The API key comes from $AIRLOCK_API_KEY or --key-file FILE (never from the command line,\n"
    "where other users could read it in ps). --json prints the service's JSON instead of a summary.\n"
    "\n"
    "Exit status: 0 done; 1 the Python call raised (shell: the command's own exit status);\n"
    "124 the call timed out; 130 interrupted (or left running with a second Ctrl-C);\n"
    "3 the call asked the application for data (each request is printed: id, name, why);\n"
    "2 the request failed (no key, service unreachable, HTTP error such as 401, 404, 409 for a\n"
    "closed session, 429) or the call ended otherwise (its status is printed); 125 bad arguments.\n";

int usage_error(const std::string& what) {
  std::fprintf(stderr, "airlock: %s\n(see airlock session --help)\n", what.c_str());
  return kExitUsage;
}

std::string session_path(const std::string& id) { return "/v1/sessions/" + api::percent_encode(id); }

std::string base_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p.substr(p.rfind('/') + 1);
}

// A request whose answer is JSON: nullopt (printed) on any failure.
std::optional<json> call_json(SessionConn& conn, const std::string& method, const std::string& target,
                              const std::string& body = "") {
  auto r = call(conn, method, target, body, body.empty() ? std::map<std::string, std::string>{}
                                                          : std::map<std::string, std::string>{{"Content-Type", "application/json"}});
  if (!r) return std::nullopt;
  json j = parse_json_or_discarded(r->body, kMaxStoredJsonDepth);
  if (j.is_discarded()) {
    std::fprintf(stderr, "airlock: the service answered %s %s with something that is not JSON\n", method.c_str(),
                 target.c_str());
    return std::nullopt;
  }
  return j;
}

std::string text(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  const json& v = j[key];
  // Names and reasons come from the session: one inert line each.
  return quoted_text(v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump());
}

int create(const SessionArgs& a, SessionConn& conn) {
  auto view = call_json(conn, "POST", "/v1/sessions", create_body(a).dump());
  if (!view) return kExitFailed;
  if (a.json)
    print_json(*view);
  else
    std::printf("%s\n", text(*view, "id").c_str());
  return kExitOk;
}

int list(const SessionArgs& a, SessionConn& conn) {
  auto got = call_json(conn, "GET", "/v1/sessions");
  if (!got) return kExitFailed;
  if (a.json) return print_json(*got), kExitOk;
  std::printf("%-20s  %-8s  %-24s  %5s  %s\n", "SESSION", "STATE", "CREATED", "CALLS", "CLOSED");
  for (const auto& s : got->value("sessions", json::array())) {
    std::string calls = s.contains("calls") && s["calls"].is_array() ? std::to_string(s["calls"].size()) : "-";
    std::string closed = text(s, "close_reason");
    if (!closed.empty()) closed = text(s, "closed_at") + " (" + closed + ")";
    std::printf("%-20s  %-8s  %-24s  %5s  %s\n", text(s, "id").c_str(), text(s, "state").c_str(),
                text(s, "created_at").c_str(), calls.c_str(), closed.c_str());
  }
  return kExitOk;
}

void print_summary(const json& s) {
  std::printf("session   %s\nstate     %s\ncreated   %s\n", text(s, "id").c_str(), text(s, "state").c_str(),
              text(s, "created_at").c_str());
  if (!text(s, "close_reason").empty())
    std::printf("closed    %s (%s)\n", text(s, "closed_at").c_str(), text(s, "close_reason").c_str());
  if (s.contains("idle_left_s")) std::printf("idle      closes after %s s more idle\n", text(s, "idle_left_s").c_str());
  if (s.contains("lifetime_left_s")) std::printf("lifetime  %s s left\n", text(s, "lifetime_left_s").c_str());
  if (s.contains("request") && s["request"].is_object()) {
    const json& r = s["request"];
    const json& p = r.value("policy", json::object());
    std::printf("policy    %s s per call, %s MB memory\n", text(p, "timeout_s").c_str(), text(p, "memory_mb").c_str());
    if (!text(r, "snapshot").empty()) std::printf("snapshot  %s\n", text(r, "snapshot").c_str());
  }
  const json* calls = s.contains("calls") ? &s["calls"] : nullptr;
  if ((!calls || !calls->is_array()) && s.contains("record") && s["record"].is_object()) calls = &s["record"]["calls"];
  if (calls && calls->is_array()) {
    std::printf("calls     %zu\n", calls->size());
    for (const auto& c : *calls)
      std::printf("  %-20s  %-6s  %-10s  %s\n", text(c, "id").c_str(), text(c, "kind").c_str(),
                  (c.contains("status") ? text(c, "status") : text(c, "state")).c_str(), text(c, "created_at").c_str());
  }
}

int get(const SessionArgs& a, SessionConn& conn) {
  auto view = call_json(conn, "GET", session_path(a.positional[0]));
  if (!view) return kExitFailed;
  if (a.json)
    print_json(*view);
  else
    print_summary(*view);
  return kExitOk;
}

int simple_post(const SessionArgs& a, SessionConn& conn, const std::string& action, const char* done) {
  auto view = call_json(conn, "POST", session_path(a.positional[0]) + "/" + action);
  if (!view) return kExitFailed;
  if (a.json)
    print_json(*view);
  else
    std::printf("%s %s\n", done, a.positional[0].c_str());
  return kExitOk;
}

int refuse(const SessionArgs& a, SessionConn& conn) {
  std::string reason;
  for (size_t i = 2; i < a.positional.size(); ++i) reason += (i > 2 ? " " : "") + a.positional[i];
  auto view = call_json(conn, "POST", session_path(a.positional[0]) + "/requests/" + a.positional[1] + "/refuse",
                        json{{"reason", reason}}.dump());
  if (!view) return kExitFailed;
  if (a.json) return print_json(*view), kExitOk;
  std::printf("refused %s of %s\n", a.positional[1].c_str(), a.positional[0].c_str());
  return kExitOk;
}

int close(const SessionArgs& a, SessionConn& conn) {
  auto view = call_json(conn, "DELETE", session_path(a.positional[0]));
  if (!view) return kExitFailed;
  if (a.json) return print_json(*view), kExitOk;
  size_t calls = 0;
  if (view->contains("record") && (*view)["record"].is_object()) {
    const json& rec = (*view)["record"];
    if (rec.contains("calls") && rec["calls"].is_array()) calls = rec["calls"].size();
  }
  std::printf("closed %s (%s), %zu call%s\n", text(*view, "id").c_str(), text(*view, "close_reason").c_str(), calls,
              calls == 1 ? "" : "s");
  return kExitOk;
}

std::string files_target(const SessionArgs& a, const std::string& suffix, const std::string& path) {
  return session_path(a.positional[0]) + "/files" + suffix + "?path=" + api::percent_encode(path);
}

int files(const SessionArgs& a, SessionConn& conn) {
  const auto& p = a.positional;
  if (a.files_verb == "upload") {
    auto content = sys::read_file(p[1], 1ull << 32);
    if (!content) {
      std::fprintf(stderr, "airlock: cannot read %s: %s\n", p[1].c_str(), content.error().message().c_str());
      return kExitFailed;
    }
    std::string remote = p.size() > 2 ? p[2] : base_name(p[1]);
    auto r = call(conn, "PUT", files_target(a, "", remote), *content, {{"Content-Type", "application/octet-stream"}});
    if (!r) return kExitFailed;
    json j = parse_json_or_discarded(r->body, kMaxStoredJsonDepth);
    if (a.json) return print_json(j), kExitOk;
    std::printf("uploaded %s (%s bytes, sha256 %s, %s)\n", text(j, "path").c_str(), text(j, "size").c_str(),
                text(j, "sha256").c_str(), text(j, "type").c_str());
    return kExitOk;
  }
  if (a.files_verb == "ls") {
    auto j = call_json(conn, "GET", files_target(a, "", p.size() > 1 ? p[1] : ""));
    if (!j) return kExitFailed;
    if (a.json) return print_json(*j), kExitOk;
    for (const auto& e : j->value("entries", json::array()))
      std::printf("%-9s %12s  %s%s\n", text(e, "kind").c_str(), text(e, "size").c_str(), text(e, "name").c_str(),
                  text(e, "kind") == "dir" || text(e, "kind") == "directory" ? "/" : "");
    if (j->value("truncated", false)) std::fprintf(stderr, "airlock: the listing was cut short\n");
    return kExitOk;
  }
  if (a.files_verb == "download") {
    auto r = call(conn, "GET", files_target(a, "/content", p[1]));
    if (!r) return kExitFailed;
    std::string sent = r->headers.count("x-content-sha256") ? r->headers.at("x-content-sha256") : "";
    if (sent.rfind("sha256:", 0) == 0) sent.erase(0, 7);
    std::string got = Sha256::of(r->body);
    if (sent != got) {
      std::fprintf(stderr, "airlock: %s arrived with sha256 %s but the service sent %s; not saved\n", p[1].c_str(),
                   got.c_str(), sent.empty() ? "none" : sent.c_str());
      return kExitFailed;
    }
    std::string local = p.size() > 2 ? p[2] : base_name(p[1]);
    Status st = local == "-" ? sys::write_all(1, r->body) : sys::write_file_atomic(local, r->body, 0644);
    if (!st) {
      std::fprintf(stderr, "airlock: cannot write %s: %s\n", local.c_str(), st.error().message().c_str());
      return kExitFailed;
    }
    if (local != "-")
      std::fprintf(stderr, "airlock: saved %s (%zu bytes, sha256 %s)\n", local.c_str(), r->body.size(), got.c_str());
    return kExitOk;
  }
  // rm
  auto j = call_json(conn, "DELETE", files_target(a, "", p[1]));
  if (!j) return kExitFailed;
  if (a.json) return print_json(*j), kExitOk;
  std::printf("removed %s\n", p[1].c_str());
  return kExitOk;
}

int snapshots(const SessionArgs& a, SessionConn& conn) {
  if (a.verb == "snapshot") {
    auto j = call_json(conn, "POST", session_path(a.positional[0]) + "/snapshots");
    if (!j) return kExitFailed;
    if (a.json) return print_json(*j), kExitOk;
    std::printf("%s\n", text(*j, "digest").c_str());
    std::fprintf(stderr, "airlock: snapshot of %s: %s entries, %s bytes, expires %s\n", a.positional[0].c_str(),
                 text(*j, "entries").c_str(), text(*j, "size_bytes").c_str(), text(*j, "expires_at").c_str());
    for (const auto& s : j->value("skipped", json::array()))
      std::fprintf(stderr, "airlock: skipped %s (%s)\n", text(s, "path").c_str(), text(s, "reason").c_str());
    return kExitOk;
  }
  if (a.verb == "snapshot-rm") {
    auto j = call_json(conn, "DELETE", "/v1/snapshots/" + api::percent_encode(a.positional[0]));
    if (!j) return kExitFailed;
    if (a.json) return print_json(*j), kExitOk;
    std::printf("removed %s\n", a.positional[0].c_str());
    return kExitOk;
  }
  auto j = call_json(conn, "GET", "/v1/snapshots");
  if (!j) return kExitFailed;
  if (a.json) return print_json(*j), kExitOk;
  std::printf("%-71s  %12s  %7s  %-20s  %s\n", "DIGEST", "BYTES", "ENTRIES", "SOURCE", "EXPIRES");
  for (const auto& s : j->value("snapshots", json::array()))
    std::printf("%-71s  %12s  %7s  %-20s  %s\n", text(s, "digest").c_str(), text(s, "size_bytes").c_str(),
                text(s, "entries").c_str(), text(s, "source").c_str(), text(s, "expires_at").c_str());
  return kExitOk;
}

}  // namespace

int session_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kSessionUsage, args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  auto a = parse_session_args(args);
  if (!a) return usage_error(a.error().message());
  auto conn = open_conn(*a);
  if (!conn) return kExitFailed;
  const std::string& v = a->verb;
  if (v == "create") return create(*a, *conn);
  if (v == "list") return list(*a, *conn);
  if (v == "get") return get(*a, *conn);
  if (v == "exec") return session_exec(*a, *conn);
  if (v == "interrupt") return simple_post(*a, *conn, "interrupt", "interrupted the call of");
  if (v == "restart") return simple_post(*a, *conn, "restart", "restarted the kernel of");
  if (v == "files") return files(*a, *conn);
  if (v == "close") return close(*a, *conn);
  if (v == "refuse") return refuse(*a, *conn);
  return snapshots(*a, *conn);
}
