#include "service/job_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <memory>
#include <thread>

#include "jobs/run_job.h"
#include "service/archive_reader.h"
#include "sys/file_io.h"

namespace airlock::service {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The job's live output: two pipes the engine echoes the program's stdout
// and stderr into, drained into the LogBuffer by one thread until the
// engine is done. Both ends are O_CLOEXEC, and every sandbox closes what it
// inherited before its payload starts, so no job's code can hold them.
class OutputPump {
 public:
  static Result<std::unique_ptr<OutputPump>> start(LogBuffer& log) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) < 0) return fail_errno("create the job's output pipe");
    UniqueFd out_r(out[0]), out_w(out[1]);
    if (::pipe2(err, O_CLOEXEC) < 0) return fail_errno("create the job's output pipe");
    UniqueFd err_r(err[0]), err_w(err[1]);
    return std::unique_ptr<OutputPump>(
        new OutputPump(log, std::move(out_r), std::move(out_w), std::move(err_r), std::move(err_w)));
  }
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;
  ~OutputPump() { finish(); }

  int stdout_fd() const { return out_w_.get(); }
  int stderr_fd() const { return err_w_.get(); }

  // Closes the write ends and waits until everything written was delivered.
  void finish() {
    out_w_.reset();
    err_w_.reset();
    if (thread_.joinable()) thread_.join();
  }

 private:
  OutputPump(LogBuffer& log, UniqueFd out_r, UniqueFd out_w, UniqueFd err_r, UniqueFd err_w)
      : out_w_(std::move(out_w)), err_w_(std::move(err_w)) {
    thread_ = std::thread([&log, out = std::move(out_r), err = std::move(err_r)]() mutable {
      char buf[65536];
      while (out || err) {
        pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
          if (errno == EINTR) continue;
          return;  // cannot happen with valid fds; the engine's echo then blocks, never the service
        }
        for (int i = 0; i < 2; ++i) {
          if (!fds[i].revents) continue;
          UniqueFd& fd = i == 0 ? out : err;
          ssize_t n = ::read(fd.get(), buf, sizeof(buf));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) fd.reset();
          else log.append(i == 1, std::string_view(buf, static_cast<size_t>(n)));
        }
      }
    });
  }

  UniqueFd out_w_, err_w_;
  std::thread thread_;
};

// A file of the job's work directory (the code, the snapshot's manifest):
// read once by the engine and removed with the directory after the job, so
// it is not fsynced (the store's commit is the job's one durable write).
Status write_scratch_file(const std::string& path, std::string_view data, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) return fail_errno("create " + path);
  if (auto st = sys::write_all(fd.get(), data); !st) return fail_with("write " + path, st.error().err);
  return {};
}

