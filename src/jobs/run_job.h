// One job from request to record: admit inputs, build the sandbox, run and
// supervise it, kill everything, collect outputs, decide the outcome, clean
// up, and write the record. Never throws; every failure of airlock itself
// ends as outcome sandbox_error with the reason.
#pragma once

#include <string>

#include "jobs/record.h"
#include "jobs/run_request.h"
#include "sandbox/cgroup.h"

namespace airlock::jobs {

struct RunEnvironment {
  std::string state_dir;
  sandbox::CgroupBackend* cgroups = nullptr;
  std::string owner;
  int echo_stdout = -1;  // live copy of the program's output, or -1
  int echo_stderr = -1;
  int cancel_fd = -1;    // readable when the job must be cancelled, or -1
  std::string pool_socket;  // the warm pool; empty: pool.sock in the state directory
  // The record as a file in the state directory (records/ID.json, fsynced).
  // The service keeps its records in the store, whose commit is the one
  // durable write of a job; a second fsync there only delays the reply.
  bool record_file = true;
};

JobRecord run_job(const RunRequest& request, const RunEnvironment& env);

// Where run_job stored the record of `id`.
std::string record_path(const std::string& state_dir, const std::string& id);

}  // namespace airlock::jobs
