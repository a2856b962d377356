#include "store/usage_json.h"

#include <algorithm>

#include "base/json_parse.h"

namespace airlock::store {

namespace {

using nlohmann::json;

// A number as a JSON number (integers stay integers), 0 for anything else.
json number_or_zero(const json& v) { return v.is_number() ? v : json(0); }

json add(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) return a.get<int64_t>() + b.get<int64_t>();
  return a.get<double>() + b.get<double>();
}

const json* member(const json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

std::string closed_session_usage(const std::string& record_json) {
  json record = parse_json_or_discarded(record_json, kMaxStoredJsonDepth);
  if (record.is_discarded()) return "{}";
  const json* u = member(record, "usage");
  json usage = u && u->is_object() ? *u : json::object();
  json egress = 0;
  if (const json* events = member(record, "events"); events && events->is_structured())
    for (const json& e : *events) {
      const json* kind = member(e, "event");
      const json* attempts = member(e, "attempts");
      if (!kind || *kind != "network" || !attempts || !attempts->is_structured()) continue;
      for (const json& a : *attempts) {
        const json* up = member(a, "bytes_up");
        const json* down = member(a, "bytes_down");
        egress = add(egress, add(up ? number_or_zero(*up) : json(0), down ? number_or_zero(*down) : json(0)));
      }
    }
  usage["egress_bytes"] = egress;
  return usage.dump();
}

std::string open_session_usage(const std::vector<std::string>& call_jsons) {
  json cpu = 0, peak = 0;
  for (const std::string& text : call_jsons) {
    json call = parse_json_or_discarded(text, kMaxStoredJsonDepth);
    const json* usage = call.is_discarded() ? nullptr : member(call, "usage");
    if (!usage) continue;
    if (const json* c = member(*usage, "cpu_ms"); c && c->is_number()) cpu = add(cpu, *c);
    if (const json* p = member(*usage, "peak_memory_bytes"); p && p->is_number() &&
                                                            p->get<double>() > peak.get<double>())
      peak = *p;
  }
  return json{{"cpu_ms", cpu}, {"peak_memory_bytes", peak}}.dump();
}

std::string stored_string_at(const std::string& text, const char* pointer) {
  json doc = parse_json_or_discarded(text, kMaxStoredJsonDepth);
  if (doc.is_discarded()) return "";
  const json* v = &doc;
  std::string_view rest(pointer);
  while (v && !rest.empty()) {  // "/a/b": object members only
    rest.remove_prefix(1);
    size_t slash = rest.find('/');
    v = member(*v, std::string(rest.substr(0, slash)).c_str());
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  return v && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace airlock::store
