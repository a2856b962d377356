#include "cli/session_args.h"

#include <cmath>
#include <map>
#include <set>

#include "base/base64.h"
#include "base/terminal_text.h"

#include "base/json_parse.h"
namespace airlock::cli {
namespace {

using json = nlohmann::json;

struct VerbSpec {
  std::set<std::string> options;
  size_t min_args, max_args;  // positional, after the verb(s)
};

const std::set<std::string> kValueOptions = {"--server", "--key-file", "--idle-timeout", "--max-lifetime", "--memory",
                                             "--timeout", "--input",   "--snapshot",     "-f",            "--figures",
                                             "--image",  "--answer"};

// Options every verb takes: --server, --key-file, --json.
const std::map<std::string, VerbSpec>& verbs() {
  static const std::map<std::string, VerbSpec> kVerbs = {
      {"create", {{"--idle-timeout", "--max-lifetime", "--memory", "--timeout", "--input", "--snapshot", "--image"}, 0, 0}},
      {"list", {{}, 0, 0}},
      {"get", {{}, 1, 1}},
      {"exec", {{"--shell", "--timeout", "-f", "--figures", "--answer"}, 1, SIZE_MAX}},
      {"refuse", {{}, 3, SIZE_MAX}},  // ID REQUEST_ID REASON...
      {"interrupt", {{}, 1, 1}},
      {"restart", {{}, 1, 1}},
      {"files upload", {{}, 2, 3}},
      {"files ls", {{}, 1, 2}},
      {"files download", {{}, 2, 3}},
      {"files rm", {{}, 2, 2}},
      {"snapshot", {{}, 1, 1}},
      {"snapshots", {{}, 0, 0}},
      {"snapshot-rm", {{}, 1, 1}},
      {"close", {{}, 1, 1}},
  };
  return kVerbs;
}

Result<int> whole_seconds(const std::string& option, const std::string& value, int hi) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(value) < 1 || std::stoi(value) > hi)
    return fail(option + ": a whole number from 1 to " + std::to_string(hi) + ", not \"" + value + "\"");
  return std::stoi(value);
}

Result<double> positive_seconds(const std::string& option, const std::string& value) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(v) || v <= 0)
    return fail(option + ": a number of seconds more than 0, not \"" + value + "\"");
  return v;
}

Status set_option(SessionArgs& a, const std::string& opt, const std::string& value) {
  if (opt == "--server") {
    a.server = value;
  } else if (opt == "--key-file") {
    a.key_file = value;
  } else if (opt == "--idle-timeout" || opt == "--max-lifetime") {
    auto v = whole_seconds(opt, value, 100'000'000);
    if (!v) return std::unexpected(v.error());
    (opt == "--idle-timeout" ? a.idle_timeout_s : a.max_lifetime_s) = *v;
  } else if (opt == "--memory") {
    auto v = whole_seconds(opt, value, 1 << 20);
    if (!v) return fail("--memory: a whole number of MB, not \"" + value + "\"");
    a.memory_mb = *v;
  } else if (opt == "--timeout") {
    auto v = positive_seconds(opt, value);
    if (!v) return std::unexpected(v.error());
    a.timeout_s = *v;
  } else if (opt == "--input") {
    a.inputs.push_back(value);
  } else if (opt == "--snapshot") {
    a.snapshot = value;
  } else if (opt == "--image") {
    a.image = value;
  } else if (opt == "-f") {
    a.code_file = value;
  } else if (opt == "--figures") {
    a.figures_dir = value;
  } else if (opt == "--answer") {
    a.answers.push_back(value);
  }
  return {};
}

}  // namespace

Result<SessionArgs> parse_session_args(const std::vector<std::string>& args) {
  SessionArgs a;
  std::vector<std::string> words;  // verb, files verb and positional, in order
  std::vector<std::string> seen;   // options given
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    bool is_option = !options_done && arg.size() > 1 && arg[0] == '-';
    if (!is_option) {
      words.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::string value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--json" || arg == "--shell") {
      if (has_value) return fail(arg + " takes no value");
      (arg == "--json" ? a.json : a.shell) = true;
    } else if (kValueOptions.count(arg)) {
      if (!has_value) {
        if (i + 1 >= args.size()) return fail(arg + " needs a value");
        value = args[++i];
      }
      if (auto st = set_option(a, arg, value); !st) return std::unexpected(st.error());
      // --input FILE_ID ...: the ids that follow, up to the next option.
      while (arg == "--input" && i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-')
        a.inputs.push_back(args[++i]);
    } else {
      return fail("unknown option " + arg);
    }
    seen.push_back(arg);
  }
  if (words.empty()) return fail("session needs a command");
  a.verb = words[0];
  size_t first = 1;
  std::string spec_name = a.verb;
  if (a.verb == "files") {
    if (words.size() < 2) return fail("files needs upload, ls, download or rm");
    a.files_verb = words[1];
    spec_name += " " + a.files_verb;
    first = 2;
  }
  auto it = verbs().find(spec_name);
  if (it == verbs().end()) return fail("unknown session command '" + spec_name + "'");
  for (const auto& opt : seen)
    if (opt != "--server" && opt != "--key-file" && opt != "--json" && !it->second.options.count(opt))
      return fail(opt + " is not an option of session " + spec_name);
  a.positional.assign(words.begin() + static_cast<long>(first), words.end());
  size_t n = a.positional.size();
  if (n < it->second.min_args || n > it->second.max_args) return fail("wrong number of arguments to session " + spec_name);
  if (a.verb == "exec") {
    int sources = (n > 1 ? 1 : 0) + (a.code_file ? 1 : 0);
    if (sources != 1) return fail("exec needs the code: CODE, -f FILE, or - (standard input)");
  }
  return a;
}

