// What the selftest concludes from what the service answered: job views
// (GET /v1/jobs/{id} with the record) and the probes' lines. Pure, so that
// every conclusion is tested without a service. A probe prints one line per
// attempt, "PROBE <name> <BLOCKED|CLEAN|OPEN|FOUND> <detail>": BLOCKED and
// CLEAN mean the boundary held; anything else, or a probe that printed
// nothing, means it did not.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::selftest {

struct Judgement {
  bool held = false;
  std::string answer;  // what the boundary answered, one line
  std::string why;     // what did not hold
};

struct ProbeLine {
  std::string name, status, detail;
};
std::vector<ProbeLine> parse_probe_lines(std::string_view text);

// The job's stdout as the record keeps it (utf-8 text or base64).
std::string record_stdout(const nlohmann::json& view);

// Every probe of `expected` answered, each BLOCKED or CLEAN, and the job
// itself ended `succeeded` (a probe that crashed proves nothing).
Judgement judge_probes(const nlohmann::json& view, const std::vector<std::string>& expected);

// A valid job: succeeded, every declared check passed, every output accepted.
Judgement judge_valid_job(const nlohmann::json& view);
// A wrong output: output_rejected, with a failed check naming the output.
Judgement judge_rejected_output(const nlohmann::json& view);
// A cancelled job: outcome cancelled.
Judgement judge_cancelled(const nlohmann::json& view);
// The engine's own account of its cleanup: cleanup.ok, nothing failed.
Judgement judge_record_cleanup(const nlohmann::json& view);

// HTTP answers to a request that must be refused: `status` must be one of `refused`.
Judgement judge_refused(int status, const std::string& body, const std::vector<int>& refused);

}  // namespace airlock::selftest
