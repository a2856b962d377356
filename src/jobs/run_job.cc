#include "jobs/run_job.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "jobs/job_sandbox.h"
#include "jobs/outputs.h"
#include "jobs/state_dir.h"
#include "jobs/supervisor.h"
#include "jobs/uid_lease.h"
#include "sandbox/launcher.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

// Adds the time since the previous lap to the record's timing.
class Laps {
 public:
  explicit Laps(Timing& timing) : timing_(timing) {}
  void lap(const char* phase) {
    auto now = std::chrono::steady_clock::now();
    timing_.add(phase, std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  Timing& timing_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Runs the job in a sandbox and fills `rec`. An Error means airlock failed.
Status run_in_sandbox(const RunRequest& req, const RunEnvironment& env, JobDir& job,
                      JobRecord& rec, std::optional<UidLease>& lease,
                      std::unique_ptr<sandbox::Cgroup>& cgroup, Mounts& mounts) {
  const JobPolicy& p = req.policy;
  Laps laps(rec.timing);
  sandbox::Command command = job_command(req);
  if (auto encoded = sandbox::encode_command(command); !encoded) {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = encoded.error().what;
    return {};
  }
  auto inputs = make_input_mount(p.inputs);
  if (!inputs) return std::unexpected(inputs.error());
  std::string input_dir = "/proc/self/fd/" + std::to_string(inputs->get());
  auto admission = workspace::admit_inputs(req.inputs, input_dir, p.inputs);
  if (!admission) return std::unexpected(admission.error());
  rec.inputs = admission->inputs;
  if (admission->rejection) {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = *admission->rejection;
    return {};
  }
  laps.lap("admit");

  auto leased = UidLease::acquire();
  if (!leased) return std::unexpected(leased.error());
  lease.emplace(std::move(*leased));
  sandbox::IdMap ids{lease->base()};
  rec.host_uid = ids.host_uid_of_job();
  auto group = env.cgroups->create(rec.id, {p.memory_bytes, p.pids, p.cpus});
  if (!group) return std::unexpected(group.error());
  cgroup = std::move(*group);
  laps.lap("cgroup");
  auto made = make_work_mounts(p, ids);
  if (!made) return std::unexpected(made.error());
  mounts = std::move(*made);
  mounts.inputs = std::move(*inputs);
  laps.lap("mounts");
  std::string root = job.sub("root");
  if (::mkdir(root.c_str(), 0711) < 0) return fail_errno("create " + root);
  auto built = build_job_spec(req, root, mounts, env.state_dir + "/cache");
  if (!built) return std::unexpected(built.error());
  rec.image_name = built->image.name;
  rec.image_digest = built->image.digest;
  sandbox::SandboxSpec* spec = &built->spec;
  laps.lap("spec");

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return fail_errno("create the stdout pipe");
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) < 0) return fail_errno("create the stderr pipe");
  UniqueFd err_r(err[0]), err_w(err[1]);

  auto process = sandbox::launch_sandbox({spec, ids, cgroup.get(), std::move(out_w), std::move(err_w)});
  if (!process) return std::unexpected(process.error());
  laps.lap("prepare");
  if (auto st = process->start(command); !st) return st;
  laps.lap("start");
  SuperviseOptions opt{p.timeout_ms, p.cpu_time_ms, p.stdout_cap_bytes, env.echo_stdout,
                       env.echo_stderr, env.cancel_fd};
  auto run = supervise(*process, *cgroup, std::move(out_r), std::move(err_r), opt);
  if (!run) return std::unexpected(run.error());
  laps.lap("run");
  if (auto st = process->wait(); !st) return std::unexpected(st.error());
  if (auto st = cgroup->kill_all(); !st) return st;  // nothing may run while outputs are read
  rec.cleanup.removed.push_back("processes");
  laps.lap("stop");

  RunFacts facts;
  if (run->wait_status) {
    int ws = *run->wait_status;
    if (WIFEXITED(ws)) facts.exit_code = WEXITSTATUS(ws);
    if (WIFSIGNALED(ws)) facts.signal = WTERMSIG(ws);
  }
  facts.timed_out = run->timed_out;
  facts.cpu_exceeded = run->cpu_exceeded;
  facts.cancelled = run->cancelled;
  auto usage = cgroup->usage();
  if (!usage) return std::unexpected(usage.error());
  facts.oom_kills = usage->oom_kills;
  rec.usage = {run->wall_ms, usage->cpu_ns / 1'000'000, usage->peak_memory_bytes};
  if (p.cpu_time_ms && usage->cpu_ns >= p.cpu_time_ms * 1'000'000) facts.cpu_exceeded = !facts.cancelled && !facts.timed_out;
  rec.stdout_stream = std::move(run->out);
  rec.stderr_stream = std::move(run->err);
  if (rec.stdout_stream.truncated) rec.add_limit("stdout");
  if (rec.stderr_stream.truncated) rec.add_limit("stderr");
  if (usage->pids_limit_hit) rec.add_limit("pids");
  if (usage->oom_kills > 0) rec.add_limit("memory");
  if (facts.timed_out) rec.add_limit("wall_time");
  if (facts.cpu_exceeded) rec.add_limit("cpu_time");
  note_full_mounts(mounts, rec);

  auto collected = collect_job_outputs(mounts.output.get(), job.sub("outputs"), p.outputs);
  if (!collected) return std::unexpected(collected.error());
  rec.outputs = std::move(collected->outputs);
  for (const auto& l : collected->limits_hit) rec.add_limit(l);
  facts.outputs_rejected = collected->any_rejected;
  laps.lap("collect");

  auto decision = decide_outcome(facts, p.timeout_ms, p.cpu_time_ms);
  rec.outcome = decision.outcome;
  rec.reason = decision.reason;
  rec.exit_code = facts.exit_code;
  rec.signal = facts.signal;
  if (rec.outcome == Outcome::kSucceeded && !req.output_dir.empty()) {
    if (auto st = publish_outputs(job.sub("outputs"), rec.outputs, req.output_dir); !st)
      return fail_with("copy outputs to " + req.output_dir + ": " + st.error().what, st.error().err);
  }
  return {};
}

JobRecord new_record(const RunRequest& req, const RunEnvironment& env) {
  JobRecord rec;
  rec.id = new_job_id();
  rec.owner = env.owner;
  rec.command = req.command;
  rec.image_name = req.image;
  rec.policy = req.policy;
  rec.started_at = now_rfc3339();
  rec.sandbox_uid = kSandboxUid;
  rec.cgroup_backend = env.cgroups ? env.cgroups->describe() : "";
  return rec;
}

}  // namespace

