#include "cmd/airlock/terminal_out.h"

#include <unistd.h>

#include "base/terminal_text.h"
#include "sys/file_io.h"

namespace airlock::cli {

void write_shown(int fd, std::string_view text) {
  (void)sys::write_all(fd, ::isatty(fd) ? terminal_safe(text) : std::string(text));
}

std::string json_shown(int fd, const nlohmann::json& j) {
  const bool terminal = ::isatty(fd);
  std::string text = j.dump(2, ' ', terminal, nlohmann::json::error_handler_t::replace);
  if (!terminal) return text;
  std::string out;  // DEL is the one control JSON leaves raw
  for (char c : text) out += c == '\x7f' ? std::string("\\u007f") : std::string(1, c);
  return out;
}

}  // namespace airlock::cli
