// airlock mcp: an MCP server on stdio for an agent, as a client of a
// running `airlock serve` (docs/mcp.md). stdout carries only MCP messages;
// everything else goes to stderr.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "http/url.h"
#include "mcp/stdio_args.h"
#include "mcp/stdio_server.h"
#include "sys/file_io.h"

using namespace airlock;

namespace {

const char* const kMcpUsage =
    "usage: airlock mcp [--url http://127.0.0.1:8470] [--key-file FILE] [--event-keepalive-ms N]\n"
    "  An MCP server on stdin/stdout (newline-delimited JSON-RPC) for an agent: its tools run "
    "code\n"
    "  through the API of a running `airlock serve` at --url (default $AIRLOCK_SERVER, else\n"
    "  http://127.0.0.1:8470), with the API key from $AIRLOCK_API_KEY or --key-file, never from\n"
    "  the command line. --event-keepalive-ms is the service's keep-alive interval (default "
    "15000):\n"
    "  an event stream silent for three intervals is taken for dead and resumed. Logs go to\n"
    "  stderr. See docs/mcp.md.\n";

}  // namespace

int mcp_command(const std::vector<std::string>& args) {
  auto parsed = mcp::parse_stdio_args(args);
  if (!parsed) {
    std::fprintf(stderr, "airlock mcp: %s\n%s", parsed.error().message().c_str(), kMcpUsage);
    return 125;
  }
  if (parsed->help) {
    std::fputs(kMcpUsage, stderr);  // stdout is the protocol's
    return 0;
  }
  const char* env_server = std::getenv("AIRLOCK_SERVER");
  std::string url = parsed->url ? *parsed->url : env_server ? env_server : "http://127.0.0.1:8470";
  auto address = api::parse_server_url(url);
  if (!address) {
    std::fprintf(stderr, "airlock mcp: --url: %s\n", address.error().message().c_str());
    return 125;
  }
  std::string key;
  if (parsed->key_file) {
    auto text = sys::read_file(*parsed->key_file, 4096);
    if (!text) {
      std::fprintf(stderr, "airlock mcp: cannot read the key file: %s\n",
                   text.error().message().c_str());
      return 125;
    }
    key = *text;
  } else if (const char* env = std::getenv("AIRLOCK_API_KEY")) {
    key = env;
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (key.empty() || key.find_first_of("\r\n") != std::string::npos) {
    std::fprintf(
        stderr,
        "airlock mcp: no API key (one line): set AIRLOCK_API_KEY or pass --key-file FILE\n");
    return 125;
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  mcp::ApiTarget target{address->host, address->port, key, url, parsed->event_keepalive_ms};
  std::fprintf(stderr, "airlock mcp: serving MCP on stdio for %s\n", url.c_str());
  return mcp::serve_stdio(target, STDIN_FILENO, STDOUT_FILENO);
}
