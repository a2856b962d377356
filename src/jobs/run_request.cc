#include "jobs/run_request.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "base/json_parse.h"
#include "base/strings.h"

namespace airlock::jobs {

const char* const kRunUsage =
    "usage: airlock run [OPTIONS] -- COMMAND [ARG...]\n"
    "  --input PATH          admit a file (repeatable); seen read-only as /inputs/<name>\n"
    "  --output-dir DIR      where accepted outputs are copied (created if missing)\n"
    "  --snapshot-manifest FILE  restore this workspace snapshot (its manifest JSON) into\n"
    "                        /workspace before the command starts; needs --content-dir\n"
    "  --content-dir DIR     the content directory holding the snapshot's files (sha256/..)\n"
    "  --record FILE         write the job record (JSON) here\n"
    "  --json                print the job record on stdout\n"
    "  --quiet               no summary line on stderr\n"
    "  --timeout SECONDS     wall-clock limit (default 60)\n"
    "  --cpu-time SECONDS    CPU time over all processes (default 60)\n"
    "  --memory SIZE         memory limit, e.g. 256M (default 512M)\n"
    "  --pids N              process and thread limit (default 128)\n"
    "  --cpus N              CPU bandwidth in cores (default 1)\n"
    "  --env NAME=VALUE      a variable the code sees (repeatable)\n"
    "  --image IMAGE         NAME or NAME@sha256:HEX from the image store, or host (the\n"
    "                        machine's own /usr, unpinned; the default)\n"
    "  --image-dir DIR       the image store (default: $AIRLOCK_IMAGE_DIR, else STATE_DIR/images)\n"
    "  --profile NAME        boundary: standard (default) or compute, which also denies sockets,\n"
    "                        new programs and processes (threads stay), and writes outside\n"
    "                        /output and /tmp (docs/profiles.md)\n"
    "  --workspace-size SIZE size of /workspace, /tmp, /dev/shm and /output each (default 256M)\n"
    "  --stdout-cap SIZE     bytes of stdout and of stderr kept (default 1M)\n"
    "  --output-types LIST   types accepted in /output, e.g. csv,png (default: text,csv,tsv,json,png,jpeg,pdf,svg)\n"
    "  --output-max-files N  files and directories accepted in /output (default 100)\n"
    "  --output-max-size SIZE  largest accepted output file (default 64M)\n"
    "  --output-max-total SIZE all accepted outputs together (default 256M)\n"
    "  --state-dir DIR       airlock's state (default $AIRLOCK_STATE_DIR or /var/lib/airlock)\n"
    "  --start MODE          auto (default): a sandbox from the warm pool when one fits (preloaded\n"
    "                        Python for python3 SCRIPT|-c|-m), else a cold start; cold: always a\n"
    "                        cold start; warm, preloaded: only that kind, or the job fails\n"
    "  --allow HOST:PORT     a network destination through the egress gateway (repeatable;\n"
    "                        HOST may be *.example.com); without any: no network\n"
    "  --allow-rule JSON     the same with limits, e.g. '{\"host\":\"api.example.com\",\"port\":443,\n"
    "                        \"tls\":true,\"methods\":[\"GET\"],\"paths\":[\"/v1/\"],\"secret\":\"api\"}'\n"
    "  --secrets-file FILE   root-only TOML of credentials the gateway adds (rules name them)\n"
    "  --egress-hosts FILE   static name overrides for the gateway (\"ADDRESS NAME...\" lines)\n"
    "  --egress-ca FILE      CA certificates for tls destinations (default: the system's)\n";

namespace {

bool parse_number(const std::string& text, double& out) {
  if (text.empty() || text.size() > 32) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out) && out >= 0 &&
         (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.');
}

}  // namespace

bool valid_env_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

namespace {

std::unexpected<Error> bad(const std::string& option, const std::string& value,
                           const std::string& why) {
  return fail(option + " " + (value.empty() ? "" : "'" + value + "' ") + why);
}

}  // namespace

Result<workspace::TypeSet> parse_type_list(const std::string& text) {
  workspace::TypeSet out;
  for (const auto& name : split(text, ',')) {
    auto type = workspace::type_from_name(name);
    if (!type || *type == workspace::FileType::kBinary)
      return fail("has an unknown type '" + name + "' (known: text, csv, tsv, json, png, jpeg, pdf, svg, xml, git-bundle, archive)");
    out.insert(*type);
  }
  return out;
}

Result<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return fail("empty size");
  std::string number = text;
  double unit = 1;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': unit = 1024.0; break;
    case 'M': unit = 1024.0 * 1024; break;
    case 'G': unit = 1024.0 * 1024 * 1024; break;
    case 'T': unit = 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
  }
  if (unit != 1) number.pop_back();
  double value = 0;
  if (!parse_number(number, value)) return fail("not a size (use e.g. 512K, 256M, 1G)");
  double bytes = value * unit;
  if (bytes > 1e15) return fail("size too large");
  return static_cast<uint64_t>(bytes);
}

