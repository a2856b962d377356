#include "sandbox/zygote.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/wire.h"
#include "sandbox/image_mount.h"
#include "sandbox/preload_python.h"
#include "sandbox/python_embed.h"
#include "sandbox/shared_image.h"
#include "sandbox/spec_codec.h"
#include "sys/fd_passing.h"

namespace airlock::sandbox {
namespace {

constexpr size_t kMaxRequest = 1 << 20;

const EmbeddedPython* g_python = nullptr;  // for the payload, which is a plain function

// A fork keeps the zygote's stack canary, so every preloaded job would share
// it (and could tell it to another). Each job draws its own. Safe only here:
// no function entered before this point ever returns (the payload ends with
// _exit), so no frame checks the old value on its way out. glibc's form is
// kept (a zero low byte stops string overflows). x86-64 keeps the canary at
// %fs:0x28; on other architectures it stays the zygote's.
void fresh_stack_canary() {
#if defined(__x86_64__)
  uint64_t canary = 0;
  if (::getrandom(&canary, sizeof(canary), 0) != sizeof(canary)) ::_exit(125);
  canary &= ~uint64_t{0xff};
  asm volatile("movq %0, %%fs:0x28" : : "r"(canary) : "memory");
#endif
}

// The payload of a preloaded sandbox: init's fork, contained, about to be the job.
void run_preloaded_payload(const CommandView& command) {
  fresh_stack_canary();
  ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);  // like any exec'd program: its own /proc is its own
  g_python->after_fork_child();
  g_python->run(runner_call(command.argv, command.env));  // SystemExit ends the process
  ::_exit(1);
}

// Descriptors other than 0-2 and the control socket: a preloaded module that
// keeps a file open would hand its Python object a dead fd in every job
// (containment closes them all).
std::string stray_fds(int control) {
  std::string out;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      int fd = std::atoi(e->d_name);
      if (fd <= 2 || fd == control || fd == ::dirfd(d)) continue;
      char target[256] = {};
      std::string link = std::string("/proc/self/fd/") + e->d_name;
      (void)!::readlink(link.c_str(), target, sizeof(target) - 1);
      out += (out.empty() ? "" : ", ") + std::to_string(fd) + " -> " + target;
    }
    ::closedir(d);
  }
  return out;
}

size_t thread_count() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

// The zygote's own view: a private mount namespace whose /tmp is a private
// tmpfs, so what the imports write (matplotlib's font cache) goes nowhere on
// the host and vanishes with the zygote. On a stored image, the image's /usr
// and /etc replace the host's there: the dynamic loader (ld.so.cache), the
// interpreter, its modules and their configuration are the image's. What
// airlock itself had loaded (libc, libstdc++) stays the host's, so the image
// must be of the host's Debian release or older (docs/image-mounts.md).
// The sandboxes cloned from here build their own root and never see this one.
Status private_view(int image_root) {
  if (::unshare(CLONE_NEWNS) < 0) return fail_errno("unshare the mount namespace");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) return fail_errno("make / private");
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777") < 0)
    return fail_errno("mount a private /tmp");
  if (auto st = detach_shared_image_copies(); !st) return st;
  if (image_root < 0) return {};
  for (const char* dir : {"usr", "etc"})
    if (auto st = attach_image_subtree(image_root, dir, std::string("/") + dir); !st) return st;
  ::close(image_root);  // attached; the mounts hold the image now
  return {};
}

