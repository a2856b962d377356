#include "mcp/stdio_args.h"

#include <charconv>

namespace airlock::mcp {

Result<StdioArgs> parse_stdio_args(const std::vector<std::string>& args) {
  StdioArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      continue;
    }
    if (arg == "--key" || arg == "--api-key" || arg == "--token" || arg == "--secret")
      return fail(
          "never give the API key on the command line (other users can read a process's "
          "arguments): "
          "set AIRLOCK_API_KEY or use --key-file FILE");
    if (arg != "--url" && arg != "--key-file" && arg != "--event-keepalive-ms")
      return fail("unknown option '" + args[i] + "'");
    if (!has_value) {
      if (i + 1 >= args.size()) return fail(arg + " needs a value");
      value = args[++i];
    }
    if (arg == "--url") out.url = value;
    if (arg == "--key-file") out.key_file = value;
    if (arg == "--event-keepalive-ms") {
      int ms = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (ec != std::errc() || end != value.data() + value.size() || ms < 50 || ms > 3'600'000)
        return fail("--event-keepalive-ms: a number of milliseconds, 50 to 3600000");
      out.event_keepalive_ms = ms;
    }
  }
  return out;
}

}  // namespace airlock::mcp
