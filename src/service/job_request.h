// The body of POST /v1/jobs, checked field by field, and the engine's
// request it becomes. Pure: no files, no clock; every refusal is one
// clear message naming the field.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "egress/policy.h"
#include "jobs/policy.h"
#include "jobs/run_request.h"

namespace airlock::service {

// What a tenant's jobs may ask for at most.
struct PolicyCaps {
  uint64_t max_timeout_ms = 600'000;
  uint64_t max_cpu_time_ms = 600'000;
  uint64_t max_memory_bytes = 1ull << 30;
  uint64_t max_pids = 512;
  double max_cpus = 2;
  std::vector<egress::Rule> network;  // the destinations its jobs may name (service/egress_caps.h)
};

struct JobRequest {
  std::vector<std::string> command;  // what runs (for "code": the interpreter + /inputs/<code_name>)
  std::optional<std::string> code;   // source to admit as an input named code_name
  std::string code_name;             // "main.py" or "main.sh"
  std::vector<std::string> input_ids;
  std::string snapshot;  // digest of a snapshot of the tenant's to fill /workspace from; "" none
  std::string image;  // "": the service's default_image (set when the job is accepted)
  std::string profile = "standard";  // sandbox/profile.h
  jobs::JobPolicy policy;
  nlohmann::json checks = nlohmann::json::array();
  int wait_s = 0;  // answer when the job ends, or after this many seconds
  // A follow-up job: it answers these requests of an earlier job
  // (docs/data-requests.md). record_sha256 is the service's, set when the
  // job is accepted.
  struct Answers {
    std::string job;
    std::vector<std::string> requests;
    std::string record_sha256;
  };
  std::optional<Answers> answers;
};

inline constexpr int kMaxWaitSeconds = 300;

Result<JobRequest> parse_job_request(const nlohmann::json& body, const PolicyCaps& caps);

// The "answers" object of a follow-up job: {"job", "requests": ["r1", ...]}.
Result<JobRequest::Answers> parse_answers(const nlohmann::json& answers);

// The "policy" object of a job (also a session's), over the defaults in `out`.
Status parse_policy(const nlohmann::json& policy, const PolicyCaps& caps, jobs::JobPolicy& out);
// The pieces of a request body's checks that jobs and sessions share; every
// refusal names the field.
std::unexpected<Error> bad_field(const std::string& field, const std::string& why);
// Refuses the first key of `obj` not in `known` (named as `where` + key).
Status only_known_fields(const nlohmann::json& obj, const std::string& where, const std::set<std::string>& known);
// A whole number of seconds in [lo, hi].
Result<int> whole_seconds(const nlohmann::json& v, const std::string& field, int lo, int hi);
Result<std::string> parse_image(const nlohmann::json& v);            // "host", NAME or NAME@sha256:<hex>
Result<std::string> parse_snapshot_digest(const nlohmann::json& v);  // see is_snapshot_digest()
// The name of a profile (docs/profiles.md); `for_session` refuses the ones a
// session cannot use, saying why.
Result<std::string> parse_profile(const nlohmann::json& v, bool for_session);

// "sha256:<64 lower-case hex>": a snapshot's digest, as the store keeps it.
bool is_snapshot_digest(const std::string& text);
// The "inputs" array: uploaded file ids, at most 32, none twice.
Result<std::vector<std::string>> parse_input_ids(const nlohmann::json& inputs);

// Where the service puts one job's files and which operator files it uses:
// what a job request leaves open for the engine's RunRequest.
struct RunPlacement {
  std::vector<std::string> input_paths;  // host paths of the admitted files (code included)
  std::string output_dir;                // accepted outputs are copied here
  std::string state_dir;
  std::string image_dir;
  std::string snapshot_manifest, content_dir;  // both or neither
  // The operator's egress files, used only by a job with network rules.
  std::string egress_hosts_file, secrets_file, egress_ca_file;
};

// The engine's request for a job (jobs::run_job), built from the typed
// request: the policy travels as it was parsed, never as text.
jobs::RunRequest run_request_for(const JobRequest& request, const RunPlacement& placement);

}  // namespace airlock::service
