// A session: one sandbox kept alive across calls, whose payload is the keeper
// and Python kernel of session_kernel.h. Python calls run in the namespace the
// previous calls left; shell calls keep their working directory and exported
// environment. Output streams to the caller while the call runs; the answer
// carries the last expression's repr and HTML, an error's traceback and every
// figure as a PNG. Closing (or destroying) the session kills everything in it
// and removes its cgroup, mounts and directory.
//
// Limits: a session's kernel lives across many calls, so it gets no
// RLIMIT_CPU (a job's cpu_time_ms would kill it after that much cpu time in
// total); policy.cpu_time_ms and policy.timeout_ms are ignored. Each call has
// its own timeout (CallRequest::timeout_ms), and the cgroup's memory, pids and
// cpu-bandwidth limits hold for the whole session. The OOM killer killing the
// kernel ends the call as kernel_died; the session goes on with a fresh kernel.
//
// Call statuses:
//   ok           the call ran to its end (shell: exit status 0)
//   input_requested  Python: airlock_request.ask()/stop() ended it; the
//                kernel's state remains. The service (live_session.cc) also
//                gives this status to an ok/error call that sent a data
//                request it accepted, and takes it away when it accepted none.
//   error        Python raised (traceback in error); shell: non-zero exit status
//   interrupted  interrupt() stopped it (KeyboardInterrupt; shell: SIGINT, then
//                SIGKILL to its process group); the kernel and its state remain
//   timed_out    it ran past its timeout and was interrupted; if it did not stop
//                within kInterruptGraceMs the kernel was restarted (its variables
//                are gone: error says so)
//   restarted    restart() ended it; the kernel is fresh
//   kernel_died  the kernel died under it (os._exit, a crash, the OOM killer);
//                the keeper started a fresh kernel, the session goes on
//   sandbox_died the sandbox is gone (init died or was killed); alive() is false
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "images/image_use.h"
#include "jobs/job_egress.h"
#include "jobs/policy.h"
#include "pool/prepared.h"
#include "sessions/session_kernel.h"
#include "sessions/session_protocol.h"
#include "sandbox/cgroup.h"
#include "sandbox/zygote.h"

namespace airlock::jobs {

// What the code of a call may learn of the session's earlier data requests
// (airlock_request.answer): state "open", "answered" or "refused".
struct KnownAnswer {
  std::string request_id, state, reason;
};

struct CallRequest {
  std::string kind = "python";  // "python" or "shell"
  std::string code;
  int timeout_ms = 60000;
  // Data requests: the lines the host takes from this call (the first
  // request_count, each of at most request_bytes; 0: none) and the answers so far.
  size_t request_count = 0, request_bytes = 0;
  std::vector<KnownAnswer> answers;
};

// Live output of a running call, in order, as the code writes it. Called on
// the thread running exec(). It gets everything (the CallResult keeps the
// first kCallOutputCap bytes of each stream).
using OutputSink = std::function<void(bool is_stderr, std::string_view text)>;

inline constexpr int kInterruptGraceMs = 2000;

class Session {
 public:
  struct Options {
    JobPolicy policy;  // limits, inputs policy (see the header comment for the time limits)
    std::string state_dir;
    sandbox::CgroupBackend* cgroups = nullptr;
    // Called after the sandbox is prepared and before the kernel starts, with
    // the workspace mount fd and the sandbox user's host uid/gid.
    std::function<Status(int workspace_mount_fd, uid_t uid, gid_t gid)> fill_workspace;
    // Host files admitted into /inputs (read-only there) under policy.inputs,
    // like a job's; a refused file fails open() with the refusal.
    std::vector<std::string> inputs;
    // The gateway of policy.allow (prepare_egress()), served for the whole
    // session as a job's is for the job; unset: loopback only.
    std::optional<egress::GatewayConfig> egress;
    // What the host keeps of each call's answer (value, html, error, figures).
    CallCaps caps;
    // The image (jobs/choose_image.h), held for the session's life; a refused
    // image fails open() with an error of kind kRefused.
    std::string image = "host";
    std::string image_dir;
    // The preloaded interpreter (sandbox/zygote.h): set, a session it can
    // serve (host image, no PYTHON* variable in policy.env) starts as its
    // fork, with the data stack imported, and each kernel is a fork of the
    // keeper; any other session starts python3 as without it.
    sandbox::Zygote* zygote = nullptr;
    // The same for a session on a stored image: the image's own preloaded
    // interpreter (pool/image_python.h), which the owner keeps per image and
    // starts on first use; an error (the image cannot have one: no pandas,
    // no libpython) is the session's start note, and it starts python3.
    std::function<Result<sandbox::Zygote*>(const ImageSource& image)> image_zygote;
    // Set (the service): the interpreter for a session on any image, host
    // included, instead of the two above: the tenant's own, counted as one
    // sandbox it made (pool/tenant_interpreters.h). A spare serves only
    // requests of its own tenant.
    std::string tenant;
    std::function<Result<std::shared_ptr<sandbox::Zygote>>(const ImageSource& image)> tenant_zygote;
  };
  // Prepares a sandbox, admits the inputs, fills /workspace, starts the
  // keeper and kernel; returns once the kernel is ready.
  static Result<std::unique_ptr<Session>> open(const Options& options);
  // A spare: a session opened ahead with options `spare` (default policy,
  // no inputs) and never called. It can serve only a request whose sandbox
  // would be the same at the kernel's start: the host image, the same zygote,
  // the same environment (so no policy.env and no policy.allow, whose
  // proxies are environment) and an empty workspace (no snapshot). Pure.
  static bool spare_can_serve(const Options& spare, const Options& options);
  // Makes a spare the session `options` asks for (spare_can_serve() must
  // hold): limits and sizes fitted, inputs admitted. Errors
  // as open()'s (a refused input is kRefused).
  Status adopt(const Options& spare, const Options& options);
  ~Session();

