// The selftest's report (docs/selftest.md): one item per property of the
// boundary, each with what was attempted, what the boundary answered and the
// record ids as evidence; shown on a terminal, as HTML and as JSON. Pure.
// Everything in an item may come from a job (its output, its file names):
// the terminal text is made inert and the HTML escaped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::selftest {

enum class Verdict { kHeld, kBroken, kSkipped };
std::string_view to_string(Verdict v);  // "held", "broken", "skipped"

struct Item {
  std::string name;       // e.g. "network destination not approved"
  std::string attempted;  // what the selftest tried
  std::string answer;     // what the boundary answered
  Verdict verdict = Verdict::kBroken;
  std::string why;                    // what did not hold, or why it was skipped
  std::vector<std::string> evidence;  // job and record ids, HTTP statuses
};

struct Report {
  std::string target;      // "local (a serve of its own on 127.0.0.1:PORT)" or the URL
  std::string started_at;  // RFC 3339
  uint64_t duration_ms = 0;
  std::vector<Item> items;
};

// 0 when every item held (skipped ones aside) and at least one was run; 1 otherwise.
int exit_status(const Report& r);
nlohmann::json to_json(const Report& r);
std::string render_text(const Report& r);  // plain lines, job text made inert for a terminal
std::string render_html(const Report& r);  // one self-contained page, no script
std::string html_escape(std::string_view text);

}  // namespace airlock::selftest