// Opens accepted files by name for the checks, which stream over them
// (validate/checks.h): nothing is read whole here.
validate::FileSource files_by_name(std::map<std::string, std::string> paths) {
  return [paths = std::move(paths)](const std::string& name) -> std::optional<validate::ByteSource> {
    auto it = paths.find(name);
    if (it == paths.end()) return std::nullopt;
    auto fd = std::make_shared<UniqueFd>(::open(it->second.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!*fd) return std::nullopt;
    return [fd](char* buf, size_t n) -> Result<size_t> {
      ssize_t got;
      do got = ::read(fd->get(), buf, n);
      while (got < 0 && errno == EINTR);
      if (got < 0) return fail_errno("read");
      return static_cast<size_t>(got);
    };
  };
}

std::map<std::string, std::string> accepted_outputs(const jobs::JobRecord& rec, const std::string& out_dir) {
  std::map<std::string, std::string> paths;
  for (const auto& o : rec.outputs)
    if (o.accepted) paths[o.name] = out_dir + "/" + o.name;
  return paths;
}

// Phase: the request's checks on the accepted outputs. Returns the first
// failure as "label: detail".
std::optional<std::string> run_checks(const RunnerSetup& setup, const RunnerJob& job,
                                      const std::map<std::string, std::string>& inputs, jobs::JobRecord& rec) {
  auto checks = validate::parse_checks(job.request.checks);  // accepted when the job was: cannot fail
  if (!checks) return "the stored checks no longer parse: " + checks.error().message();
  auto outputs = accepted_outputs(rec, job.work_dir + "/out");
  PdfReaderSetup pdf = setup.pdf;
  pdf.scratch_dir = job.work_dir;
  rec.checks = validate::run_checks(*checks, files_by_name(outputs), files_by_name(inputs), setup.check_limits,
                                    sandboxed_pdf_reader(pdf, outputs),
                                    confined_archive_reader(setup.pdf.airlock_binary, outputs));
  for (const auto& r : *rec.checks)
    if (!r.passed) return r.label + ": " + r.detail;
  return std::nullopt;
}

// Phase: whether the accepted outputs fit in the tenant's storage quota;
// when they do not, each is marked rejected with the reason.
std::optional<std::string> over_storage_quota(const RunnerJob& job, jobs::JobRecord& rec) {
  uint64_t bytes = 0;
  for (const auto& o : rec.outputs)
    if (o.accepted) bytes += o.size;
  if (bytes == 0) return std::nullopt;
  const uint64_t quota = job.storage_quota_bytes;
  auto used = job.store.storage_usage(job.tenant_id);
  if (!used) return "storage quota: the tenant's usage could not be read: " + used.error().message();
  if (bytes <= quota && used->total() <= quota - bytes) return std::nullopt;
  std::string why = "storage quota: the tenant keeps " + std::to_string(used->total()) + " of its " +
                    std::to_string(quota) + " bytes (tenant_storage_mb), and the accepted outputs hold " +
                    std::to_string(bytes) + "; none was stored";
  for (auto& o : rec.outputs) {
    if (!o.accepted) continue;
    o.accepted = false;
    o.reason = why;
  }
  return why;
}

// Phase: the accepted outputs into the store's content directory. On a
// failure, what was put is released again.
std::optional<std::string> store_outputs(const RunnerJob& job, const jobs::JobRecord& rec,
                                         std::vector<store::ArtifactRow>& artifacts) {
  for (const auto& o : rec.outputs) {
    if (!o.accepted) continue;
    auto stored = job.store.put_artifact(job.work_dir + "/out/" + o.name, o.sha256);
    if (!stored) {
      std::vector<std::string> put;
      for (const auto& a : artifacts) put.push_back(a.sha256);
      job.store.release_artifacts(put);
      artifacts.clear();
      return "store output " + o.name + ": " + stored.error().message();
    }
    artifacts.push_back({job.job_id, o.name, o.sha256, o.type, o.size});
  }
  return std::nullopt;
}

}  // namespace

Result<JobCancel> JobCancel::create() {
  UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!fd) return fail_errno("create the job's cancel eventfd");
  return JobCancel(std::move(fd));
}

Status JobCancel::fire() {
  if (::eventfd_write(fd_.get(), 1) < 0) return fail_errno("cancel the job");
  return {};
}