  const std::string& id() const { return sandbox_.id; }
  // How the sandbox started: kPreloaded (forked from the preloaded
  // interpreter) or kCold, and why not preloaded when a zygote was given.
  StartKind start_kind() const {
    return sandbox_.preloaded.has_value() ? StartKind::kPreloaded : StartKind::kCold;
  }
  const std::string& start_note() const { return start_note_; }
  uid_t host_uid() const;
  bool alive() const { return alive_; }
  int workspace_mount() const { return sandbox_.mounts.workspace.get(); }
  int output_mount() const { return sandbox_.mounts.output.get(); }
  uid_t sandbox_uid() const { return host_uid(); }
  gid_t sandbox_gid() const { return host_uid(); }
  const std::vector<workspace::ManifestEntry>& inputs() const { return inputs_; }
  // Stops the gateway (if any) and hands back every network attempt, for the
  // record. Call it once, when the session closes.
  JobEgress::Attempts finish_network();

  // Runs one call; `id` is the caller's (returned in CallResult::id). One call
  // at a time (the caller serializes; a second concurrent exec waits).
  // Thread-safe against interrupt()/restart() from other threads. An Error
  // only for airlock's own failures; a dead kernel or sandbox is a result.
  Result<CallResult> exec(const std::string& id, const CallRequest& request, const OutputSink& sink);
  // The running Python call gets KeyboardInterrupt (shell: the command gets
  // SIGINT, SIGKILL a second later); no-op when idle.
  Status interrupt();
  // A fresh interpreter: variables gone, files kept, shell cwd/env reset.
  // A running call ends with status "restarted" (restart() returns at once);
  // when idle, returns once the new kernel is ready. Works even when the
  // kernel ignores SIGINT or is stuck in C code.
  Status restart();

 private:
  explicit Session(PreparedSandbox sandbox) : sandbox_(std::move(sandbox)) {}
  enum class Wait { kDone, kDeadline, kSandboxDied };
  // Reads the sandbox's pipes until `on_event` returns true, the deadline
  // passes or the sandbox dies. Unmarked output comes as kOutput events with
  // no id.
  Result<Wait> read_events(int64_t deadline_ms, const std::function<bool(const KernelEvent&)>& on_event);
  Status signal(int sig);
  // After the kernel was killed for a restart: waits for its kernel_exited (if
  // `exited` is false yet) and the new kernel's ready.
  Result<Wait> await_fresh_kernel(bool exited, int64_t deadline_ms);

  std::optional<images::ImageUse> image_use_;  // the image stays in the store while the session lives
  ImageSource image_env_;                       // its environment, for every kernel start
  PreparedSandbox sandbox_;
  std::optional<JobEgress> egress_;  // the session's gateway, stopped with the session
  std::vector<workspace::ManifestEntry> inputs_;
  CallCaps caps_;
  std::string start_note_;
  // The keeper's secret: its kernel_exited lines carry it (session_kernel.h).
  std::string keeper_tag_ = new_protocol_tag();
  KernelStream stream_{kKernelMarkView, kMaxKernelLine};
  std::deque<KernelStream::Piece> backlog_;  // split from the pipe, not yet handed to a wait
  uint64_t next_call_ = 1;
  std::atomic<bool> alive_ = true;
  std::atomic<bool> restart_requested_ = false;
  std::atomic<bool> running_ = false;  // a call is in the kernel
  std::atomic<bool> call_started_ = false;      // ... and the kernel said it took it
  std::atomic<bool> interrupt_pending_ = false;  // interrupt() came before that
  std::mutex call_mutex_;    // held by exec() and an idle restart()
  std::mutex signal_mutex_;  // one kSignal message at a time
};

}  // namespace airlock::jobs
