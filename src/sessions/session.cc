#include "sessions/session.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/check.h"
#include "jobs/choose_image.h"
#include "jobs/job_sandbox.h"
#include "sandbox/preload_python.h"
#include "sessions/session_kernel.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

constexpr int kStartMs = 30'000;       // a kernel imports nothing heavy: it is ready long before
constexpr int kRestartMs = 10'000;     // the keeper kills by SIGKILL: the kernel is gone long before

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

KernelEvent raw_output(std::string text, bool is_stderr) {
  KernelEvent e;
  e.kind = KernelEvent::Kind::kOutput;
  e.is_stderr = is_stderr;
  e.text = std::move(text);
  return e;
}

// The preloaded interpreter a session on `image` with `policy` starts from,
// or null with the reason in `note` (the session then starts python3).
sandbox::Zygote* session_zygote(const ImageSource& image, const JobPolicy& policy,
                                const Session::Options& o, std::string& note,
                                std::shared_ptr<sandbox::Zygote>& hold) {
  sandbox::Zygote* zygote = o.zygote;
  if (o.tenant_zygote) {
    auto found = o.tenant_zygote(image);
    if (!found) {
      note = found.error().what;
      return nullptr;
    }
    hold = std::move(*found);
    zygote = hold.get();
    AIRLOCK_CHECK(zygote != nullptr);
  } else if (image.is_host() && !zygote) {
    note = "no preloaded interpreter for the host image here";
    return nullptr;
  }
  if (!image.is_host() && !o.tenant_zygote) {
    if (!o.image_zygote) {
      note = "no preloaded interpreter for images here";
      return nullptr;
    }
    auto found = o.image_zygote(image);
    if (!found) {
      note = found.error().what;
      return nullptr;
    }
    zygote = *found;
    AIRLOCK_CHECK(zygote != nullptr);
  }
  // The kernel's environment as open() makes it: the image's may set PYTHON* too.
  std::vector<std::string> env = job_environment(policy);
  apply_image_env(image, policy.env, env);
  if (!sandbox::preloadable({"python3", "-c", ""}, env, zygote->python_version())) {
    note = "the environment sets a PYTHON* variable, which changes how an interpreter starts";
    return nullptr;
  }
  return zygote;
}

// The kernel's statuses for an answer; anything else is the sandbox misbehaving.
bool known_answer_status(const std::string& s) {
  return s == "ok" || s == "error" || s == "interrupted" || s == "input_requested";
}

}  // namespace

