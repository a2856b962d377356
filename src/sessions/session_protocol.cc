#include "sessions/session_protocol.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "jobs/state_dir.h"

namespace airlock::jobs {
namespace {

std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

uint64_t count_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

CallResult answer_fields(const nlohmann::json& j) {
  CallResult r;
  r.id = str_field(j, "id");
  r.status = str_field(j, "status");
  r.result = str_field(j, "result");
  r.html = str_field(j, "html");
  r.error = str_field(j, "error");
  r.cwd = str_field(j, "cwd");
  if (auto it = j.find("figures"); it != j.end() && it->is_array())
    for (const auto& f : *it)
      if (f.is_string()) r.figures_png_base64.push_back(f.get<std::string>());
  if (auto it = j.find("ms"); it != j.end() && it->is_number()) r.ms = it->get<double>();
  if (auto it = j.find("requests_over"); it != j.end() && it->is_object()) {
    r.requests_over_lines = count_field(*it, "lines");
    r.requests_over_bytes = count_field(*it, "bytes");
  }
  if (auto it = j.find("exit_code"); it != j.end() && it->is_number_integer()) {
    auto code = it->get<int64_t>();
    r.exit_code = code >= 0 && code <= 255 ? static_cast<int>(code) : 255;
  }
  return r;
}

}  // namespace

Result<KernelEvent> parse_kernel_event(std::string_view text) {
  auto j = parse_json_or_discarded(text);
  if (j.is_discarded() || !j.is_object()) return fail("the kernel sent something that is not a JSON object");
  KernelEvent e;
  e.id = str_field(j, "id");
  e.tag = str_field(j, "tag");
  std::string kind = str_field(j, "event");
  if (kind == "ready") {
    e.kind = KernelEvent::Kind::kReady;
  } else if (kind == "started") {
    e.kind = KernelEvent::Kind::kStarted;
  } else if (kind == "output") {
    e.kind = KernelEvent::Kind::kOutput;
    e.is_stderr = str_field(j, "stream") == "stderr";
    e.text = str_field(j, "text");
  } else if (kind == "part") {
    e.kind = KernelEvent::Kind::kPart;
    e.field = str_field(j, "field");
    e.text = str_field(j, "text");
    if (auto it = j.find("index"); it != j.end() && it->is_number_integer()) e.index = it->get<int64_t>();
  } else if (kind == "request") {
    e.kind = KernelEvent::Kind::kRequest;
    if (auto it = j.find("line"); it != j.end() && it->is_string()) e.request.line = it->get<std::string>();
    e.request.bytes = count_field(j, "bytes");
  } else if (kind == "answer") {
    e.kind = KernelEvent::Kind::kAnswer;
    e.answer = answer_fields(j);
    if (auto it = j.find("truncated"); it != j.end() && it->is_array())
      for (const auto& f : *it)
        if (f.is_string()) e.truncated.push_back(f.get<std::string>());
  } else if (kind == "kernel_exited") {
    e.kind = KernelEvent::Kind::kKernelExited;
    e.text = str_field(j, "reason");
  }
  return e;
}

std::string new_protocol_tag() { return new_job_id() + new_job_id(); }  // 2 x 64 bits of getrandom(2)

bool KernelStream::could_be_marked() const {
  size_t n = std::min(mark_.size(), pending_.size());
  return pending_.compare(0, n, mark_, 0, n) == 0;
}

void KernelStream::feed(std::string_view bytes, std::vector<Piece>& out) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    if (discarding_) {  // the rest of a line that was too long
      if (nl == std::string_view::npos) return;
      bytes.remove_prefix(nl + 1);
      discarding_ = false;
      continue;
    }
    size_t take = nl == std::string_view::npos ? bytes.size() : nl + 1;
    pending_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    bool complete = pending_.back() == '\n';
    if (!could_be_marked()) {
      out.push_back({Piece::Kind::kRaw, std::exchange(pending_, {})});
    } else if (pending_.size() > max_line_) {
      pending_.clear();
      discarding_ = !complete;
      out.push_back({Piece::Kind::kDropped, "a protocol line over " + std::to_string(max_line_) + " bytes"});
    } else if (complete && pending_.size() > mark_.size()) {
      // JSON never holds the mark's first byte (0x1e) unescaped, so a mark
      // inside a line begins a new one: what comes before it is a line cut
      // short when its writer died (a kernel killed while it sent), and the
      // keeper's next line must not be lost with it.
      size_t last = pending_.rfind(mark_);
      if (last != 0 && last != std::string::npos) {
        out.push_back({Piece::Kind::kDropped, "a protocol line cut short"});
        pending_.erase(0, last);
      }
      out.push_back({Piece::Kind::kLine, pending_.substr(mark_.size(), pending_.size() - mark_.size() - 1)});
      pending_.clear();
    } else if (complete) {  // a newline inside what looked like a mark: raw after all
      out.push_back({Piece::Kind::kRaw, std::exchange(pending_, {})});
    }
  }
}