Status serve_one(int control, const EmbeddedPython& python, const sys::Received& request) {
  wire::Reader r(request.bytes);
  uint32_t has_cgroup = r.u32();
  uint32_t has_stdin = r.u32();
  std::string spec_bytes = r.str();
  // sync, stdout, stderr, then stdin and the cgroup when sent, then the spec's.
  size_t fixed = 3 + (has_stdin ? 1 : 0) + (has_cgroup ? 1 : 0);
  if (!r.done() || request.fds.size() < fixed) return fail("a malformed request");
  int stdin_fd = has_stdin ? request.fds[3].get() : -1;
  int cgroup_fd = has_cgroup ? request.fds[3 + (has_stdin ? 1 : 0)].get() : -1;
  std::vector<int> attach;
  for (size_t i = fixed; i < request.fds.size(); ++i) attach.push_back(request.fds[i].get());
  auto spec = decode_spec(spec_bytes, attach);
  if (!spec) return std::unexpected(spec.error());
  spec->in_process = &run_preloaded_payload;
  int pidfd = -1;
  python.before_fork();
  auto pid = clone_sandbox(*spec, cgroup_fd,
                           ChildFds{request.fds[0].get(), request.fds[1].get(), request.fds[2].get(), stdin_fd},
                           &pidfd);
  python.after_fork_parent();
  if (!pid) return std::unexpected(pid.error());
  UniqueFd owned(pidfd);
  wire::Writer w;
  w.u32(0);
  w.u32(static_cast<uint32_t>(*pid));
  w.str("");
  return sys::send_with_fds(control, w.take(), {owned.get()});
}

void reply_error(int control, const Error& error) {
  wire::Writer w;
  w.u32(1);
  w.u32(static_cast<uint32_t>(error.err));
  w.str(error.what);
  (void)sys::send_with_fds(control, w.take(), {});
}

}  // namespace

int run_zygote(int control, const ZygoteOptions& options) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // Whatever the starter leaked to us (beyond the control socket and the image).
  ::close_range(static_cast<unsigned>(std::max(control, options.image_root)) + 1, ~0U, 0);
  auto say = [&](const std::string& text) { (void)sys::send_with_fds(control, text, {}); };
  if (auto st = private_view(options.image_root); !st) return say("error: " + st.error().message()), 1;
  auto version = python_version(options.python);
  if (!version) return say("error: " + version.error().message()), 1;
  auto python = EmbeddedPython::start(libpython_of(*version), options.python);
  if (!python) return say("error: " + python.error().message()), 1;
  g_python = &*python;
  if (!python->run(preload_code(options.modules)))
    return say("error: importing the preloaded modules failed (see the zygote's stderr)"), 1;
  // A fork copies only the calling thread: the interpreter must have no other.
  if (size_t n = thread_count(); n != 1)
    return say("error: the preloaded interpreter runs " + std::to_string(n) +
               " threads; set OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, NUMEXPR_NUM_THREADS to 1 or preload fewer modules"), 1;
  if (std::string fds = stray_fds(control); !fds.empty())
    return say("error: the preloaded modules keep descriptors open (" + fds + ")"), 1;
  // Sandboxes are our children; they are released when they exit, and each
  // one's init resets SIGCHLD for itself.
  struct sigaction sa{};
  sa.sa_handler = SIG_DFL;
  sa.sa_flags = SA_NOCLDWAIT;
  ::sigaction(SIGCHLD, &sa, nullptr);
  say("ready " + *version);
  for (;;) {
    auto request = sys::recv_with_fds(control, kMaxRequest);
    if (!request) return 1;
    if (request->bytes.empty() && request->fds.empty()) {
      // The host closed the socket: no more sandboxes. Those made live on
      // (their inits die with us: parent-death signal), so wait for the
      // last to end; with SA_NOCLDWAIT, wait() returns only then (ECHILD).
      ::close(control);
      while (::wait(nullptr) >= 0 || errno == EINTR) {
      }
      return 0;
    }
    if (auto st = serve_one(control, *python, *request); !st) reply_error(control, st.error());
    ::explicit_bzero(request->bytes.data(), request->bytes.size());
  }
}