CodeSource code_source(const SessionArgs& a) {
  if (a.code_file) return a.code_file == "-" ? CodeSource::kStdin : CodeSource::kFile;
  if (a.positional.size() == 2 && a.positional[1] == "-") return CodeSource::kStdin;
  return CodeSource::kArgument;
}

std::string code_argument(const SessionArgs& a) {
  std::string code;
  for (size_t i = 1; i < a.positional.size(); ++i) code += (i > 1 ? " " : "") + a.positional[i];
  return code;
}

std::string server_url(const SessionArgs& a, const char* env_server) {
  if (a.server) return *a.server;
  if (env_server && *env_server) return env_server;
  return kDefaultServer;
}

json create_body(const SessionArgs& a) {
  json body = json::object();
  if (a.idle_timeout_s) body["idle_timeout_s"] = *a.idle_timeout_s;
  if (a.max_lifetime_s) body["max_lifetime_s"] = *a.max_lifetime_s;
  if (!a.inputs.empty()) body["inputs"] = a.inputs;
  if (a.snapshot) body["snapshot"] = *a.snapshot;
  if (a.image) body["image"] = *a.image;
  json policy = json::object();
  if (a.memory_mb) policy["memory_mb"] = *a.memory_mb;
  if (a.timeout_s) policy["timeout_s"] = *a.timeout_s;
  if (!policy.empty()) body["policy"] = policy;
  return body;
}

json exec_body(const SessionArgs& a, const std::string& code) {
  json body = {{"code", code}, {"kind", a.shell ? "shell" : "python"}};
  if (a.timeout_s) body["timeout_s"] = *a.timeout_s;
  if (!a.answers.empty()) body["answers"] = a.answers;
  return body;
}

int exec_exit_status(const json& view, bool shell) {
  const json& r = view.contains("result") && view["result"].is_object() ? view["result"] : view;
  std::string status = r.value("status", "");
  if (status == "timed_out") return kExitTimedOut;
  if (status == "interrupted") return kExitInterrupted;
  if (status == "input_requested") return kExitInputRequested;
  if (shell && (status == "ok" || status == "error") && r.contains("exit_code") && r["exit_code"].is_number_integer()) {
    int64_t code = r["exit_code"].get<int64_t>();
    if (code >= 0 && code <= 255) return static_cast<int>(code);
  }
  if (status == "ok") return kExitOk;
  if (status == "error") return kExitCallError;
  return kExitFailed;
}

std::string unseen_part(uint64_t printed, uint64_t offset, const std::string& text) {
  if (offset >= printed) return text;
  uint64_t skip = printed - offset;
  return skip >= text.size() ? "" : text.substr(skip);
}

namespace {

std::string hint(int status) {
  if (status == 401) return " (check $AIRLOCK_API_KEY or --key-file)";
  if (status == 403) return " (the key lacks a scope this needs)";
  if (status == 429) return " (the service is at its limit; try again later)";
  return "";
}

}  // namespace

std::string describe_http_error(int status, const std::string& body) {
  json j = parse_json_or_discarded(body);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    std::string code = e.value("code", ""), message = e.value("message", "");
    return "HTTP " + std::to_string(status) + (code.empty() ? "" : " " + code) + ": " +
           quoted_text(message) + hint(status);
  }
  std::string start = body.substr(0, 200);
  for (char& c : start)
    if (c == '\n' || c == '\r') c = ' ';
  start = quoted_text(start);
  return "HTTP " + std::to_string(status) + (start.empty() ? "" : ": " + start) + hint(status);
}

std::optional<std::string> decode_base64(const std::string& text) { return base64_decode(text); }

}  // namespace airlock::cli
