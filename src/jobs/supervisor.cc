#include "jobs/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "base/terminal_text.h"
#include "jobs/wall_time.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTickMs = 10;                 // cpu-time checks
constexpr int kDrainAfterExitMs = 2000;     // streams held open by nobody should close at once

uint64_t ms_since(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

// Where the live copy of a stream goes. A terminal gets terminal_safe()
// text: the job's bytes must not drive the operator's terminal.
struct Echo {
  int fd = -1;
  std::optional<TerminalStream> escape;  // set when `fd` is a terminal

  explicit Echo(int to) : fd(to) {
    if (fd >= 0 && ::isatty(fd)) escape.emplace();
  }
  void write(std::string_view bytes) {
    if (fd < 0) return;
    (void)sys::write_all(fd, escape ? escape->feed(bytes) : std::string(bytes));
  }
  void finish() {
    if (fd >= 0 && escape) (void)sys::write_all(fd, escape->finish());
  }
};

// Reads what is available; returns false at EOF.
bool pump(int fd, CapturedStream& stream, uint64_t cap, Echo& echo) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN;  // other errors end the stream
    if (n == 0) return false;
    stream.bytes += static_cast<uint64_t>(n);
    size_t room = stream.text.size() < cap ? cap - stream.text.size() : 0;
    size_t keep = std::min(room, static_cast<size_t>(n));
    if (keep < static_cast<size_t>(n)) stream.truncated = true;
    if (keep > 0) {
      stream.text.append(buf, keep);
      echo.write(std::string_view(buf, keep));
    }
    if (static_cast<size_t>(n) < sizeof(buf)) return true;
  }
}

// Reads what is available into the reader; returns false at EOF, or once
// the channel carried more than its limit (the caller then closes it).
bool pump_requests(int fd, requests::RequestReader& reader) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN;
    if (n == 0) return false;
    if (!reader.feed(std::string_view(buf, static_cast<size_t>(n)))) return false;
    if (static_cast<size_t>(n) < sizeof(buf)) return true;
  }
}

}  // namespace

Result<SuperviseResult> supervise(sandbox::SandboxProcess& process, sandbox::Cgroup& cgroup,
                                  UniqueFd stdout_r, UniqueFd stderr_r,
                                  const SuperviseOptions& opt, RequestChannel requests) {
  SuperviseResult result;
  auto start = Clock::now();
  const Clock::time_point payload_started =
      opt.payload_started == Clock::time_point{} ? start : opt.payload_started;
  std::optional<Clock::time_point> payload_ended;  // init's kExited report, or init's exit
  UniqueFd requests_r = std::move(requests.read_end);
  for (int fd : {stdout_r.get(), stderr_r.get(), requests_r.get()})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  UniqueFd tick(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!tick) return fail_errno("create a timer");
  itimerspec every{{0, kTickMs * 1'000'000}, {0, kTickMs * 1'000'000}};
  if (::timerfd_settime(tick.get(), 0, &every, nullptr) < 0) return fail_errno("arm a timer");

  Echo echo_out(opt.echo_stdout), echo_err(opt.echo_stderr);
  bool sync_open = true;    // messages from init until it closes the socket
  bool init_done = false;   // init has exited (its pidfd is readable)
  bool ending = false;      // airlock is ending the job
  std::optional<Clock::time_point> init_exit_at;
  auto end_job = [&]() -> Status {
    if (ending) return {};
    ending = true;
    if (auto st = cgroup.kill_all(); !st) return st;
    return process.kill();
  };

  while (stdout_r || stderr_r || requests_r || sync_open || !init_done) {
    pollfd fds[7] = {{stdout_r.get(), POLLIN, 0},
                     {stderr_r.get(), POLLIN, 0},
                     {sync_open ? process.sync_fd() : -1, POLLIN, 0},
                     {init_done ? -1 : process.pidfd(), POLLIN, 0},
                     {tick.get(), POLLIN, 0},
                     {ending ? -1 : opt.cancel_fd, POLLIN, 0},
                     {requests_r.get(), POLLIN, 0}};
    if (::poll(fds, 7, -1) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll the job");
    }
    if (fds[0].revents && !pump(stdout_r.get(), result.out, opt.stream_cap, echo_out))
      stdout_r.reset();
    if (fds[1].revents && !pump(stderr_r.get(), result.err, opt.stream_cap, echo_err))
      stderr_r.reset();
    if (fds[6].revents && !pump_requests(requests_r.get(), *requests.reader)) requests_r.reset();
    if (fds[2].revents) {
      auto msg = process.read_message();
      if (!msg) return std::unexpected(msg.error());
      if (!msg->has_value()) sync_open = false;
      else if ((*msg)->kind == sandbox::MsgKind::kExited) {
        result.wait_status = (*msg)->value;
        if (!payload_ended) payload_ended = Clock::now();
      }
    }
    if (fds[3].revents) {
      // init has fully exited: the kernel has already killed and released
      // every other process of its pid namespace. What is left in the cgroup
      // (nothing, unless something escaped the namespace) is killed now.
      init_done = true;
      init_exit_at = Clock::now();
      if (!payload_ended) payload_ended = init_exit_at;
      if (auto st = cgroup.kill_all(); !st) return std::unexpected(st.error());
    }
    if (fds[4].revents) {
      uint64_t expirations;
      (void)!::read(tick.get(), &expirations, sizeof(expirations));
      if (!ending && !init_done) {
        if (ms_since(start) >= opt.timeout_ms) {
          result.timed_out = true;
          if (auto st = end_job(); !st) return std::unexpected(st.error());
        } else if (opt.cpu_time_ms > 0) {
          auto cpu = cgroup.cpu_ns();
          if (cpu && *cpu >= opt.cpu_time_ms * 1'000'000) {
            result.cpu_exceeded = true;
            if (auto st = end_job(); !st) return std::unexpected(st.error());
          }
        }
      }
      // A stream still open long after every process died: nobody can write it.
      if (init_exit_at && Clock::now() - *init_exit_at > std::chrono::milliseconds(kDrainAfterExitMs)) {
        stdout_r.reset();
        stderr_r.reset();
        requests_r.reset();
        sync_open = false;
      }
    }
    if (fds[5].revents && !ending && !init_done) {
      result.cancelled = true;
      if (auto st = end_job(); !st) return std::unexpected(st.error());
    }
  }
  if (requests.reader != nullptr) requests.reader->finish();
  echo_out.finish();
  echo_err.finish();
  result.wall_ms = billed_wall_ms(payload_ended.value_or(Clock::now()) - payload_started);
  return result;
}

}  // namespace airlock::jobs
