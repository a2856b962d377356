// Text from a job, made inert for a terminal. A terminal acts on control
// bytes (ESC starts CSI and OSC sequences: clear the screen, set the title,
// write the clipboard with OSC 52, hide text), on C1 controls (U+009B is a
// CSI by itself), on a bare CR or a backspace (which overwrite what is on
// the line) and on bidi controls (which reorder it). These come out as
// visible escapes (\x1b, \u009b); invalid UTF-8 comes out byte by byte as
// \xNN. Everything else, newline and tab included, passes unchanged. The
// record keeps the exact bytes; this is only for what a person sees.
#pragma once

#include <string>
#include <string_view>

namespace airlock {

enum class Newlines { kKeep, kEscape };  // kEscape: one line (a name inside a message)

[[nodiscard]] std::string terminal_safe(std::string_view bytes,
                                        Newlines newlines = Newlines::kKeep);

// Text a job, a data request or the service chose, quoted inside a line
// airlock writes itself ("airlock: asks r1 more.csv: WHY"): the one-line
// form (terminal_safe with Newlines::kEscape), to a terminal, a file or a
// pipe alike, so a newline in it (\x0a) cannot start a line of its own that
// reads like airlock's ("ended: ok"). Every command quotes such text with it.
[[nodiscard]] std::string quoted_text(std::string_view bytes);

// The same for a stream that arrives in pieces: a UTF-8 sequence or a CR LF
// split between two pieces is judged once it is whole.
class TerminalStream {
 public:
  // What can be shown of `piece` now (an unfinished tail waits for the next).
  [[nodiscard]] std::string feed(std::string_view piece);
  // The held tail, judged as it is (the stream has ended).
  [[nodiscard]] std::string finish();

 private:
  std::string held_;
};

}  // namespace airlock
