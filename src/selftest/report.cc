#include "selftest/report.h"

#include <cstdio>

#include "base/terminal_text.h"
#include "base/utf8.h"

namespace airlock::selftest {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kHeld: return "held";
    case Verdict::kBroken: return "broken";
    case Verdict::kSkipped: return "skipped";
  }
  return "broken";
}

int exit_status(const Report& r) {
  bool ran = false;
  for (const auto& it : r.items) {
    if (it.verdict == Verdict::kBroken) return 1;
    ran |= it.verdict == Verdict::kHeld;
  }
  return ran ? 0 : 1;
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& it : r.items)
    items.push_back({{"name", it.name},
                     {"verdict", to_string(it.verdict)},
                     {"attempted", it.attempted},
                     {"answer", it.answer},
                     {"why", it.why},
                     {"evidence", it.evidence}});
  return {{"target", r.target},
          {"started_at", r.started_at},
          {"duration_ms", r.duration_ms},
          {"passed", exit_status(r) == 0},
          {"items", items}};
}

std::string render_text(const Report& r) {
  std::string out = "airlock selftest against " + quoted_text(r.target) + "\n";
  size_t held = 0, broken = 0;
  for (const auto& it : r.items) {
    held += it.verdict == Verdict::kHeld;
    broken += it.verdict == Verdict::kBroken;
    const char* mark = it.verdict == Verdict::kHeld ? "HELD   " : it.verdict == Verdict::kBroken ? "BROKEN " : "SKIPPED";
    out += "\n" + std::string(mark) + " " + quoted_text(it.name) + "\n";
    out += "  attempted: " + quoted_text(it.attempted) + "\n";
    out += "  answer:    " + quoted_text(it.answer) + "\n";
    if (!it.why.empty()) out += "  why:       " + quoted_text(it.why) + "\n";
    if (!it.evidence.empty()) {
      out += "  evidence: ";
      for (const auto& e : it.evidence) out += " " + quoted_text(e);
      out += "\n";
    }
  }
  out += "\n" + std::to_string(held) + " held, " + std::to_string(broken) + " broken, " +
         std::to_string(r.items.size() - held - broken) + " skipped in " + std::to_string(r.duration_ms) + " ms: " +
         (exit_status(r) == 0 ? "PASS" : "FAIL") + "\n";
  return out;
}

std::string html_escape(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    size_t n = utf8_sequence(text, i, &cp);
    if (n == 0) {  // not UTF-8: shown as the byte's escape
      auto b = static_cast<unsigned char>(text[i++]);
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 0xf];
      continue;
    }
    bool control = (cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7f && cp < 0xa0);
    bool bidi = (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f;
    if (control || bidi) {
      char buf[16];
      std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp == '&') {
      out += "&amp;";
    } else if (cp == '<') {
      out += "&lt;";
    } else if (cp == '>') {
      out += "&gt;";
    } else if (cp == '"') {
      out += "&quot;";
    } else if (cp == '\'') {
      out += "&#39;";
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string render_html(const Report& r) {
  bool pass = exit_status(r) == 0;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
      "<title>airlock selftest</title><style>"
      "body{font-family:sans-serif;margin:2em;max-width:70em}td,th{vertical-align:top;text-align:left;padding:.3em .6em;"
      "border-bottom:1px solid #ddd}pre{white-space:pre-wrap;margin:0}.held{color:#060}.broken{color:#a00;"
      "font-weight:bold}.skipped{color:#666}</style></head><body>\n";
  out += "<h1>airlock selftest: " + std::string(pass ? "PASS" : "FAIL") + "</h1>\n";
  out += "<p>Against " + html_escape(r.target) + ", started " + html_escape(r.started_at) + ", " +
         std::to_string(r.duration_ms) + " ms.</p>\n<table>\n"
         "<tr><th>property</th><th>verdict</th><th>attempted</th><th>answer</th><th>evidence</th></tr>\n";
  for (const auto& it : r.items) {
    std::string v(to_string(it.verdict));
    out += "<tr><td>" + html_escape(it.name) + "</td><td class=\"" + v + "\">" + v;
    if (!it.why.empty()) out += "<br><pre>" + html_escape(it.why) + "</pre>";
    out += "</td><td><pre>" + html_escape(it.attempted) + "</pre></td><td><pre>" + html_escape(it.answer) +
           "</pre></td><td>";
    for (const auto& e : it.evidence) out += "<code>" + html_escape(e) + "</code><br>";
    out += "</td></tr>\n";
  }
  out += "</table>\n</body></html>\n";
  return out;
}

}  // namespace airlock::selftest