std::string record_path(const std::string& state_dir, const std::string& id) {
  return state_dir + "/records/" + id + ".json";
}

JobRecord run_job(const RunRequest& req, const RunEnvironment& env) {
  JobRecord rec = new_record(req, env);
  auto started = std::chrono::steady_clock::now();
  Status result;
  std::optional<UidLease> lease;  // destroyed last: after every process is dead
  std::optional<JobDir> job;
  std::unique_ptr<sandbox::Cgroup> cgroup;
  Mounts mounts;
  if (req.image != "host") {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = "unknown image '" + req.image + "' (available: host)";
  } else if (auto dir = JobDir::create(env.state_dir, rec.id); !dir) {
    result = std::unexpected(dir.error());
  } else {
    job.emplace(std::move(*dir));
    result = run_in_sandbox(req, env, *job, rec, lease, cgroup, mounts);
  }
  if (!result) {
    rec.outcome = Outcome::kSandboxError;
    rec.reason = result.error().message();
  }

  // Cleanup, in reverse order of creation; each step is recorded.
  Laps laps(rec.timing);
  bool had_mounts = mounts.output.valid();
  mounts = Mounts{};
  if (had_mounts) rec.cleanup.removed.push_back("mounts");
  if (cgroup) {
    auto killed = cgroup->kill_all();
    auto removed = killed ? cgroup->remove() : killed;
    if (removed) rec.cleanup.removed.push_back("cgroup");
    else rec.cleanup.failed.push_back("cgroup: " + removed.error().message());
  }
  if (job) {
    if (auto st = job->remove(); st) rec.cleanup.removed.push_back("staging");
    else rec.cleanup.failed.push_back("staging: " + st.error().message());
  }
  laps.lap("cleanup");
  if (rec.usage.wall_ms == 0 && rec.outcome == Outcome::kSandboxError)
    rec.usage.wall_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  std::chrono::steady_clock::now() - started)
                                                  .count());
  rec.finished_at = now_rfc3339();
  {
    std::string dir = env.state_dir + "/records";
    ::mkdir(env.state_dir.c_str(), 0700);
    ::mkdir(dir.c_str(), 0700);
    if (auto st = sys::write_file_atomic(record_path(env.state_dir, rec.id), record_text(rec), 0600); !st)
      rec.cleanup.failed.push_back("store record: " + st.error().message());
  }
  return rec;
}

}  // namespace airlock::jobs