namespace {

// The longest prefix of `text` of at most `n` bytes that does not end inside a
// UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, size_t n) {
  if (text.size() <= n) return text;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

}  // namespace

void AnswerAssembler::add_text(std::string& to, size_t cap, bool& cut, std::string_view text) {
  if (cut || text.empty()) return;
  size_t room = cap - std::min(cap, to.size());
  auto kept = utf8_prefix(text, room);
  to.append(kept);
  if (kept.size() < text.size()) cut = true;
}

void AnswerAssembler::end_figure() {
  if (figure_index_ >= 0 && !figure_dropped_) {
    figure_bytes_ += figure_.size();
    r_.figures_png_base64.push_back(std::move(figure_));
  }
  figure_.clear();
  figure_dropped_ = false;
}

void AnswerAssembler::add_figure(int64_t index, std::string_view text) {
  if (index != figure_index_) {
    if (index < figure_index_) return;  // figures come in order; an old one does not come back
    end_figure();
    figure_index_ = index;
    if (r_.figures_png_base64.size() >= kMaxFigures) figure_dropped_ = true;
  }
  if (figure_dropped_) {
    r_.truncated.figures = true;
    return;
  }
  if (figure_bytes_ + figure_.size() + text.size() > caps_.figures_bytes) {
    figure_.clear();  // a piece of a PNG is no figure: leave it out whole
    figure_dropped_ = true;
    r_.truncated.figures = true;
    return;
  }
  figure_.append(text);
}

void AnswerAssembler::part(const KernelEvent& e) {
  if (e.field == "value") add_text(r_.result, caps_.value_bytes, r_.truncated.value, e.text);
  else if (e.field == "html") add_text(r_.html, caps_.html_bytes, r_.truncated.html, e.text);
  else if (e.field == "error") add_text(r_.error, caps_.error_bytes, r_.truncated.error, e.text);
  else if (e.field == "figure") add_figure(e.index, e.text);
}

CallResult AnswerAssembler::finish(const KernelEvent& answer) {
  const CallResult& a = answer.answer;
  add_text(r_.result, caps_.value_bytes, r_.truncated.value, a.result);
  add_text(r_.html, caps_.html_bytes, r_.truncated.html, a.html);
  add_text(r_.error, caps_.error_bytes, r_.truncated.error, a.error);
  for (const auto& f : a.figures_png_base64) add_figure(figure_index_ + 1, f);
  end_figure();
  for (const auto& field : answer.truncated) {
    if (field == "value") r_.truncated.value = true;
    else if (field == "html") r_.truncated.html = true;
    else if (field == "error") r_.truncated.error = true;
    else if (field == "figures") r_.truncated.figures = true;
  }
  CallResult r = std::move(r_);
  r.id = a.id;
  r.status = a.status;
  r.cwd = a.cwd.substr(0, std::min<size_t>(a.cwd.size(), 4096));
  r.exit_code = a.exit_code;
  r.ms = a.ms;
  r.requests_over_lines = a.requests_over_lines;
  r.requests_over_bytes = a.requests_over_bytes;
  r_ = CallResult{};
  return r;
}

void OutputCollector::append(std::string_view text) {
  size_t room = cap_ - text_.size();
  size_t take = std::min(room, text.size());
  text_.append(text.substr(0, take));
  dropped_ += text.size() - take;
}

std::string OutputCollector::take() {
  std::string out = std::move(text_);
  if (dropped_ > 0)
    out += "\n[airlock: output cut at " + std::to_string(cap_) + " bytes; " + std::to_string(dropped_) +
           " more bytes were not kept]\n";
  text_.clear();
  dropped_ = 0;
  return out;
}

}  // namespace airlock::jobs
