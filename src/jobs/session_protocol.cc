#include "jobs/session_protocol.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
namespace airlock::jobs {
namespace {

std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
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
  std::string kind = str_field(j, "event");
  if (kind == "ready") {
    e.kind = KernelEvent::Kind::kReady;
  } else if (kind == "started") {
    e.kind = KernelEvent::Kind::kStarted;
  } else if (kind == "output") {
    e.kind = KernelEvent::Kind::kOutput;
    e.is_stderr = str_field(j, "stream") == "stderr";
    e.text = str_field(j, "text");
  } else if (kind == "answer") {
    e.kind = KernelEvent::Kind::kAnswer;
    e.answer = answer_fields(j);
  } else if (kind == "kernel_exited") {
    e.kind = KernelEvent::Kind::kKernelExited;
    e.text = str_field(j, "reason");
  }
  return e;
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