Result<std::unique_ptr<Session>> Session::open(const Options& o) {
  JobPolicy policy = o.policy;
  policy.cpu_time_ms = 0;  // no RLIMIT_CPU for a kernel that lives across calls (see session.h)
  auto image = choose_image(o.image, o.image_dir, o.state_dir);
  if (!image) return std::unexpected(image.error());
  if (!image->refusal.empty()) return fail(ErrorKind::kRefused, "input rejected: " + image->refusal);
  std::string start_note;
  std::shared_ptr<sandbox::Zygote> hold;  // the tenant's interpreter, alive while it clones the sandbox
  sandbox::Zygote* zygote = (o.zygote || o.image_zygote || o.tenant_zygote)
                                ? session_zygote(image->source, policy, o, start_note, hold)
                                : nullptr;
  PrepareContext ctx{o.state_dir, o.cgroups, zygote, /*with_stdin=*/true};
  ctx.image = image->source;
  auto sb = prepare_sandbox(policy, ctx);
  if (!sb) return std::unexpected(sb.error());
  auto session = std::unique_ptr<Session>(new Session(std::move(*sb)));
  session->image_use_ = std::move(image->use);
  session->image_env_ = image->source;
  session->caps_ = o.caps;
  session->start_note_ = std::move(start_note);
  PreparedSandbox& box = session->sandbox_;
  if (!o.inputs.empty()) {
    std::string input_dir = "/proc/self/fd/" + std::to_string(box.mounts.inputs.get());
    auto admission = workspace::admit_inputs(o.inputs, input_dir, policy.inputs);
    if (!admission) return std::unexpected(admission.error());
    if (admission->rejection) return fail(ErrorKind::kRefused, "input rejected: " + *admission->rejection);
    session->inputs_ = std::move(admission->inputs);
  }
  if (o.fill_workspace) {
    if (auto st = o.fill_workspace(box.mounts.workspace.get(), session->sandbox_uid(), session->sandbox_gid()); !st)
      return std::unexpected(st.error());
  }
  if (o.egress) {
    auto gateway = JobEgress::start(*o.egress, box.process->pidfd());
    if (!gateway) return std::unexpected(gateway.error());
    session->egress_.emplace(std::move(*gateway));
  }
  sandbox::Command command;
  command.argv = {"python3", "-c", keeper_source(), kernel_source()};
  if (box.preloaded.has_value())
    command.argv.push_back("fork");  // keeper.py: each kernel a fork of the keeper
  command.env = job_environment(policy);
  apply_image_env(session->image_env_, policy.env, command.env);
  command.exec_candidates = exec_candidates("python3", command.env);
  for (int fd : {box.stdout_r.get(), box.stderr_r.get()}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  // The keeper's first line on stdin is its secret (it reads it before any kernel starts).
  if (auto st = sys::write_all(box.stdin_w.get(), session->keeper_tag_ + "\n"); !st)
    return std::unexpected(st.error());
  if (auto st = box.process->start(command); !st) return std::unexpected(st.error());
  std::string said;
  auto ready = session->read_events(now_ms() + kStartMs, [&](const KernelEvent& e) {
    if (e.kind == KernelEvent::Kind::kOutput && said.size() < 4096) said += e.text;
    return e.kind == KernelEvent::Kind::kReady;
  });
  if (!ready) return std::unexpected(ready.error());
  if (*ready != Wait::kDone) return fail("the session's kernel did not start: " + said);
  return session;
}

bool Session::spare_can_serve(const Options& spare, const Options& o) {
  if (o.image != "host" || spare.image != "host" || o.zygote != spare.zygote || o.egress || spare.egress)
    return false;
  // A spare forked from one tenant's interpreter is that tenant's alone.
  if (o.tenant != spare.tenant || static_cast<bool>(o.tenant_zygote) != static_cast<bool>(spare.tenant_zygote))
    return false;
  // A snapshot is restored before the kernel starts: its installs under
  // /workspace/.local are on the kernel's sys.path only if they were there then.
  if (o.fill_workspace) return false;
  return job_environment(o.policy) == job_environment(spare.policy);
}

Status Session::adopt(const Options& spare, const Options& o) {
  AIRLOCK_CHECK(spare_can_serve(spare, o));
  if (!alive_ || next_call_ != 1) return fail("the spare session was used or has ended");
  JobPolicy policy = o.policy;
  policy.cpu_time_ms = 0;  // as open(): no RLIMIT_CPU for a kernel that lives across calls
  if (auto st = fit_to_policy(sandbox_, policy); !st) return st;
  caps_ = o.caps;
  if (!o.inputs.empty()) {
    std::string input_dir = "/proc/self/fd/" + std::to_string(sandbox_.mounts.inputs.get());
    auto admission = workspace::admit_inputs(o.inputs, input_dir, policy.inputs);
    if (!admission) return std::unexpected(admission.error());
    if (admission->rejection) return fail(ErrorKind::kRefused, "input rejected: " + *admission->rejection);
    inputs_ = std::move(admission->inputs);
  }
  start_note_ = "opened ahead as a spare";
  return {};
}

Session::~Session() {
  sandbox_.process.reset();  // init dies, and with it every process of the session
  if (sandbox_.cgroup && sandbox_.cgroup->kill_all()) (void)sandbox_.cgroup->remove();
  sandbox_.cgroup.reset();
}

JobEgress::Attempts Session::finish_network() {
  if (!egress_) return {};
  auto attempts = egress_->finish();
  egress_.reset();
  return attempts;
}

uid_t Session::host_uid() const { return sandbox::IdMap{sandbox_.host_base()}.host_uid_of_job(); }

Status Session::signal(int sig) {
  if (!alive_) return {};
  std::lock_guard lock(signal_mutex_);
  return sandbox_.process->signal_payload(sig);  // to the keeper, which acts on it
}

Status Session::interrupt() {
  if (!running_) return {};  // idle: an interrupt could only hit the next call's start
  if (!call_started_) {
    // The kernel has not taken the call yet: an interrupt now would land
    // between calls and be lost. exec() sends it when the call starts.
    interrupt_pending_ = true;
    if (!call_started_) return {};
    if (!interrupt_pending_.exchange(false)) return {};  // exec() sent it meanwhile
  }
  return signal(SIGINT);
}

Status Session::restart() {
  if (!alive_) return fail("the session's sandbox has ended");
  restart_requested_ = true;
  if (auto st = signal(SIGUSR1); !st) return st;
  std::unique_lock lock(call_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return {};  // the running call sees the kernel go and ends as restarted
  auto fresh = await_fresh_kernel(false, now_ms() + kRestartMs + kStartMs);
  restart_requested_ = false;
  if (!fresh) return std::unexpected(fresh.error());
  if (*fresh == Wait::kSandboxDied) return fail("the session's sandbox ended during the restart");
  if (*fresh == Wait::kDeadline) return fail("the session's kernel did not come back after a restart");
  return {};
}

Result<Session::Wait> Session::await_fresh_kernel(bool exited, int64_t deadline_ms) {
  return read_events(deadline_ms, [&](const KernelEvent& e) {
    if (e.kind == KernelEvent::Kind::kKernelExited && e.tag == keeper_tag_) exited = true;
    return exited && e.kind == KernelEvent::Kind::kReady;
  });
}

Result<Session::Wait> Session::read_events(int64_t deadline_ms,
                                           const std::function<bool(const KernelEvent&)>& on_event) {
  bool eof = false;
  // Marked lines are protocol, anything else (or a marked line that does not
  // parse) is raw output; a marked line over kMaxKernelLine is dropped unread.
  // What comes after the piece that ends the wait stays for the next wait.
  auto deliver = [&]() {
    while (!backlog_.empty()) {
      KernelStream::Piece piece = std::move(backlog_.front());
      backlog_.pop_front();
      KernelEvent event;
      std::optional<KernelEvent> parsed;
      if (piece.kind == KernelStream::Piece::Kind::kLine) {
        if (auto p = parse_kernel_event(piece.text)) parsed = std::move(*p);
        else piece.text = std::string(kKernelMark) + piece.text + "\n";
      }
      if (parsed) {
        event = std::move(*parsed);
      } else if (piece.kind == KernelStream::Piece::Kind::kDropped) {
        event.kind = KernelEvent::Kind::kDropped;
        event.text = std::move(piece.text);
      } else {
        event = raw_output(std::move(piece.text), false);
      }
      if (on_event(event)) return true;
    }
    return false;
  };
  if (deliver()) return Wait::kDone;
  std::vector<KernelStream::Piece> pieces;
  for (;;) {
    if (!alive_ || eof) {
      alive_ = false;
      return Wait::kSandboxDied;
    }
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) return Wait::kDeadline;
    pollfd fds[3] = {{sandbox_.stdout_r.get(), POLLIN, 0},
                     {sandbox_.stderr_r.get(), POLLIN, 0},
                     {sandbox_.process->pidfd(), POLLIN, 0}};
    if (::poll(fds, 3, static_cast<int>(std::min<int64_t>(left, 1000))) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll the session");
    }
    // When init has gone, the pipes hold all there will ever be: read them out.
    bool init_gone = fds[2].revents != 0;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(sandbox_.stdout_r.get(), buf, sizeof(buf));
      if (n > 0) stream_.feed(std::string_view(buf, static_cast<size_t>(n)), pieces);
      for (auto& piece : pieces) backlog_.push_back(std::move(piece));
      pieces.clear();
      if (n == 0) eof = true;
      if (deliver()) return Wait::kDone;
      if (n <= 0 || !init_gone) break;
    }
    for (;;) {
      ssize_t n = ::read(sandbox_.stderr_r.get(), buf, sizeof(buf));
      if (n > 0 && on_event(raw_output(std::string(buf, static_cast<size_t>(n)), true))) return Wait::kDone;
      if (n <= 0 || !init_gone) break;
    }
    if (init_gone) eof = true;
  }
}

