#include "support/serve_launch.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

namespace airlock::testing {

LaunchedServe launch_serve(std::vector<std::string> args, const std::string& log_path, int log_flags,
                           mode_t log_mode, const std::string& netns) {
  LaunchedServe s;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return s;
  s.pid = ::fork();
  if (s.pid == 0) {
    ::dup2(out[1], 1);
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | log_flags, log_mode);
    ::dup2(log, 2);
    if (!netns.empty()) {
      int ns = ::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) ::_exit(125);
      ::close(ns);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') s.first_line += c;
  ::close(out[0]);
  // "http://HOST:PORT": the port follows the last colon before the next space.
  auto at = s.first_line.find("http://");
  if (at != std::string::npos) {
    auto end = s.first_line.find(' ', at);
    auto colon = s.first_line.rfind(':', end == std::string::npos ? std::string::npos : end);
    if (colon != std::string::npos && colon > at + 7) {
      std::string digits = s.first_line.substr(colon + 1, end == std::string::npos ? std::string::npos : end - colon - 1);
      if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos)
        s.port = static_cast<uint16_t>(std::stoi(digits));
    }
  }
  return s;
}

}  // namespace airlock::testing
