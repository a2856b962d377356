// refuse_data_request: a job's or a session's data request refused with a
// reason, through the API (POST /v1/jobs/{id}/requests/{rid}/refuse or
// /v1/sessions/{id}/requests/{rid}/refuse) with the caller's key, so that
// the refusal is recorded under that key like any other API call.
#include "http/url.h"
#include "mcp/content.h"
#include "mcp/data_requests.h"
#include "mcp/tools.h"

namespace airlock::mcp {

using json = nlohmann::json;

ToolResult refuse_data_request(const json& args, ApiConnection& api, const CallContext&) {
  bool job = args.contains("job_id"), session = args.contains("session_id");
  if (job == session) return error_result("give exactly one of job_id or session_id");
  std::string owner = job ? args["job_id"].get<std::string>() : args["session_id"].get<std::string>();
  std::string request_id = args["request_id"];
  std::string path = std::string(job ? "/v1/jobs/" : "/v1/sessions/") + api::percent_encode(owner) +
                     "/requests/" + api::percent_encode(request_id) + "/refuse";
  auto r = api.call("POST", path, json{{"reason", args["reason"]}}.dump());
  if (!ok(r)) return api_error_result(r);
  json v = body_json(r);
  // A session answers the request, a job its whole view: find the request's answer in either.
  json answer = json{{"state", "refused"}, {"reason", args["reason"]}};
  if (v.is_object() && v.contains("answer") && v["answer"].is_object()) answer = v["answer"];
  for (const auto& q : job_requests(v))
    if (q["id"] == request_id) answer = q["answer"];
  ToolResult out;
  out.structured = {{job ? "job_id" : "session_id", owner},
                    {"request_id", request_id},
                    {"state", answer.value("state", "refused")},
                    {"reason", answer.value("reason", args["reason"].get<std::string>())}};
  if (answer.contains("key_id")) out.structured["key_id"] = answer["key_id"];
  out.content.push_back(text_block(
      "request " + request_id + " of " + (job ? "job " : "session ") + owner +
      " is refused; the refusal and its reason are recorded. " +
      (job ? "The job stays as it ended (input_requested); tell the user the data was not given."
           : "Code in the session can read the answer with airlock_request.answer(\"" +
                 request_id + "\").")));
  return out;
}

}  // namespace airlock::mcp
