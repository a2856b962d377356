#include "selftest/judge.h"

#include <algorithm>
#include <map>

#include "base/base64.h"

namespace airlock::selftest {

using json = nlohmann::json;

namespace {

const json& record_of(const json& view) {
  static const json empty = json::object();
  if (!view.is_object()) return empty;
  auto it = view.find("record");
  return it != view.end() && it->is_object() ? *it : empty;
}

std::string text_of(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string outcome_line(const json& view) {
  const json& rec = record_of(view);
  std::string outcome = text_of(view, "outcome");
  std::string reason = text_of(rec, "reason");
  return "outcome " + (outcome.empty() ? "(none)" : outcome) + (reason.empty() ? "" : ": " + reason);
}

std::string shorten(std::string s, size_t n = 300) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

}  // namespace

std::vector<ProbeLine> parse_probe_lines(std::string_view text) {
  std::vector<ProbeLine> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    if (line.substr(0, 6) != "PROBE ") continue;
    line.remove_prefix(6);
    size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos) continue;
    size_t sp2 = line.find(' ', sp1 + 1);
    ProbeLine p;
    p.name = std::string(line.substr(0, sp1));
    p.status = std::string(line.substr(sp1 + 1, sp2 == std::string_view::npos ? std::string_view::npos : sp2 - sp1 - 1));
    if (sp2 != std::string_view::npos) p.detail = std::string(line.substr(sp2 + 1));
    out.push_back(std::move(p));
  }
  return out;
}

std::string record_stdout(const json& view) {
  const json& rec = record_of(view);
  auto it = rec.find("stdout");
  if (it == rec.end() || !it->is_object()) return "";
  std::string text = text_of(*it, "text");
  if (text_of(*it, "encoding") == "base64") return base64_decode(text).value_or("");
  return text;
}

Judgement judge_probes(const json& view, const std::vector<std::string>& expected) {
  Judgement j;
  auto lines = parse_probe_lines(record_stdout(view));
  std::map<std::string, std::vector<const ProbeLine*>> by_name;
  for (const auto& l : lines) by_name[l.name].push_back(&l);
  std::vector<std::string> broken;
  for (const auto& name : expected) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      broken.push_back(name + ": no answer from the probe");
      continue;
    }
    for (const ProbeLine* l : it->second) {
      if (!j.answer.empty()) j.answer += "; ";
      j.answer += l->name + " " + l->status + (l->detail.empty() ? "" : " (" + shorten(l->detail, 120) + ")");
      if (l->status != "BLOCKED" && l->status != "CLEAN") broken.push_back(l->name + " " + l->status + " " + l->detail);
    }
  }
  if (text_of(view, "outcome") != "succeeded")
    broken.push_back("the probe job did not run to its end (" + outcome_line(view) + ")");
  j.held = broken.empty();
  for (const auto& b : broken) j.why += (j.why.empty() ? "" : "; ") + shorten(b);
  if (j.answer.empty()) j.answer = outcome_line(view);
  return j;
}

Judgement judge_valid_job(const json& view) {
  Judgement j;
  const json& rec = record_of(view);
  std::vector<std::string> broken;
  if (text_of(view, "outcome") != "succeeded") broken.push_back(outcome_line(view));
  size_t passed = 0, checks = 0;
  auto cs = rec.find("checks");
  if (cs != rec.end() && cs->is_array())
    for (const auto& c : *cs) {
      ++checks;
      if (c.is_object() && c.value("passed", false)) ++passed;
      else broken.push_back("check " + text_of(c, "label") + " failed: " + text_of(c, "detail"));
    }
  if (checks == 0) broken.push_back("the record has no check results");
  size_t accepted = 0;
  auto outs = rec.find("outputs");
  if (outs != rec.end() && outs->is_array())
    for (const auto& o : *outs) {
      if (text_of(o, "verdict") == "accepted") ++accepted;
      else broken.push_back("output " + text_of(o, "name") + " " + text_of(o, "verdict") + ": " + text_of(o, "reason"));
    }
  if (accepted == 0) broken.push_back("no accepted output");
  j.answer = outcome_line(view) + "; " + std::to_string(passed) + "/" + std::to_string(checks) + " checks passed; " +
             std::to_string(accepted) + " output(s) accepted";
  j.held = broken.empty();
  for (const auto& b : broken) j.why += (j.why.empty() ? "" : "; ") + shorten(b);
  return j;
}

Judgement judge_rejected_output(const json& view) {
  Judgement j;
  const json& rec = record_of(view);
  std::string failed;
  auto cs = rec.find("checks");
  if (cs != rec.end() && cs->is_array())
    for (const auto& c : *cs)
      if (c.is_object() && !c.value("passed", true)) failed = text_of(c, "label") + ": " + text_of(c, "detail");
  std::string line = outcome_line(view);
  // The reason usually names the failed check already.
  bool named = !failed.empty() && line.find(failed.substr(0, failed.find(':'))) != std::string::npos;
  j.answer = line + (failed.empty() || named ? "" : "; failed check " + shorten(failed, 200));
  if (text_of(view, "outcome") != "output_rejected")
    j.why = "a wrong output was not rejected (" + outcome_line(view) + ")";
  else if (failed.empty())
    j.why = "output_rejected, but no check failed: the check did not decide it";
  j.held = j.why.empty();
  return j;
}

Judgement judge_cancelled(const json& view) {
  Judgement j;
  j.answer = outcome_line(view);
  j.held = text_of(view, "outcome") == "cancelled";
  if (!j.held) j.why = "the job was not cancelled: " + outcome_line(view);
  return j;
}

Judgement judge_record_cleanup(const json& view) {
  Judgement j;
  const json& rec = record_of(view);
  auto it = rec.find("cleanup");
  if (it == rec.end() || !it->is_object()) {
    j.answer = "the record has no cleanup";
    j.why = j.answer;
    return j;
  }
  std::string removed, failed;
  for (const auto& r : it->value("removed", json::array())) removed += (removed.empty() ? "" : ",") + (r.is_string() ? r.get<std::string>() : r.dump());
  for (const auto& f : it->value("failed", json::array())) failed += (failed.empty() ? "" : ",") + (f.is_string() ? f.get<std::string>() : f.dump());
  std::string after;  // a service job's sandbox, removed once its record was stored (docs/job-record.md)
  for (const auto& a : it->value("after_record", json::array())) after += (after.empty() ? "" : ",") + (a.is_string() ? a.get<std::string>() : a.dump());
  j.answer = "removed " + (removed.empty() ? "nothing" : removed) + (after.empty() ? "" : "; after the record " + after) +
             (failed.empty() ? "" : "; failed " + failed);
  j.held = it->value("ok", false) && failed.empty();
  if (!j.held) j.why = "cleanup did not finish: " + j.answer;
  return j;
}

Judgement judge_refused(int status, const std::string& body, const std::vector<int>& refused) {
  Judgement j;
  std::string code, message;
  auto e = json::parse(body, nullptr, false);
  if (e.is_object() && e.contains("error") && e["error"].is_object()) {
    code = text_of(e["error"], "code");
    message = text_of(e["error"], "message");
  }
  j.answer = "HTTP " + std::to_string(status) + (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + shorten(message, 200));
  j.held = std::find(refused.begin(), refused.end(), status) != refused.end();
  if (!j.held) j.why = "expected a refusal, got " + j.answer;
  return j;
}

}  // namespace airlock::selftest
