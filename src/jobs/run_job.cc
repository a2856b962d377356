#include "jobs/run_job.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "base/beside.h"
#include "jobs/choose_image.h"
#include "jobs/job_egress.h"
#include "jobs/job_sandbox.h"
#include "jobs/job_snapshot.h"
#include "jobs/outputs.h"
#include "jobs/state_dir.h"
#include "jobs/supervisor.h"
#include "pool/obtain_sandbox.h"
#include "pool/prepared.h"
#include "sandbox/launcher.h"
#include "sandbox/profile.h"
#include "sandbox/protocol.h"
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

// The job's data request channel (docs/data-requests.md): a pipe whose write
// end the payload gets as sandbox::kRequestFd, named in its environment
// with the limits the host applies.
struct Channel {
  UniqueFd read_end, write_end;
};

Result<Channel> open_request_channel(const requests::Limits& limits, std::vector<std::string>& env) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) < 0) return fail_errno("create the job's data request channel");
  Channel channel{UniqueFd(fds[0]), UniqueFd(fds[1])};
  std::erase_if(env, [](const std::string& e) { return e.rfind("AIRLOCK_REQUEST_", 0) == 0; });
  env.push_back("AIRLOCK_REQUEST_FD=" + std::to_string(sandbox::kRequestFd));
  env.push_back("AIRLOCK_REQUEST_LIMIT=" + std::to_string(limits.requests));
  env.push_back("AIRLOCK_REQUEST_BYTES=" + std::to_string(limits.bytes_per_request));
  return channel;
}

