// airlock selftest: the pilot against the live configuration (docs/selftest.md).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "http/url.h"
#include "selftest/local_service.h"
#include "selftest/report.h"
#include "selftest/runner.h"
#include "sys/file_io.h"

namespace {

const char* const kHelp =
    "usage: airlock selftest [--url URL --key-file FILE [--other-key-file FILE]] [--config FILE]\n"
    "                        [--html FILE] [--json FILE] [--probe-port N]\n"
    "  Demonstrates the boundary on the live configuration: a valid analyst job with checks; a file\n"
    "  outside the inputs, a network destination that was not approved and a look for credentials,\n"
    "  all blocked; cancellation of a running job; cleanup; a rejected output; another tenant refused.\n"
    "  Each item says what was attempted, what the boundary answered, and the job and record ids.\n"
    "  Without --url it starts an airlock serve of its own on the configuration given by --config,\n"
    "  with a temporary data and state directory and a loopback port, and stops it at the end.\n"
    "  With --url it talks to a running airlock serve; the key (scopes run, read) comes from\n"
    "  --key-file or $AIRLOCK_KEY (or $AIRLOCK_API_KEY), never from the command line; another\n"
    "  tenant's key from --other-key-file (without it that item is skipped).\n"
    "  --html FILE, --json FILE: the same report as a page and as JSON.\n"
    "  --probe-port N: the port of the selftest's loopback listener (default: any free one).\n"
    "  Exit status: 0 when every item held, 1 when one did not, 125 on a usage error.\n";

std::optional<std::string> read_key(const std::string& path) {
  auto text = airlock::sys::read_file(path, 4096);
  if (!text) {
    std::fprintf(stderr, "airlock selftest: cannot read %s: %s\n", path.c_str(), text.error().message().c_str());
    return std::nullopt;
  }
  std::string key = *text;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty() || key.find_first_of("\r\n") != std::string::npos) {
    std::fprintf(stderr, "airlock selftest: %s must hold one key on one line\n", path.c_str());
    return std::nullopt;
  }
  return key;
}

bool write_out(const std::string& path, const std::string& text) {
  if (auto st = airlock::sys::write_file_atomic(path, text, 0644); !st) {
    std::fprintf(stderr, "airlock selftest: cannot write %s: %s\n", path.c_str(), st.error().message().c_str());
    return false;
  }
  return true;
}

}  // namespace

int selftest_command(const std::vector<std::string>& args) {
  using namespace airlock;
  std::string url, key_file, other_key_file, config, html, json_out;
  uint16_t probe_port = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "airlock selftest: unknown option or missing value: %s\n%s", a.c_str(), kHelp);
      return 125;
    }
    const std::string& v = args[++i];
    if (a == "--url") url = v;
    else if (a == "--key-file") key_file = v;
    else if (a == "--other-key-file") other_key_file = v;
    else if (a == "--config") config = v;
    else if (a == "--html") html = v;
    else if (a == "--json") json_out = v;
    else if (a == "--probe-port") {
      char* end = nullptr;
      long p = std::strtol(v.c_str(), &end, 10);
      if (*end || p < 1 || p > 65535) {
        std::fprintf(stderr, "airlock selftest: --probe-port: a port number\n");
        return 125;
      }
      probe_port = static_cast<uint16_t>(p);
    } else {
      std::fprintf(stderr, "airlock selftest: unknown option %s\n%s", a.c_str(), kHelp);
      return 125;
    }
  }

  selftest::Target target;
  target.probe_port = probe_port;
  std::unique_ptr<selftest::LocalService> local;
  if (url.empty()) {
    if (!key_file.empty() || !other_key_file.empty()) {
      std::fprintf(stderr, "airlock selftest: --key-file and --other-key-file go with --url\n");
      return 125;
    }
    auto started = selftest::LocalService::start("/proc/self/exe", config, target.canary_prefix);
    if (!started) {
      std::fprintf(stderr, "airlock selftest: %s\n", started.error().message().c_str());
      return 1;
    }
    local = std::move(*started);
    target.port = local->port();
    target.key = local->key();
    target.other_key = local->other_key();
    target.same_machine = true;
    target.data_dir = local->data_dir();
    target.state_dir = local->state_dir();
    target.description = "local: an airlock serve of its own on 127.0.0.1:" + std::to_string(local->port()) +
                         (config.empty() ? " (default configuration)" : " (configuration " + config + ")");
  } else {
    if (!config.empty()) {
      std::fprintf(stderr, "airlock selftest: --config is for the local serve; with --url the service has its own\n");
      return 125;
    }
    auto address = api::parse_server_url(url);
    if (!address) {
      std::fprintf(stderr, "airlock selftest: %s\n", address.error().message().c_str());
      return 125;
    }
    target.host = address->host;
    target.port = address->port;
    target.description = url;
    target.same_machine = address->host == "127.0.0.1" || address->host == "::1";
    if (!key_file.empty()) {
      auto k = read_key(key_file);
      if (!k) return 125;
      target.key = *k;
    } else if (const char* env = std::getenv("AIRLOCK_KEY"); env && *env) {
      target.key = env;
    } else if (const char* env2 = std::getenv("AIRLOCK_API_KEY"); env2 && *env2) {
      target.key = env2;
    } else {
      std::fprintf(stderr, "airlock selftest: no API key: set AIRLOCK_KEY or pass --key-file FILE\n");
      return 125;
    }
    if (!other_key_file.empty()) {
      auto k = read_key(other_key_file);
      if (!k) return 125;
      target.other_key = *k;
    }
  }

  selftest::Report report = selftest::run_selftest(target);
  if (local) {
    std::string problems = local->stop();
    if (!problems.empty())
      report.items.push_back({"the selftest's own serve stopped and removed", "SIGTERM, then remove its directory",
                              problems, selftest::Verdict::kBroken, problems, {}});
  }
  std::string text = selftest::render_text(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  bool wrote = true;
  if (!html.empty()) wrote &= write_out(html, selftest::render_html(report));
  if (!json_out.empty()) wrote &= write_out(json_out, selftest::to_json(report).dump(2) + "\n");
  int status = selftest::exit_status(report);
  return status != 0 || !wrote ? 1 : 0;
}