bool JobCancel::fired() const {
  pollfd p{fd_.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

jobs::JobRecord record_without_run(const std::string& id, const std::vector<std::string>& command,
                                   jobs::Outcome outcome, const std::string& reason, const std::string& started_at) {
  jobs::JobRecord r;
  r.id = id;
  r.command = command;
  r.outcome = outcome;
  r.reason = reason;
  r.started_at = started_at;
  r.finished_at = jobs::now_rfc3339();
  return r;
}

RunnerResult run_service_job(const RunnerSetup& setup, const RunnerJob& job) {
  RunnerResult result;
  auto t_start = Clock::now();
  const std::string started_at = jobs::now_rfc3339();
  auto fail_early = [&](const std::string& why) {
    result.record = record_without_run(job.job_id, job.request.command, jobs::Outcome::kSandboxError, why, started_at);
    result.timing.add("prepare", ms_between(t_start, Clock::now()));
    return std::move(result);
  };

  // Prepare: the code as an input file, the snapshot's manifest.
  RunPlacement at;
  std::map<std::string, std::string> inputs;  // by name, for the checks
  for (const auto& [name, path] : job.inputs) {
    at.input_paths.push_back(path);  // two of one name: admission refuses them
    inputs.emplace(name, path);
  }
  if (job.request.code) {
    std::string path = job.work_dir + "/" + job.request.code_name;
    if (auto st = write_scratch_file(path, *job.request.code, 0444); !st) return fail_early(st.error().message());
    at.input_paths.push_back(path);
    inputs[job.request.code_name] = path;
  }
  if (job.snapshot_manifest) {
    at.snapshot_manifest = job.work_dir + "/snapshot.json";
    at.content_dir = setup.content_dir;
    if (auto st = write_scratch_file(at.snapshot_manifest, *job.snapshot_manifest, 0400); !st)
      return fail_early(st.error().message());
  }
  at.output_dir = job.work_dir + "/out";
  at.state_dir = setup.state_dir;
  at.image_dir = setup.image_dir;
  at.egress_hosts_file = setup.egress_hosts_file;
  at.secrets_file = setup.secrets_file;
  at.egress_ca_file = setup.egress_ca_file;
  jobs::RunRequest request = run_request_for(job.request, at);
  request.data_request_limits = setup.data_request_limits;
  auto pump = OutputPump::start(job.live);
  if (!pump) return fail_early(pump.error().message());
  auto t_run = Clock::now();
  result.timing.add("prepare", ms_between(t_start, t_run));

  // Run: the engine, on this thread.
  jobs::RunEnvironment env;
  env.state_dir = setup.state_dir;
  env.cgroups = setup.cgroups;
  env.owner = "service";
  env.tenant = job.tenant_id;  // its preloaded jobs fork from its own interpreter
  env.echo_stdout = (*pump)->stdout_fd();
  env.echo_stderr = (*pump)->stderr_fd();
  env.cancel_fd = job.cancel_fd;
  try {
    // The sandbox's mounts, cgroup and staging directory are removed after
    // the record is stored and the caller answered (JobService::run_one).
    jobs::RanJob ran = jobs::run_job_before_teardown(request, env);
    result.record = std::move(ran.record);
    result.teardown = std::move(ran.teardown);
  } catch (const std::exception& e) {
    // The engine's own bug (it is written not to throw): the sandbox it held
    // is gone with its RAII owners; the job is airlock's failure.
    result.record = record_without_run(job.job_id, job.request.command, jobs::Outcome::kSandboxError,
                                       std::string("airlock failed while running the job: ") + e.what(), started_at);
  }
  (*pump)->finish();  // every byte of live output is in the LogBuffer before the job ends
  auto t_ran = Clock::now();
  result.timing.add("run", ms_between(t_run, t_ran));

  // Finish: the phases after the run, each only while nothing before it
  // refused; their findings decide the outcome once.
  jobs::JobRecord& rec = result.record;
  const jobs::Decision ran{rec.outcome, rec.reason};
  jobs::AfterRun after;
  auto still_succeeds = [&] { return jobs::finish_decision(ran, after).outcome == jobs::Outcome::kSucceeded; };
  if (still_succeeds() && !job.request.checks.empty()) after.failed_check = run_checks(setup, job, inputs, rec);
  if (still_succeeds()) after.over_quota = over_storage_quota(job, rec);
  if (still_succeeds()) after.storage_failure = store_outputs(job, rec, result.artifacts);
  jobs::Decision decided = jobs::finish_decision(ran, after);
  rec.outcome = decided.outcome;
  rec.reason = decided.reason;
  result.timing.add("finish", ms_between(t_ran, Clock::now()));
  return result;
}

}  // namespace airlock::service