// Runs the job in a sandbox and fills `rec`. An Error means airlock failed.
Status run_in_sandbox(const RunRequest& req, const RunEnvironment& env, JobRecord& rec,
                      std::optional<PreparedSandbox>& sb) {
  const JobPolicy& p = req.policy;
  Laps laps(rec.timing);
  auto image = choose_image(req.image, req.image_dir, env.state_dir);  // held until the job ends
  if (!image) return std::unexpected(image.error());
  if (!image->refusal.empty()) {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = image->refusal;
    return {};
  }
  sandbox::Command command = job_command(req);
  apply_image_env(image->source, p.env, command.env);
  if (auto st = sandbox::apply_profile(*sandbox::find_profile(req.profile), p.env, command); !st) return st;
  auto channel = open_request_channel(req.data_request_limits, command.env);
  if (!channel) return std::unexpected(channel.error());
  if (auto encoded = sandbox::encode_command(command); !encoded) {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = encoded.error().what;
    return {};
  }
  std::optional<EgressPlan> egress_plan;
  if (!p.allow.empty()) {  // the operator's files are read before any sandbox is taken
    auto plan = prepare_egress(p.allow, {req.egress_hosts_file, req.secrets_file, req.egress_ca_file});
    if (!plan) return std::unexpected(plan.error());
    if (!plan->refusal.empty()) {
      rec.outcome = Outcome::kInputRejected;
      rec.reason = plan->refusal;
      return {};
    }
    egress_plan = std::move(*plan);
  }
  std::optional<SnapshotPlan> snapshot;
  if (!req.snapshot_manifest.empty()) {  // read and checked before any sandbox is taken
    auto loaded = load_snapshot(req);
    if (!loaded) {
      rec.outcome = Outcome::kInputRejected;
      rec.reason = loaded.error().what;
      return {};
    }
    snapshot = std::move(*loaded);
    rec.snapshot = {snapshot->manifest.digest(), snapshot->manifest.entries().size(),
                    snapshot->manifest.total_bytes()};
  }
  if (auto st = obtain_sandbox(req, env, command, image->source, rec, sb); !st) return st;
  rec.id = sb->id;
  rec.host_uid = sandbox::IdMap{sb->host_base()}.host_uid_of_job();
  // The host image's digest is known once it is applied (by whoever prepared the sandbox).
  const sandbox::ImageInfo& used = image->source.is_host() ? sb->image : image->source.info;
  rec.image_name = used.name;
  rec.image_digest = used.digest;
  rec.image_manifest_digest = used.manifest_digest;
  rec.image_pinned = !image->source.is_host();
  laps.lap(rec.prepared == "ahead" ? "take" : "prepare");

  std::string input_dir = "/proc/self/fd/" + std::to_string(sb->mounts.inputs.get());
  auto admission = workspace::admit_inputs(req.inputs, input_dir, p.inputs);
  if (!admission) return std::unexpected(admission.error());
  rec.inputs = admission->inputs;
  if (admission->rejection) {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = *admission->rejection;
    return {};
  }
  laps.lap("admit");
  if (snapshot) {
    const uid_t uid = rec.host_uid;
    auto refusal = restore_snapshot(*snapshot, sb->mounts.workspace.get(), uid, uid);
    if (!refusal) return std::unexpected(refusal.error());
    if (*refusal) {
      rec.outcome = Outcome::kInputRejected;
      rec.reason = **refusal;
      return {};
    }
    laps.lap("restore");
  }

  sandbox::SandboxProcess& process = *sb->process;
  sandbox::Cgroup& cgroup = *sb->cgroup;
  // The gateway's socket exists in the sandbox's network namespace before
  // the payload starts, so the code's first connection already finds it.
  // (Any prepared sandbox will do: each has only lo until this point.)
  std::optional<JobEgress> egress;
  if (egress_plan) {
    auto started = JobEgress::start(std::move(egress_plan->config), process.pidfd());
    if (!started) return std::unexpected(started.error());
    egress.emplace(std::move(*started));
    laps.lap("egress");
  }
  const auto payload_started = std::chrono::steady_clock::now();  // the wall time runs from here
  if (auto st = process.start(command, channel->write_end.get()); !st) return st;
  channel->write_end.reset();  // the payload's alone now: its end closes when the job's processes are gone
  laps.lap("start");
  SuperviseOptions opt{p.timeout_ms, p.cpu_time_ms, p.stdout_cap_bytes, env.echo_stdout,
                       env.echo_stderr, env.cancel_fd, payload_started};
  requests::RequestReader asked(req.data_request_limits);
  auto run = supervise(process, cgroup, std::move(sb->stdout_r), std::move(sb->stderr_r), opt,
                       {std::move(channel->read_end), &asked});
  if (!run) return std::unexpected(run.error());
  laps.lap("run");
  if (auto st = process.wait(); !st) return std::unexpected(st.error());
  if (auto st = cgroup.kill_all(); !st) return st;  // nothing may run while outputs are read
  rec.cleanup.removed.push_back("processes");
  if (egress) {
    auto attempts = egress->finish();
    rec.network = std::move(attempts.list);
    rec.network_dropped = attempts.dropped;
    for (const auto& a : rec.network)
      if (!a.allowed) rec.add_limit("network");
    rec.cleanup.removed.push_back("gateway");
  }
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
  facts.data_requests = asked.requests().size();
  if (asked.bytes_read() > 0)
    rec.data_requests = JobRecord::DataRequests{asked.limits(), asked.requests(), asked.refused()};
  auto usage = cgroup.usage();
  if (!usage) return std::unexpected(usage.error());
  facts.oom_kills = usage->oom_kills;
  facts.socket_memory_limit_hit = usage->socket_memory_limit_hit;
  rec.usage = {run->wall_ms, usage->cpu_ns / 1'000'000, usage->peak_memory_bytes};
  if (p.cpu_time_ms && usage->cpu_ns >= p.cpu_time_ms * 1'000'000) facts.cpu_exceeded = !facts.cancelled && !facts.timed_out;
  rec.stdout_stream = std::move(run->out);
  rec.stderr_stream = std::move(run->err);
  if (rec.stdout_stream.truncated) rec.add_limit("stdout");
  if (rec.stderr_stream.truncated) rec.add_limit("stderr");
  if (usage->pids_limit_hit) rec.add_limit("pids");
  if (usage->oom_kills > 0 || usage->socket_memory_limit_hit) rec.add_limit("memory");
  if (facts.timed_out) rec.add_limit("wall_time");
  if (facts.cpu_exceeded) rec.add_limit("cpu_time");
  note_full_mounts(sb->mounts, rec);

  auto collected = collect_job_outputs(sb->mounts.output.get(), sb->dir->sub("outputs"), p.outputs);
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
    if (auto st = publish_outputs(sb->dir->sub("outputs"), rec.outputs, req.output_dir); !st)
      return fail_with("copy outputs to " + req.output_dir + ": " + st.error().what, st.error().err);
  }
  return {};
}