Result<std::unique_ptr<Zygote>> Zygote::start(const std::string& airlock_binary,
                                              const ZygoteOptions& options) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return fail_errno("create the zygote's socket");
  UniqueFd host(pair[0]), child(pair[1]);
  // Above the numbers the child's are dup'ed to, so neither dup2 clobbers the other.
  UniqueFd image(options.image_root >= 0 ? ::fcntl(options.image_root, F_DUPFD_CLOEXEC, 10) : -1);
  if (options.image_root >= 0 && !image) return fail_errno("pass the image to the preloaded interpreter");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, child.get(), 3);
  std::vector<std::string> args = {airlock_binary, "zygote", "--python", options.python};
  if (image) {
    posix_spawn_file_actions_adddup2(&actions, image.get(), 4);
    args.insert(args.end(), {"--image-root", "4"});
  }
  for (const auto& m : options.modules) {
    args.push_back("--module");
    args.push_back(m);
  }
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = options.env;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, airlock_binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return fail_with("start the preloaded interpreter " + airlock_binary, rc);
  child.reset();
  auto zygote = std::unique_ptr<Zygote>(new Zygote(pid, std::move(host), ""));
  auto hello = sys::recv_with_fds(zygote->control_.get(), 4096);
  if (!hello) return std::unexpected(hello.error());
  if (hello->bytes.rfind("ready ", 0) != 0)
    return fail("the preloaded interpreter did not start: " +
                (hello->bytes.empty() ? std::string("it exited") : hello->bytes));
  zygote->version_ = hello->bytes.substr(6);
  return zygote;
}

Zygote::~Zygote() {
  {
    std::lock_guard lock(launch_mutex_);
    control_.reset();
  }
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  int status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void Zygote::retire() {
  std::lock_guard lock(launch_mutex_);  // not in the middle of a launch
  control_.reset();
}

bool Zygote::exited() {
  std::lock_guard lock(launch_mutex_);
  if (reaped_) return true;
  int status;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) reaped_ = true;
  return reaped_;
}

uint64_t Zygote::pss_bytes() const {
  // "Pss:  41234 kB" in the rollup of every mapping; 0 when gone or unreadable.
  std::string path = "/proc/" + std::to_string(pid_) + "/smaps_rollup";
  FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof(line), f))
    if (std::strncmp(line, "Pss:", 4) == 0) {
      kb = std::strtoull(line + 4, nullptr, 10);
      break;
    }
  std::fclose(f);
  return kb * 1024;
}

Result<SandboxProcess> Zygote::launch(LaunchRequest request) {
  std::lock_guard lock(launch_mutex_);  // one request and its answer at a time on the socket
  if (!control_) return fail("the preloaded interpreter was retired");
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return fail_errno("create the sandbox sync socket");
  UniqueFd host_end(pair[0]), child_end(pair[1]);
  EncodedSpec spec = encode_spec(*request.spec);
  int cgroup_fd = request.cgroup->clone_into_fd();
  wire::Writer w;
  w.u32(cgroup_fd >= 0 ? 1 : 0);
  w.u32(request.stdin_r ? 1 : 0);
  w.str(spec.bytes);
  std::vector<int> fds = {child_end.get(), request.stdout_w.get(), request.stderr_w.get()};
  if (request.stdin_r) fds.push_back(request.stdin_r.get());
  if (cgroup_fd >= 0) fds.push_back(cgroup_fd);
  fds.insert(fds.end(), spec.fds.begin(), spec.fds.end());
  if (auto st = sys::send_with_fds(control_.get(), w.take(), fds); !st) return std::unexpected(st.error());
  child_end.reset();
  request.stdout_w.reset();
  request.stderr_w.reset();
  request.stdin_r.reset();
  auto reply = sys::recv_with_fds(control_.get(), 4096);
  if (!reply) return std::unexpected(reply.error());
  wire::Reader r(reply->bytes);
  uint32_t failed = r.u32(), value = r.u32();
  std::string what = r.str();
  if (!r.done()) return fail("the preloaded interpreter ended or answered nonsense");
  if (failed) return fail_with("preloaded interpreter: " + what, static_cast<int>(value));
  if (reply->fds.size() != 1) return fail("the preloaded interpreter sent no pidfd");
  SandboxProcess process(static_cast<pid_t>(value), std::move(reply->fds[0]), std::move(host_end),
                         /*is_child=*/false);
  if (auto st = finish_launch(process, request.ids, *request.spec, *request.cgroup); !st)
    return std::unexpected(st.error());
  return process;
}

}  // namespace airlock::sandbox
