// The host's side of the session kernel's protocol (session_kernel.h): pure
// splitting and parsing of the lines the sandbox sends, and the per-call
// collection of output and answer under caps. Everything here is untrusted
// input: a line that is not a JSON object is an error (the caller passes it
// on as raw output), fields of the wrong type read as empty, and nothing a
// line says can touch a call other than the one whose nonce it carries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::jobs {

struct CallUsage {
  uint64_t cpu_ms = 0;             // the session cgroup's cpu time over the call
  uint64_t peak_memory_bytes = 0;  // the session cgroup's high-water mark as of the call's end (0: unknown)
};

// What the host keeps of one call's answer, in bytes; past a cap the text is
// cut (at a UTF-8 boundary) and its truncated flag set. Figures count
// together, as base64: a figure that does not fit whole is left out.
struct CallCaps {
  size_t value_bytes = 1 << 20;
  size_t html_bytes = 1 << 20;
  size_t error_bytes = 256 << 10;
  size_t figures_bytes = 8 << 20;
};
inline constexpr size_t kMaxFigures = 64;

struct Truncated {
  bool value = false, html = false, error = false, figures = false;
};

// One line the call sent through AIRLOCK_REQUEST_FD, as the kernel passed it
// on: its text (none when it had more bytes than the call's limit; then only
// its size is known) for the host to validate (src/requests).
struct RawDataRequest {
  std::optional<std::string> line;
  uint64_t bytes = 0;
};

struct CallResult {
  std::string id;      // the id the caller gave
  std::string status;  // see Session::exec
  std::string stdout_text, stderr_text;  // what the call printed (capped: kCallOutputCap each)
  std::string result;                    // repr of the last expression, or ""
  std::string html;                      // its _repr_html_ (a DataFrame), or ""
  std::string error;                     // traceback or reason, or ""
  std::vector<std::string> figures_png_base64;
  int exit_code = 0;  // shell: the command's exit status
  std::string cwd;    // shell: the working directory after the command
  double ms = 0;
  CallUsage usage;
  Truncated truncated;         // what the caps cut (see CallCaps)
  uint64_t dropped_lines = 0;  // protocol lines refused during the call: another tag, or over kMaxKernelLine
  // Data requests: the first lines up to the call's limit, then only counted.
  std::vector<RawDataRequest> data_requests;
  uint64_t requests_over_lines = 0, requests_over_bytes = 0;
};

struct KernelEvent {
  // kPart: a piece of the coming answer's field (value, html, error) or of
  // figure `index`. kDropped: a line the host refused (too long), from the
  // stream itself, never from a line's content.
  enum class Kind { kReady, kStarted, kOutput, kPart, kRequest, kAnswer, kKernelExited, kDropped, kOther };
  Kind kind = Kind::kOther;
  std::string id;          // the call it belongs to ("" for none)
  std::string tag;         // the call's nonce (kernel lines) or the keeper's secret (kernel_exited)
  bool is_stderr = false;  // kOutput
  std::string text;        // kOutput, kPart: the text; kKernelExited: the keeper's reason
  std::string field;       // kPart: "value", "html", "error" or "figure"
  int64_t index = 0;       // kPart of a figure: its number in the call, from 0
  RawDataRequest request;  // kRequest: a data request line the call sent
  CallResult answer;       // kAnswer (without output: that came as kOutput)
  std::vector<std::string> truncated;  // kAnswer: the fields the kernel says it cut
};

// Parses one protocol line without its mark.
Result<KernelEvent> parse_kernel_event(std::string_view json_text);

// A fresh secret the code in the sandbox cannot guess: 32 hex characters
// from getrandom(2). One per call (its nonce) and one per keeper.
std::string new_protocol_tag();

// The sandbox's stdout split as it arrives into protocol lines (a line that
// starts with `mark`: the text after the mark, without the newline) and raw
// output (everything else, passed on at once, newline or not). It never holds
// more than `max_line` bytes plus one fed piece: a marked line longer than
// that is dropped as it streams past and reported as one kDropped piece.
class KernelStream {
 public:
  struct Piece {
    enum class Kind { kLine, kRaw, kDropped } kind;
    std::string text;
  };
  KernelStream(std::string_view mark, size_t max_line) : mark_(mark), max_line_(max_line) {}
  void feed(std::string_view bytes, std::vector<Piece>& out);
  size_t pending() const { return pending_.size(); }

 private:
  bool could_be_marked() const;
  std::string mark_;
  size_t max_line_;
  std::string pending_;
  bool discarding_ = false;
};

// The longest protocol line the host reads; the kernel sends big fields in
// parts well under it.
inline constexpr size_t kMaxKernelLine = 1 << 20;

// Builds one call's answer from its parts and its final answer line, keeping
// at most the caps while the parts arrive: what is over a cap is never held.
class AnswerAssembler {
 public:
  explicit AnswerAssembler(const CallCaps& caps) : caps_(caps) {}
  void part(const KernelEvent& e);
  // The answer line's own fields are added after the parts (under the same
  // caps); the kernel's claims of truncation are kept.
  CallResult finish(const KernelEvent& answer);

 private:
  void add_text(std::string& to, size_t cap, bool& cut, std::string_view text);
  void add_figure(int64_t index, std::string_view text);
  void end_figure();
  CallCaps caps_;
  CallResult r_;
  std::string figure_;
  int64_t figure_index_ = -1;
  bool figure_dropped_ = false;
  size_t figure_bytes_ = 0;  // of the figures kept so far
};

// Collects one stream of a call up to `cap` bytes; past it the text ends with
// a note saying how much was cut.
class OutputCollector {
 public:
  explicit OutputCollector(size_t cap) : cap_(cap) {}
  void append(std::string_view text);
  std::string take();

 private:
  size_t cap_;
  std::string text_;
  uint64_t dropped_ = 0;
};

inline constexpr size_t kCallOutputCap = 1 << 20;

}  // namespace airlock::jobs
