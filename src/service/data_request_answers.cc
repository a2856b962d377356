#include "service/data_request_answers.h"

#include <algorithm>

#include "base/utf8.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

const store::DataRequestAnswer* answer_of(const std::vector<store::DataRequestAnswer>& answers,
                                          const std::string& id) {
  auto it = std::find_if(answers.begin(), answers.end(), [&](const auto& a) { return a.request_id == id; });
  return it == answers.end() ? nullptr : &*it;
}

bool holds_request(const json& record, const std::string& id) {
  auto dr = record.find("data_requests");
  if (dr == record.end() || !dr->is_object()) return false;
  auto list = dr->find("requests");
  if (list == dr->end() || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(),
                     [&](const json& r) { return r.is_object() && r.value("id", json()) == id; });
}

}  // namespace

std::optional<ApiError> unanswerable(const std::string& job_id, const json& record,
                                     const std::vector<std::string>& request_ids,
                                     const std::vector<store::DataRequestAnswer>& answers) {
  for (const auto& id : request_ids)
    if (!record.is_object() || !holds_request(record, id))
      return ApiError{404, "not_found", "request " + id + " of job " + job_id + " not found"};
  if (record.value("outcome", json()) != "input_requested")
    return ApiError{409, "not_input_requested",
                    "job " + job_id + " did not end input_requested: its requests cannot be answered"};
  for (const auto& id : request_ids)
    if (const auto* a = answer_of(answers, id))
      return ApiError{409, "already_answered",
                      "request " + id + " of job " + job_id + " is already " +
                          (a->state == store::AnswerState::kAnswered ? "answered by job " + a->by_job : "refused")};
  return std::nullopt;
}

json data_requests_view(const json& record, const std::vector<store::DataRequestAnswer>& answers) {
  if (!record.is_object()) return nullptr;
  auto dr = record.find("data_requests");
  if (dr == record.end() || !dr->is_object()) return nullptr;
  json view = *dr;
  if (!view.contains("requests") || !view["requests"].is_array()) return view;
  for (auto& r : view["requests"]) {
    if (!r.is_object() || !r.contains("id") || !r["id"].is_string()) continue;
    const auto* a = answer_of(answers, r["id"].get<std::string>());
    if (a == nullptr)
      r["answer"] = {{"state", "open"}};
    else if (a->state == store::AnswerState::kAnswered)
      r["answer"] = {{"state", "answered"}, {"by_job", a->by_job}, {"at", a->at}};
    else
      r["answer"] = {{"state", "refused"}, {"reason", a->reason}, {"at", a->at}, {"key_id", a->key_id}};
  }
  return view;
}

std::optional<std::string> refusal_reason_problem(const json& body) {
  if (!body.is_object() || !body.contains("reason") || !body["reason"].is_string())
    return "reason: required, a string";
  for (const auto& [key, value] : body.items()) {
    (void)value;
    if (key != "reason") return key + ": unknown field";
  }
  const auto& reason = body["reason"].get_ref<const std::string&>();
  size_t chars = 0;
  for (size_t i = 0; i < reason.size(); ++chars) {
    const size_t len = utf8_sequence(reason, i);
    if (len == 0) return "reason: not valid UTF-8";
    i += len;
  }
  if (chars == 0 || chars > 1000) return "reason: must be 1-1000 characters";
  return std::nullopt;
}

}  // namespace airlock::service
