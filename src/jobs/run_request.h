// `airlock run` options -> a RunRequest. Pure: no files are touched here, so
// every error is a clear one-line message about the option.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "jobs/policy.h"
#include "requests/data_request.h"

namespace airlock::jobs {

struct RunRequest {
  std::vector<std::string> command;
  std::vector<std::string> inputs;  // host paths
  // A workspace snapshot restored into /workspace before the command starts
  // (docs/snapshots.md): its manifest file and the content directory that
  // holds its files. Both or neither.
  std::string snapshot_manifest;
  std::string content_dir;
  std::string output_dir;           // empty: outputs are only listed in the record
  std::string record_path;          // empty: not written besides the state dir
  bool json = false;
  bool quiet = false;  // no summary line on stderr (the service reads stderr as the program's)
  std::string image = "host";  // checked when the job starts (jobs/choose_image.h)
  std::string image_dir;       // empty: $AIRLOCK_IMAGE_DIR or <state_dir>/images
  // A profile's name (sandbox/profile.h); checked when the job runs, so that
  // an unknown one ends as input_rejected with a record.
  std::string profile = "standard";
  std::string start = "auto";  // auto, cold, warm, preloaded (see kRunUsage)
  std::string state_dir;  // empty: $AIRLOCK_STATE_DIR or /var/lib/airlock
  // The operator's egress files (docs/egress.md); never part of the policy.
  std::string egress_hosts_file;
  std::string secrets_file;
  std::string egress_ca_file;
  JobPolicy policy;
  // The operator's (config data_requests_per_job, data_request_bytes); never the tenant's.
  requests::Limits data_request_limits;
};

// `args` are the words after "run".
Result<RunRequest> parse_run_args(const std::vector<std::string>& args);

// "512", "64K", "256M", "1G", "1.5G" (binary units) -> bytes.
Result<uint64_t> parse_size(const std::string& text);
// "csv,png" -> file types (binary is never a choice).
Result<workspace::TypeSet> parse_type_list(const std::string& text);
// "10", "0.5" seconds -> milliseconds.
Result<uint64_t> parse_seconds(const std::string& text);

// [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes: the names --env accepts.
bool valid_env_name(const std::string& name);

extern const char* const kRunUsage;

}  // namespace airlock::jobs