Result<CallResult> Session::exec(const std::string& id, const CallRequest& request, const OutputSink& sink) {
  std::lock_guard lock(call_mutex_);
  int64_t started_ms = now_ms();
  CallResult r;
  r.id = id;
  if (request.kind != "python" && request.kind != "shell") {
    r.status = "error";
    r.error = "unknown call kind (python or shell)";
    return r;
  }
  if (!alive_) {
    r.status = "sandbox_died";
    r.error = "the session's sandbox has ended";
    return r;
  }
  auto cpu_before = sandbox_.cgroup->cpu_ns();
  if (!cpu_before) return std::unexpected(cpu_before.error());

  // The id is predictable; the nonce is not: only lines that carry it count
  // for this call (session_kernel.h). Anything else naming a call is dropped.
  std::string tag = "call-" + std::to_string(next_call_++);
  std::string nonce = new_protocol_tag();
  OutputCollector out(kCallOutputCap), err(kCallOutputCap);
  AnswerAssembler assembler(caps_);
  uint64_t dropped = 0;
  std::vector<RawDataRequest> requests;
  uint64_t over_lines = 0, over_bytes = 0;
  bool started = false, killing = false;
  std::optional<CallResult> answer;
  std::optional<std::string> kernel_exit;
  auto ours = [&](const KernelEvent& e) {
    if (e.tag == nonce && e.id == tag) return true;
    ++dropped;
    return false;
  };
  auto on_event = [&](const KernelEvent& e) {
    switch (e.kind) {
      case KernelEvent::Kind::kOutput:
        // Untagged output is raw (unmarked) or the keeper's, between calls.
        if ((!e.id.empty() || !e.tag.empty()) && e.tag != keeper_tag_ && !ours(e)) return false;
        if (sink) sink(e.is_stderr, e.text);
        (e.is_stderr ? err : out).append(e.text);
        return false;
      case KernelEvent::Kind::kStarted:
        if (ours(e)) {
          started = true;
          call_started_ = true;
          if (interrupt_pending_.exchange(false)) (void)signal(SIGINT);  // asked for before the kernel took it
        }
        return false;
      case KernelEvent::Kind::kPart:
        if (ours(e)) assembler.part(e);
        return false;
      case KernelEvent::Kind::kRequest:
        if (!ours(e)) return false;
        // The host's own limits, whatever the kernel kept: a line over the
        // size is only measured, lines past the count only counted.
        if (requests.size() < request.request_count) {
          RawDataRequest kept = e.request;
          if (kept.line && kept.line->size() > request.request_bytes) {
            kept.bytes = std::max<uint64_t>(kept.bytes, kept.line->size());
            kept.line.reset();
          }
          requests.push_back(std::move(kept));
        } else {
          ++over_lines;
          over_bytes += e.request.bytes;
        }
        return false;
      case KernelEvent::Kind::kAnswer:
        if (!ours(e)) return false;  // another call's, or forged: never ends this one
        answer = assembler.finish(e);
        return true;
      case KernelEvent::Kind::kDropped:
        ++dropped;
        return false;
      case KernelEvent::Kind::kKernelExited:
        if (e.tag != keeper_tag_) {  // only the keeper knows its secret
          ++dropped;
          return false;
        }
        // A kernel that ended before it took this call (a restart between
        // calls): the next one takes the request from the pipe.
        if (!started && !killing) {
          restart_requested_ = false;
          return false;
        }
        kernel_exit = e.text;
        return true;
      default:
        return false;
    }
  };

  nlohmann::json caps = {{"value", caps_.value_bytes},
                         {"html", caps_.html_bytes},
                         {"error", caps_.error_bytes},
                         {"figures", caps_.figures_bytes}};
  nlohmann::json answers = nlohmann::json::object();
  for (const auto& a : request.answers) {
    nlohmann::json one = {{"state", a.state}};
    if (!a.reason.empty()) one["reason"] = a.reason;
    answers[a.request_id] = std::move(one);
  }
  std::string line = nlohmann::json{{"id", tag},
                                    {"nonce", nonce},
                                    {"kind", request.kind},
                                    {"code", request.code},
                                    {"caps", caps},
                                    {"requests", {{"count", request.request_count}, {"bytes", request.request_bytes}}},
                                    {"answers", answers}}
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                     "\n";
  Result<Wait> waited = Wait::kSandboxDied;
  running_ = true;
  struct Idle {
    Session& s;
    ~Idle() {
      s.running_ = false;
      s.call_started_ = false;
      s.interrupt_pending_ = false;
    }
  } idle{*this};
  if (auto st = sys::write_all(sandbox_.stdin_w.get(), line); !st) {
    alive_ = false;
  } else {
    waited = read_events(started_ms + std::max(request.timeout_ms, 1), on_event);
  }
  bool timed_out = false, restarted_at_timeout = false;
  if (waited && *waited == Wait::kDeadline) {
    timed_out = true;
    if (auto st = signal(SIGINT); !st) return std::unexpected(st.error());
    waited = read_events(now_ms() + kInterruptGraceMs, on_event);
    if (waited && *waited == Wait::kDeadline) {
      restarted_at_timeout = killing = true;
      if (auto st = signal(SIGUSR1); !st) return std::unexpected(st.error());
      waited = read_events(now_ms() + kRestartMs, on_event);
    }
  }
  if (!waited) return std::unexpected(waited.error());

  if (answer) {
    CallResult& a = *answer;
    r.result = std::move(a.result);
    r.html = std::move(a.html);
    r.error = std::move(a.error);
    r.figures_png_base64 = std::move(a.figures_png_base64);
    r.truncated = a.truncated;
    r.cwd = std::move(a.cwd);
    r.exit_code = a.exit_code;
    r.status = known_answer_status(a.status) ? a.status : "error";
    if (!known_answer_status(a.status)) r.error = "the kernel answered with an unknown status";
    if (timed_out && r.status == "interrupted") r.status = "timed_out";
    over_lines += a.requests_over_lines;
    over_bytes += a.requests_over_bytes;
  } else if (kernel_exit) {
    bool by_restart = restart_requested_.exchange(false);
    if (restarted_at_timeout) {
      r.status = "timed_out";
      r.error = "the call did not stop at its timeout nor after an interrupt; the kernel was restarted "
                "(its variables are gone)";
    } else if (by_restart) {
      r.status = "restarted";
      r.error = "the kernel was restarted during the call";
    } else {
      r.status = "kernel_died";
      r.error = "the kernel died during the call (" + *kernel_exit + "); a fresh kernel was started";
    }
  } else if (*waited == Wait::kSandboxDied) {
    r.status = "sandbox_died";
    r.error = "the session's sandbox ended during the call";
  } else {
    r.status = "timed_out";
    r.error = "the call did not stop at its timeout, and the kernel did not end after a restart";
  }
  r.dropped_lines = dropped;
  r.data_requests = std::move(requests);
  r.requests_over_lines = over_lines;
  r.requests_over_bytes = over_bytes;
  r.stdout_text = out.take();
  r.stderr_text = err.take();
  r.ms = static_cast<double>(now_ms() - started_ms);
  if (alive_) {
    auto usage = sandbox_.cgroup->usage();
    if (!usage) return std::unexpected(usage.error());
    r.usage.cpu_ms = (usage->cpu_ns - std::min(usage->cpu_ns, *cpu_before)) / 1'000'000;
    r.usage.peak_memory_bytes = usage->peak_memory_bytes;
  }
  return r;
}

}  // namespace airlock::jobs
