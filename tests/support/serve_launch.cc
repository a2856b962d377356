#include "support/serve_launch.h"

#include <fcntl.h>
#include <unistd.h>

namespace airlock::testing {

LaunchedServe launch_serve(std::vector<std::string> args, const std::string& log_path, int log_flags,
                           mode_t log_mode) {
  LaunchedServe s;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return s;
  s.pid = ::fork();
  if (s.pid == 0) {
    ::dup2(out[1], 1);
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | log_flags, log_mode);
    ::dup2(log, 2);
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
  auto at = s.first_line.find("127.0.0.1:");
  if (at != std::string::npos) s.port = static_cast<uint16_t>(std::stoi(s.first_line.substr(at + 10)));
  return s;
}

}  // namespace airlock::testing
