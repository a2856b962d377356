#include "jobs/session.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include <nlohmann/json.hpp>

#include "jobs/job_sandbox.h"
#include "jobs/session_kernel.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxLine = 64 << 20;  // an answer with figures can be large; beyond this the kernel misbehaves

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

Result<CallResult> parse_kernel_answer(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("the kernel sent something that is not a JSON object");
  CallResult r;
  r.id = str_field(j, "id");
  r.status = str_field(j, "status");
  r.stdout_text = str_field(j, "stdout");
  r.stderr_text = str_field(j, "stderr");
  r.result = str_field(j, "result");
  r.html = str_field(j, "html");
  r.error = str_field(j, "error");
  if (auto it = j.find("figures"); it != j.end() && it->is_array())
    for (const auto& f : *it)
      if (f.is_string()) r.figures_png_base64.push_back(f.get<std::string>());
  if (auto it = j.find("ms"); it != j.end() && it->is_number()) r.ms = it->get<double>();
  return r;
}

Result<std::unique_ptr<Session>> Session::open(const Options& o) {
  PrepareContext ctx{o.state_dir, o.cgroups, nullptr, /*with_stdin=*/true};
  auto sb = prepare_sandbox(o.policy, ctx);
  if (!sb) return std::unexpected(sb.error());
  auto session = std::unique_ptr<Session>(new Session(std::move(*sb)));
  sandbox::Command command;
  command.argv = {"python3", "-c", kernel_source()};
  command.env = job_environment(o.policy);
  command.exec_candidates = exec_candidates("python3", command.env);
  for (int fd : {session->sandbox_.stdout_r.get(), session->sandbox_.stderr_r.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (auto st = session->sandbox_.process->start(command); !st) return std::unexpected(st.error());
  CallResult raw;
  auto ready = session->await_answer("ready", now_ms() + 30'000, raw);
  if (!ready) return std::unexpected(ready.error());
  if (!*ready) return fail("the session's kernel did not start: " + raw.stderr_text);
  return session;
}

Session::~Session() {
  sandbox_.process.reset();  // init dies, and with it every process of the session
  if (sandbox_.cgroup && sandbox_.cgroup->kill_all()) (void)sandbox_.cgroup->remove();
  sandbox_.cgroup.reset();
}

uid_t Session::host_uid() const { return sandbox::IdMap{sandbox_.host_base()}.host_uid_of_job(); }

Status Session::interrupt() { return sandbox_.process->signal_payload(SIGINT); }

Result<std::optional<CallResult>> Session::await_answer(const std::string& id, int64_t deadline_ms,
                                                         CallResult& raw) {
  const std::string mark = kKernelMark;
  for (;;) {
    // Complete lines first: answers are marked, anything else is raw output.
    for (size_t nl; (nl = out_buf_.find('\n')) != std::string::npos;) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      if (line.rfind(mark, 0) != 0) {
        raw.stdout_text += line + "\n";
        continue;
      }
      auto answer = parse_kernel_answer(line.substr(mark.size()));
      if (answer && answer->id == id) return std::optional<CallResult>(std::move(*answer));
    }
    if (out_buf_.size() > kMaxLine) return fail("the session's kernel sent a line over 64 MiB");
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) return std::optional<CallResult>();
    pollfd fds[3] = {{sandbox_.stdout_r.get(), POLLIN, 0},
                     {sandbox_.stderr_r.get(), POLLIN, 0},
                     {sandbox_.process->pidfd(), POLLIN, 0}};
    if (::poll(fds, 3, static_cast<int>(left)) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll the session");
    }
    char buf[65536];
    if (fds[0].revents) {
      ssize_t n = ::read(sandbox_.stdout_r.get(), buf, sizeof(buf));
      if (n > 0) out_buf_.append(buf, static_cast<size_t>(n));
      if (n == 0) alive_ = false;
    }
    if (fds[1].revents) {
      ssize_t n = ::read(sandbox_.stderr_r.get(), buf, sizeof(buf));
      if (n > 0) raw.stderr_text.append(buf, static_cast<size_t>(n));
    }
    if (fds[2].revents) alive_ = false;  // init exited: the sandbox is gone
    if (!alive_ && out_buf_.find('\n') == std::string::npos) return std::optional<CallResult>();
  }
}

Result<CallResult> Session::exec(const std::string& code, int timeout_ms) {
  CallResult raw;
  std::string id = "call-" + std::to_string(next_call_++);
  raw.id = id;
  if (!alive_) {
    raw.status = "sandbox_died";
    raw.error = "the session's sandbox has ended";
    return raw;
  }
  std::string request = nlohmann::json{{"id", id}, {"code", code}}.dump(-1, ' ', false,
                                                                         nlohmann::json::error_handler_t::replace) + "\n";
  if (auto st = sys::write_all(sandbox_.stdin_w.get(), request); !st) {
    alive_ = false;
    raw.status = "sandbox_died";
    raw.error = "the session's kernel does not read its requests: " + st.error().message();
    return raw;
  }
  auto answer = await_answer(id, now_ms() + timeout_ms, raw);
  if (!answer) return std::unexpected(answer.error());
  bool timed_out = false;
  if (!*answer && alive_) {
    timed_out = true;
    if (auto st = interrupt(); !st) return std::unexpected(st.error());
    answer = await_answer(id, now_ms() + 5000, raw);
    if (!answer) return std::unexpected(answer.error());
  }
  if (!*answer) {
    raw.status = alive_ ? "timed_out" : "sandbox_died";
    raw.error = alive_ ? "the call did not end within its timeout, nor after an interrupt"
                       : "the session's sandbox ended during the call";
    return raw;
  }
  CallResult& result = **answer;
  result.stdout_text = raw.stdout_text + result.stdout_text;
  result.stderr_text = raw.stderr_text + result.stderr_text;
  if (timed_out && result.status == "interrupted") result.status = "timed_out";
  return std::move(result);
}

}  // namespace airlock::jobs
