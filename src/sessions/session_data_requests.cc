#include "sessions/session_data_requests.h"

#include <utility>

#include "base/json_parse.h"

namespace airlock::service {

using json = nlohmann::json;

namespace {

const char* state_name(AnswerState s) {
  switch (s) {
    case AnswerState::kOpen: return "open";
    case AnswerState::kAnswered: return "answered";
    case AnswerState::kRefused: return "refused";
  }
  return "open";
}

json answer_json(const SessionDataRequest& r) {
  json a = {{"state", state_name(r.state)}};
  if (r.state == AnswerState::kAnswered) a.update({{"by_call", r.by_call}, {"at", r.at}, {"key_id", r.key_id}});
  if (r.state == AnswerState::kRefused) a.update({{"reason", r.reason}, {"at", r.at}, {"key_id", r.key_id}});
  return a;
}

json params_of(const std::string& params_json) {
  json p = parse_json_or_discarded(params_json);
  return p.is_object() ? p : json::object();
}

}  // namespace

std::string status_after_requests(const std::string& status, size_t accepted) {
  bool ran_to_an_end = status == "ok" || status == "error" || status == "input_requested";
  if (accepted > 0 && ran_to_an_end) return "input_requested";
  if (accepted == 0 && status == "input_requested") return "error";
  return status;
}

json refusal_json(const requests::Refusal& r) {
  json j = {{"reason", r.reason}, {"bytes", r.bytes}};
  if (r.lines != 1) j["lines"] = r.lines;
  return j;
}

CallRequests SessionDataRequests::admit(const std::string& call_id, const jobs::CallResult& result) {
  CallRequests out;
  const requests::Limits& limits = limits_.per_call;
  size_t looked_at = 0;
  uint64_t beyond_lines = result.requests_over_lines, beyond_bytes = result.requests_over_bytes;
  for (const auto& raw : result.data_requests) {
    if (looked_at++ >= limits.requests) {  // the engine keeps no more; a check, not a trust
      ++beyond_lines;
      beyond_bytes += raw.bytes;
      continue;
    }
    if (!raw.line || raw.line->size() > limits.bytes_per_request) {
      out.refused.push_back({"longer than " + std::to_string(limits.bytes_per_request) +
                                 " bytes: not read past the limit",
                             std::max<uint64_t>(raw.bytes, raw.line ? raw.line->size() : 0), 1});
      continue;
    }
    if (requests_.size() >= limits_.per_session) {
      out.refused.push_back({"the session has " + std::to_string(requests_.size()) +
                                 " data requests, its limit: close it or use a job",
                             raw.line->size(), 1});
      continue;
    }
    auto parsed = requests::parse_data_request(*raw.line, requests::request_id(requests_.size() + 1), limits);
    if (!parsed) {
      out.refused.push_back({parsed.error().message(), raw.line->size(), 1});
      continue;
    }
    out.ids.push_back(parsed->id);
    requests_.push_back({std::move(*parsed), call_id});
  }
  if (beyond_lines > 0) out.refused.push_back({requests::beyond_limit_reason(limits), beyond_bytes, beyond_lines});
  return out;
}

const SessionDataRequest* SessionDataRequests::find(const std::string& id) const {
  for (const auto& r : requests_)
    if (r.request.id == id) return &r;
  return nullptr;
}

SessionDataRequest* SessionDataRequests::find(const std::string& id) {
  return const_cast<SessionDataRequest*>(std::as_const(*this).find(id));
}

Status SessionDataRequests::answer(const std::vector<std::string>& ids, const std::string& by_call,
                                   const std::string& key_id, const std::string& at) {
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto* r = find(ids[i]);
    if (!r) return fail(ErrorKind::kNotFound, "answers: the session has no data request " + ids[i]);
    if (r->state != AnswerState::kOpen)
      return fail(ErrorKind::kRefused, "answers: data request " + ids[i] + " is " + state_name(r->state) + " already");
    for (size_t j = 0; j < i; ++j)
      if (ids[j] == ids[i]) return fail(ErrorKind::kInvalid, "answers: " + ids[i] + " is named twice");
  }
  for (const auto& id : ids) {
    auto* r = find(id);
    r->state = AnswerState::kAnswered;
    r->by_call = by_call;
    r->key_id = key_id;
    r->at = at;
  }
  return {};
}

Status SessionDataRequests::refuse(const std::string& id, const std::string& reason, const std::string& key_id,
                                   const std::string& at) {
  auto* r = find(id);
  if (!r) return fail(ErrorKind::kNotFound, "the session has no data request " + id);
  if (r->state != AnswerState::kOpen)
    return fail(ErrorKind::kRefused, "data request " + id + " is " + state_name(r->state) + " already");
  r->state = AnswerState::kRefused;
  r->reason = reason;
  r->key_id = key_id;
  r->at = at;
  return {};
}

std::vector<jobs::KnownAnswer> SessionDataRequests::known() const {
  std::vector<jobs::KnownAnswer> out;
  for (const auto& r : requests_)
    out.push_back({r.request.id, state_name(r.state), r.state == AnswerState::kRefused ? r.reason : ""});
  return out;
}

json SessionDataRequests::request_json(const std::string& id) const {
  const auto* r = find(id);
  if (!r) return json();
  const auto& q = r->request;
  return {{"id", q.id},
          {"name", q.name},
          {"why", q.why},
          {"description", q.description},
          {"params", params_of(q.params_json)},
          {"call_id", r->call_id},
          {"answer", answer_json(*r)}};
}

json SessionDataRequests::call_json(const CallRequests& call) const {
  json asked = json::array(), refused = json::array();
  for (const auto& id : call.ids) asked.push_back(request_json(id));
  for (const auto& r : call.refused) refused.push_back(refusal_json(r));
  return {{"data_requests", asked}, {"data_requests_refused", refused}};
}

json SessionDataRequests::to_json() const {
  json all = json::array();
  for (const auto& r : requests_) all.push_back(request_json(r.request.id));
  return {{"limits",
           {{"requests_per_call", limits_.per_call.requests},
            {"bytes_per_request", limits_.per_call.bytes_per_request},
            {"requests_per_session", limits_.per_session}}},
          {"requests", all}};
}

void join_answers(nlohmann::json& call_requests, const nlohmann::json& session_requests) {
  if (!call_requests.is_array() || !session_requests.is_array()) return;
  for (auto& r : call_requests) {
    if (!r.is_object() || !r.contains("id")) continue;
    for (const auto& s : session_requests)
      if (s.is_object() && s.value("id", json()) == r["id"] && s.contains("answer")) r["answer"] = s["answer"];
  }
}

}  // namespace airlock::service