// Why the request's profile cannot be used ("" when it can).
std::string profile_refusal(const RunRequest& req) {
  const sandbox::Profile* profile = sandbox::find_profile(req.profile);
  if (profile == nullptr)
    return "unknown profile '" + req.profile + "' (available: " + sandbox::profile_names() + ")";
  return sandbox::profile_refusal(*profile, !req.policy.allow.empty());
}

JobRecord new_record(const RunRequest& req, const RunEnvironment& env) {
  JobRecord rec;
  rec.id = new_job_id();
  rec.owner = env.owner;
  rec.command = req.command;
  rec.image_name = req.image;
  rec.profile_name = req.profile;
  if (const sandbox::Profile* profile = sandbox::find_profile(req.profile))
    rec.profile_digest = sandbox::profile_digest(*profile);
  rec.image_requested = req.image;
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

Cleanup Teardown::finish() {
  Cleanup done;
  if (!sandbox_) return done;
  auto removal = sandbox_->tear_down();
  done.removed = std::move(removal.removed);
  done.failed = std::move(removal.failed);
  sandbox_.reset();  // the uid lease goes last: every process of it is dead
  return done;
}

std::vector<std::string> Teardown::pending() const {
  return sandbox_ ? sandbox_->remains() : std::vector<std::string>{};
}

namespace {

// Everything of a job but the teardown: the record is complete, and no
// process of the job runs (init and the whole cgroup are killed here on every
// path, also when the run stopped early).
RanJob run_until_teardown(const RunRequest& req, const RunEnvironment& env) {
  JobRecord rec = new_record(req, env);
  auto started = std::chrono::steady_clock::now();
  Status result;
  std::optional<PreparedSandbox> sb;
  if (auto refusal = profile_refusal(req); !refusal.empty()) {
    rec.outcome = Outcome::kInputRejected;
    rec.reason = refusal;
  } else {
    result = run_in_sandbox(req, env, rec, sb);
  }
  if (!result) {
    rec.outcome = Outcome::kSandboxError;
    rec.reason = result.error().message();
  }
  if (sb) {
    sb->process.reset();  // kills init if it still runs
    // At once when the stop phase killed them already (Cgroup::kill_all).
    if (sb->cgroup)
      if (auto killed = sb->cgroup->kill_all(); !killed) rec.cleanup.failed.push_back("processes: " + killed.error().message());
  }
  if (rec.usage.wall_ms == 0 && rec.outcome == Outcome::kSandboxError)
    rec.usage.wall_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  std::chrono::steady_clock::now() - started)
                                                  .count());
  return RanJob{std::move(rec), Teardown(std::move(sb))};
}

}  // namespace

RanJob run_job_before_teardown(const RunRequest& req, const RunEnvironment& env) {
  RanJob ran = run_until_teardown(req, env);
  ran.record.cleanup.after_record = ran.teardown.pending();
  ran.record.finished_at = now_rfc3339();
  return ran;
}

FinishedJob run_job(const RunRequest& req, const RunEnvironment& env) {
  RanJob ran = run_until_teardown(req, env);
  FinishedJob out;
  JobRecord& rec = ran.record;
  // The record is written and fsynced while the sandbox's remains are
  // removed beside it, on a second thread: the fsync waits for the disk and
  // the removals for the kernel, each a few hundred microseconds; a warm
  // `airlock run -- /bin/true` ends about a millisecond sooner
  // (docs/performance.md, thirteenth session). The record names the removals
  // in cleanup.after_record, as a service job's does; what fails among them
  // goes back to the caller to say, and the next `airlock run` or `airlock
  // sweep` removes what is left.
  rec.cleanup.after_record = ran.teardown.pending();
  rec.finished_at = now_rfc3339();
  Beside teardown([&] { out.teardown_failed = ran.teardown.finish().failed; });
  std::string dir = env.state_dir + "/records";
  ::mkdir(env.state_dir.c_str(), 0700);
  ::mkdir(dir.c_str(), 0700);
  auto st = sys::write_file_atomic(record_path(env.state_dir, rec.id), record_text(rec), 0600);
  teardown.join();
  if (!st) rec.cleanup.failed.push_back("store record: " + st.error().message());
  rec.stored = st.has_value();
  out.record = std::move(rec);
  return out;
}

}  // namespace airlock::jobs
