// airlock: one binary, one thin file per subcommand.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cmd/airlock/version.h"

int run_command(const std::vector<std::string>& args);    // run_command.cc
int sweep_command(const std::vector<std::string>& args);  // sweep_command.cc
int serve_command(const std::vector<std::string>& args);  // serve_command.cc
int keys_command(const std::vector<std::string>& args);    // keys_command.cc
int verify_command(const std::vector<std::string>& args);  // verify_command.cc
int pool_command(const std::vector<std::string>& args);    // pool_command.cc
int session_command(const std::vector<std::string>& args);  // session_command.cc
int zygote_command(const std::vector<std::string>& args);  // zygote_command.cc (internal)
int mcp_command(const std::vector<std::string>& args);     // mcp_command.cc
int image_command(const std::vector<std::string>& args);   // image_command.cc
int selftest_command(const std::vector<std::string>& args);  // selftest_command.cc
int usage_command(const std::vector<std::string>& args);     // usage_command.cc
int estimate_command(const std::vector<std::string>& args);  // estimate_command.cc
int inspect_command(const std::vector<std::string>& args);  // inspect_command.cc (internal)

namespace {

const char* const kUsage =
    "usage: airlock COMMAND [ARGS]\n"
    "  run [OPTIONS] -- COMMAND [ARG...]   run a command in a fresh sandbox (see airlock run --help)\n"
    "  sweep                               remove what dead airlock processes left behind\n"
    "  serve [OPTIONS]                     the job service over HTTP (see airlock serve --help)\n"
    "  keys create|list|revoke [OPTIONS]   API keys of the job service (see airlock keys --help)\n"
    "  verify [--data-dir DIR]             check the job service's record chains\n"
    "  pool [OPTIONS]                      keep warm and preloaded sandboxes ready (see airlock pool --help)\n"
    "  session COMMAND [ARGS]              sessions of a running airlock serve: create, exec, files, close, ...\n"
    "                                      (see airlock session --help)\n"
    "  mcp [--url URL] [--key-file FILE]   an MCP server on stdio for agents, a client of airlock serve\n"
    "  image build|list|inspect|rm|gc      images built from recipes, and their store (see airlock image --help)\n"
    "  selftest [OPTIONS]                  demonstrate the boundary on the live configuration (see --help)\n"
    "  usage [OPTIONS]                     usage and cost of a running airlock serve (see airlock usage --help)\n"
    "  estimate [OPTIONS]                  a monthly cost from a workload or a tenant's last days (see --help)\n"
    "  --version                           the version, and the git commit it was built from\n";

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (airlock run ... | head) must not kill airlock mid-job:
  // the job is then cleaned up and recorded as usual. The payload resets
  // every signal to its default before exec.
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 125 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("%s\n", airlock_version_text());
    return 0;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return run_command(args);
  if (command == "sweep") return sweep_command(args);
  if (command == "serve") return serve_command(args);
  if (command == "keys") return keys_command(args);
  if (command == "verify") return verify_command(args);
  if (command == "pool") return pool_command(args);
  if (command == "session") return session_command(args);
  if (command == "mcp") return mcp_command(args);
  if (command == "zygote") return zygote_command(args);
  if (command == "image") return image_command(args);
  if (command == "selftest") return selftest_command(args);
  if (command == "usage") return usage_command(args);
  if (command == "estimate") return estimate_command(args);
  if (command == "inspect-archive") return inspect_command(args);
  std::fprintf(stderr, "airlock: unknown command '%s'\n%s", command.c_str(), kUsage);
  return 125;
}