Result<uint64_t> parse_seconds(const std::string& text) {
  double value = 0;
  if (!parse_number(text, value)) return fail("not a number of seconds");
  if (value > 7 * 24 * 3600) return fail("more than a week");
  return static_cast<uint64_t>(std::llround(value * 1000));
}

Result<RunRequest> parse_run_args(const std::vector<std::string>& args) {
  RunRequest req;
  JobPolicy& p = req.policy;
  using Setter = std::function<Status(const std::string&)>;
  auto size_into = [](uint64_t& field, const char* name, uint64_t min) -> Setter {
    return [&field, name, min](const std::string& v) -> Status {
      auto s = parse_size(v);
      if (!s) return bad(name, v, "is " + s.error().what);
      if (*s < min) return bad(name, v, "is below the minimum of " + std::to_string(min) + " bytes");
      field = *s;
      return {};
    };
  };
  auto seconds_into = [](uint64_t& field, const char* name) -> Setter {
    return [&field, name](const std::string& v) -> Status {
      auto ms = parse_seconds(v);
      if (!ms) return bad(name, v, "is " + ms.error().what);
      if (*ms == 0) return bad(name, v, "must be more than 0");
      field = *ms;
      return {};
    };
  };
  std::map<std::string, Setter> with_value = {
      {"--input", [&](const std::string& v) -> Status {
         if (v.empty()) return bad("--input", v, "is empty");
         req.inputs.push_back(v);
         return {};
       }},
      {"--output-dir", [&](const std::string& v) -> Status { req.output_dir = v; return {}; }},
      {"--snapshot-manifest", [&](const std::string& v) -> Status {
         if (v.empty()) return bad("--snapshot-manifest", v, "is empty");
         req.snapshot_manifest = v;
         return {};
       }},
      {"--content-dir", [&](const std::string& v) -> Status {
         if (v.empty()) return bad("--content-dir", v, "is empty");
         req.content_dir = v;
         return {};
       }},
      {"--record", [&](const std::string& v) -> Status { req.record_path = v; return {}; }},
      {"--image", [&](const std::string& v) -> Status { req.image = v; return {}; }},
      {"--profile", [&](const std::string& v) -> Status { req.profile = v; return {}; }},
      {"--image-dir", [&](const std::string& v) -> Status { req.image_dir = v; return {}; }},
      {"--start", [&](const std::string& v) -> Status {
         if (v != "auto" && v != "cold" && v != "warm" && v != "preloaded")
           return fail("--start: '" + v + "' is not one of auto, cold, warm, preloaded");
         req.start = v;
         return {};
       }},
      {"--state-dir", [&](const std::string& v) -> Status { req.state_dir = v; return {}; }},
      {"--timeout", seconds_into(p.timeout_ms, "--timeout")},
      {"--cpu-time", seconds_into(p.cpu_time_ms, "--cpu-time")},
      {"--memory", size_into(p.memory_bytes, "--memory", 8ull << 20)},
      {"--workspace-size", size_into(p.workspace_bytes, "--workspace-size", 1ull << 20)},
      {"--stdout-cap", size_into(p.stdout_cap_bytes, "--stdout-cap", 0)},
      {"--output-max-size", size_into(p.outputs.max_file_bytes, "--output-max-size", 1)},
      {"--output-max-total", size_into(p.outputs.max_total_bytes, "--output-max-total", 1)},
      {"--output-max-files", [&](const std::string& v) -> Status {
         double n = 0;
         if (!parse_number(v, n) || n != std::floor(n) || n < 1 || n > 100'000)
           return bad("--output-max-files", v, "must be a whole number from 1 to 100000");
         p.outputs.max_count = static_cast<size_t>(n);
         return {};
       }},
      {"--output-types", [&](const std::string& v) -> Status {
         auto types = parse_type_list(v);
         if (!types) return bad("--output-types", v, types.error().what);
         p.outputs.allowed = *types;
         return {};
       }},
      {"--pids", [&](const std::string& v) -> Status {
         double n = 0;
         if (!parse_number(v, n) || n != std::floor(n) || n < 4 || n > 1'000'000)
           return bad("--pids", v, "must be a whole number from 4 to 1000000");
         p.pids = static_cast<uint64_t>(n);
         return {};
       }},
      {"--cpus", [&](const std::string& v) -> Status {
         double n = 0;
         if (!parse_number(v, n) || n < 0.01 || n > 1024)
           return bad("--cpus", v, "must be a number of cores from 0.01 to 1024");
         p.cpus = n;
         return {};
       }},
      {"--allow", [&](const std::string& v) -> Status {
         auto rule = egress::parse_allow(v);
         if (!rule) return bad("--allow", v, rule.error().what);
         p.allow.push_back(std::move(*rule));
         return {};
       }},
      {"--allow-rule", [&](const std::string& v) -> Status {
         auto j = parse_json_or_discarded(v);
         if (j.is_discarded() || !j.is_object()) return bad("--allow-rule", "", "must be one JSON object");
         auto policy = egress::parse_policy(nlohmann::json::array({j}));
         if (!policy) return bad("--allow-rule", "", policy.error().what);
         p.allow.push_back(std::move(policy->rules.front()));
         return {};
       }},
      {"--secrets-file", [&](const std::string& v) -> Status { req.secrets_file = v; return {}; }},
      {"--egress-hosts", [&](const std::string& v) -> Status { req.egress_hosts_file = v; return {}; }},
      {"--egress-ca", [&](const std::string& v) -> Status { req.egress_ca_file = v; return {}; }},
      {"--env", [&](const std::string& v) -> Status {
         auto eq = v.find('=');
         if (eq == std::string::npos) return bad("--env", v, "must be NAME=VALUE");
         std::string name = v.substr(0, eq);
         if (!valid_env_name(name)) return bad("--env", name, "is not a valid variable name");
         p.env.emplace_back(name, v.substr(eq + 1));
         return {};
       }},
  };

  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--json") {
      req.json = true;
      continue;
    }
    if (a == "--quiet") {
      req.quiet = true;
      continue;
    }
    std::string name = a, value;
    bool inline_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    auto it = with_value.find(name);
    if (it == with_value.end()) {
      if (a.rfind("-", 0) == 0) return fail("unknown option " + a + " (see airlock run --help)");
      break;  // the command starts here (no "--")
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) return fail("option " + name + " needs a value");
      value = args[++i];
    }
    if (auto st = it->second(value); !st) return std::unexpected(st.error());
  }
  req.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (req.command.empty()) return fail("no command given (airlock run [OPTIONS] -- COMMAND [ARG...])");
  if (req.command[0].empty()) return fail("the command is an empty string");
  if (p.cpu_time_ms > 0 && p.memory_bytes == 0) return fail("--memory must be set");
  if (req.snapshot_manifest.empty() != req.content_dir.empty())
    return fail("--snapshot-manifest and --content-dir go together");
  if (p.allow.size() > 64) return fail("at most 64 network destinations (--allow, --allow-rule)");
  return req;
}

}  // namespace airlock::jobs
