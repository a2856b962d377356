#include "sessions/live_session.h"

#include <fcntl.h>

#include <cstring>

#include "base/check.h"
#include "base/sha256.h"
#include "egress/attempt_log.h"
#include "jobs/record.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxQueued = 16;
// Ended calls kept in memory with their whole output and result; older ones
// are answered from the store (session_calls).
constexpr size_t kKeptFinished = 64;
constexpr size_t kStoredTextBytes = 64 << 10;  // of each output kept in the store and the record
constexpr auto kInterruptGrace = std::chrono::seconds(2);

std::string capped(const std::string& text, size_t cap) {
  if (text.size() <= cap) return text;
  return text.substr(0, cap) + "\n[airlock: cut at " + std::to_string(cap) + " of " + std::to_string(text.size()) +
         " bytes]";
}

}  // namespace

uint64_t held_bytes(const Exec& e) {
  const auto& r = e.result;
  uint64_t n = e.code.size() + r.stdout_text.size() + r.stderr_text.size() + r.result.size() + r.html.size() +
               r.error.size() + r.cwd.size();
  for (const auto& f : r.figures_png_base64) n += f.size();
  return n + (e.output ? e.output->end_offset() : 0);
}

json exec_view(const Exec& e, bool with_result, const SessionDataRequests* requests) {
  json v = {{"id", e.id},
            {"session_id", e.session_id},
            {"kind", e.kind},
            {"state", e.state},
            {"timeout_s", static_cast<double>(e.timeout_ms) / 1000},
            {"created_at", e.created_at},
            {"started_at", e.started_at},
            {"finished_at", e.finished_at},
            {"output_bytes", e.output ? e.output->end_offset() : 0}};
  if (!e.answers.empty()) v["answers"] = e.answers;
  if (e.state != "finished") return v;
  const auto& r = e.result;
  v["status"] = r.status;
  // The data requests it sent, with their answers as of now.
  json asked = requests ? requests->call_json(e.asked) : e.asked_json;
  if (asked.is_object())
    for (const char* k : {"data_requests", "data_requests_refused"})
      if (asked.contains(k)) v[k] = asked[k];
  if (!with_result) return v;
  v["result"] = {{"status", r.status},
                 {"stdout", r.stdout_text},
                 {"stderr", r.stderr_text},
                 {"value", r.result},
                 {"html", r.html},
                 {"error", r.error},
                 {"figures", r.figures_png_base64},
                 {"exit_code", r.exit_code},
                 {"cwd", r.cwd},
                 {"ms", r.ms},
                 {"truncated",
                  {{"value", r.truncated.value},
                   {"html", r.truncated.html},
                   {"error", r.truncated.error},
                   {"figures", r.truncated.figures}}},
                 {"dropped_kernel_lines", r.dropped_lines},
                 {"usage", {{"cpu_ms", r.usage.cpu_ms}, {"peak_memory_bytes", r.usage.peak_memory_bytes}}}};
  for (const char* k : {"data_requests", "data_requests_refused"})
    if (v.contains(k)) v["result"][k] = v[k];
  return v;
}

json stored_call(const Exec& e) {
  const auto& r = e.result;
  json figures = json::array();
  for (const auto& f : r.figures_png_base64) figures.push_back(Sha256::of(f));
  json call = {{"id", e.id},
          {"seq", e.seq},
          {"kind", e.kind},
          {"code", capped(e.code, kStoredTextBytes)},
          {"code_sha256", Sha256::of(e.code)},
          {"status", r.status},
          {"created_at", e.created_at},
          {"started_at", e.started_at},
          {"finished_at", e.finished_at},
          {"ms", r.ms},
          {"exit_code", r.exit_code},
          {"usage", {{"cpu_ms", r.usage.cpu_ms}, {"peak_memory_bytes", r.usage.peak_memory_bytes}}},
          {"stdout", capped(r.stdout_text, kStoredTextBytes)},
          {"stderr", capped(r.stderr_text, kStoredTextBytes)},
          {"value", capped(r.result, kStoredTextBytes)},
          {"error", capped(r.error, kStoredTextBytes)},
          {"figures_base64_sha256", figures}};
  if (!e.answers.empty()) call["answers"] = e.answers;
  if (e.asked_json.is_object()) call.update(e.asked_json);
  return call;
}

ApiResult<OpenWorkspace> open_workspace(const LiveSession& session) {
  auto engine = session.engine();
  if (!engine) return api_error(409, "session_closed", "the session closed");
  UniqueFd root(::openat(engine->workspace_mount(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return internal(std::string("open the session's workspace: ") + std::strerror(errno));
  return OpenWorkspace{std::move(engine), std::move(root)};
}

LiveSession::LiveSession(store::SessionRow row, SessionRequest request, jobs::Session::Options options,
                         uint64_t output_cap, uint64_t kept_bytes, Hooks hooks, SessionRequestLimits request_limits)
    : row_(std::move(row)),
      request_(std::move(request)),
      options_(std::move(options)),
      output_cap_(output_cap),
      kept_bytes_(kept_bytes),
      hooks_(std::move(hooks)),
      requests_(request_limits) {}

LiveSession::~LiveSession() {
  if (thread_.joinable()) thread_.join();
}

void LiveSession::start(std::function<void(const Status&)> opened) {
  AIRLOCK_CHECK(!thread_.joinable());
  thread_ = std::thread([this, opened = std::move(opened)] { run(opened); });
}

void LiveSession::run(std::function<void(const Status&)> opened) {
  auto engine = hooks_.open ? hooks_.open(options_) : jobs::Session::open(options_);
  {
    std::lock_guard lock(mu_);
    if (engine) {
      engine_ = std::shared_ptr<jobs::Session>(std::move(*engine));
      start_ = std::string(jobs::start_kind_name(engine_->start_kind()));
      start_note_ = engine_->start_note();
      open_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - opened_at_).count();
      if (state_ == "starting") state_ = "ready";
      last_active_ = Clock::now();
    } else if (close_reason_.empty()) {
      close_reason_ = "failed_to_start";
    }
  }
  opened(engine ? Status{} : Status(std::unexpected(engine.error())));

  std::unique_lock lock(mu_);
  while (engine_) {
    wake_.wait(lock, [this] { return !close_reason_.empty() || !queue_.empty(); });
    if (!close_reason_.empty()) break;
    running_ = queue_.front();
    queue_.pop_front();
    auto exec = running_;
    auto engine_ref = engine_;
    exec->state = "running";
    exec->started_at = jobs::now_rfc3339();

    jobs::CallRequest call{exec->kind, exec->code, static_cast<int>(exec->timeout_ms)};
    call.request_count = requests_.call_count();
    call.request_bytes = requests_.call_bytes();
    call.answers = requests_.known();
    lock.unlock();
    auto output = exec->output;
    auto result = engine_ref->exec(exec->id, call, [output](bool is_stderr, std::string_view text) {
      output->append(is_stderr, text);
    });
    jobs::CallResult r;
    if (result) {
      r = std::move(*result);
    } else {
      r.status = "sandbox_error";
      r.error = "airlock failed to run the call: " + result.error().message();
    }

    lock.lock();
    // The host judges what the call asked (src/requests), under the session's limits.
    exec->asked = requests_.admit(exec->id, r);
    std::string status = status_after_requests(r.status, exec->asked.ids.size());
    if (status == "error" && r.status == "input_requested")
      r.error = "the call asked for data, but no request was accepted (data_requests_refused says why)";
    r.status = std::move(status);
    r.data_requests.clear();
    if (!exec->asked.ids.empty() || !exec->asked.refused.empty()) exec->asked_json = requests_.call_json(exec->asked);
    exec->result = std::move(r);
    exec->state = "finished";
    exec->finished_at = jobs::now_rfc3339();
    running_.reset();
    last_active_ = Clock::now();
    forget_old_locked();
    bool died = !engine_ref->alive();
    if (died && close_reason_.empty()) close_reason_ = "sandbox_died";
    lock.unlock();
    output->finish();
    if (hooks_.call_ended) hooks_.call_ended(*exec);
    lock.lock();
  }
  state_ = "closing";
  auto cancelled = cancel_queued_locked("the session closed (" + close_reason_ + ") before the call ran");
  auto engine_ref = std::move(engine_);
  lock.unlock();
  // Outside the lock: a stream's final event reads the call's view.
  for (auto& output : cancelled) output->finish();
  if (engine_ref) {
    // Every request the code sent through the gateway, for the record.
    auto network = engine_ref->finish_network();
    if (!network.list.empty() || network.dropped) {
      nlohmann::json attempts = nlohmann::json::array();
      for (const auto& a : network.list) attempts.push_back(egress::to_json(a));
      note({{"event", "network"}, {"attempts", attempts}, {"dropped", network.dropped}});
    }
  }
  engine_ref.reset();  // the sandbox ends here, unless a file operation still holds it for a moment

  lock.lock();
  closed_at_ = jobs::now_rfc3339();
  lock.unlock();
  if (hooks_.closed) hooks_.closed(*this);  // the record is stored before the session shows as closed
  lock.lock();
  state_ = "closed";
  auto callbacks = std::move(on_closed_);
  on_closed_.clear();
  lock.unlock();
  for (auto& f : callbacks) f();
}

void LiveSession::forget_old_locked() {
  // From the newest back: ended calls are kept while they fit.
  size_t finished = 0;
  uint64_t bytes = 0;
  for (auto it = execs_.rbegin(); it != execs_.rend();) {
    if ((*it)->state != "finished") {
      ++it;
      continue;
    }
    bytes += held_bytes(**it);
    if (finished > 0 && (finished >= kKeptFinished || bytes > kept_bytes_)) {
      it = std::reverse_iterator(execs_.erase(std::next(it).base()));  // a reader holding it keeps it alive until done
    } else {
      ++finished;
      ++it;
    }
  }
}

std::vector<std::shared_ptr<LogBuffer>> LiveSession::cancel_queued_locked(const std::string& why) {
  std::vector<std::shared_ptr<LogBuffer>> outputs;
  for (auto& e : queue_) {
    e->state = "finished";
    e->result.status = "cancelled";
    e->result.error = why;
    e->finished_at = jobs::now_rfc3339();
    outputs.push_back(e->output);
  }
  queue_.clear();
  return outputs;
}

Result<nlohmann::json> LiveSession::submit(const ExecRequest& request, const std::string& exec_id,
                                           const std::string& key_id) {
  std::lock_guard lock(mu_);
  if (!close_reason_.empty() || state_ == "closed") return fail("the session is closed (" + close_reason_ + ")");
  if (queue_.size() >= kMaxQueued) return fail("16 calls already wait in this session");
  std::string now = jobs::now_rfc3339();
  if (!request.answers.empty()) {
    if (auto st = requests_.answer(request.answers, exec_id, key_id, now); !st) return std::unexpected(st.error());
    for (const auto& id : request.answers)
      notes_.push_back({{"event", "data_request_answer"}, {"request_id", id}, {"answer", "call"},
                        {"by_call", exec_id}, {"key_id", key_id}, {"at", now}});
  }
  auto e = std::make_shared<Exec>();
  e->id = exec_id;
  e->session_id = row_.id;
  e->kind = request.kind;
  e->code = request.code;
  e->timeout_ms = request.timeout_ms;
  e->answers = request.answers;
  e->seq = next_seq_++;
  e->created_at = now;
  e->output = std::make_shared<LogBuffer>(output_cap_);
  queue_.push_back(e);
  execs_.push_back(e);
  last_active_ = Clock::now();
  wake_.notify_all();
  return exec_view(*e, false, &requests_);
}

Result<json> LiveSession::refuse_request(const std::string& request_id, const std::string& reason,
                                         const std::string& key_id) {
  std::lock_guard lock(mu_);
  std::string now = jobs::now_rfc3339();
  if (auto st = requests_.refuse(request_id, reason, key_id, now); !st) return std::unexpected(st.error());
  notes_.push_back({{"event", "data_request_answer"}, {"request_id", request_id}, {"answer", "refused"},
                    {"reason", reason}, {"key_id", key_id}, {"at", now}});
  last_active_ = Clock::now();
  return requests_.request_json(request_id);
}

json LiveSession::data_requests_json() const {
  std::lock_guard lock(mu_);
  return requests_.to_json();
}

std::shared_ptr<Exec> LiveSession::exec(const std::string& id) const {
  std::lock_guard lock(mu_);
  for (const auto& e : execs_)
    if (e->id == id) return e;
  return nullptr;
}

std::optional<json> LiveSession::exec_json(const std::string& id) const {
  std::lock_guard lock(mu_);
  for (const auto& e : execs_)
    if (e->id == id) return exec_view(*e, true, &requests_);
  return std::nullopt;
}

std::vector<json> LiveSession::exec_jsons() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  for (const auto& e : execs_) out.push_back(exec_view(*e, false, &requests_));
  return out;
}

std::shared_ptr<jobs::Session> LiveSession::engine() const {
  std::lock_guard lock(mu_);
  return engine_;
}

Status LiveSession::interrupt() {
  auto e = engine();
  if (!e) return fail("the session is not open");
  touch();
  return e->interrupt();
}

Status LiveSession::restart() {
  auto e = engine();
  if (!e) return fail("the session is not open");
  touch();
  return e->restart();
}

void LiveSession::close(const std::string& reason, std::function<void()> done) {
  std::shared_ptr<jobs::Session> interrupt_it;
  {
    std::lock_guard lock(mu_);
    if (state_ == "closed") {
      if (!done) return;
    } else {
      if (done) on_closed_.push_back(std::move(done));
      if (close_reason_.empty()) {
        close_reason_ = reason;
        closing_since_ = Clock::now();
        if (running_) interrupt_it = engine_;
      }
      wake_.notify_all();
      done = nullptr;
    }
  }
  if (interrupt_it) (void)interrupt_it->interrupt();
  if (done) done();
}

Status LiveSession::reserve_upload(const std::string& path, uint64_t size) {
  std::lock_guard lock(mu_);
  const auto& policy = request_.policy.inputs;
  if (reserved_.count(path)) return fail("\"" + path + "\" is being uploaded already");
  auto it = uploaded_.find(path);
  uint64_t total = size;
  for (const auto& [p, bytes] : uploaded_)
    if (p != path) total += bytes;
  if (it == uploaded_.end() && uploaded_.size() >= policy.max_count)
    return fail("the session has " + std::to_string(uploaded_.size()) + " uploaded files, the input policy's limit");
  if (total > policy.max_total_bytes)
    return fail("uploads would total " + std::to_string(total) + " bytes, more than the input policy's " +
                std::to_string(policy.max_total_bytes));
  reserved_[path] = it == uploaded_.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  uploaded_[path] = size;
  return {};
}

void LiveSession::end_upload(const std::string& path, bool copied) {
  std::lock_guard lock(mu_);
  auto it = reserved_.find(path);
  AIRLOCK_CHECK(it != reserved_.end());
  if (!copied) {
    if (it->second) uploaded_[path] = *it->second;
    else uploaded_.erase(path);
  }
  reserved_.erase(it);
}

void LiveSession::forget_uploads(const std::string& path) {
  std::lock_guard lock(mu_);
  std::erase_if(uploaded_, [&](const auto& entry) {
    return !reserved_.count(entry.first) && (entry.first == path || entry.first.rfind(path + "/", 0) == 0);
  });
}

void LiveSession::touch() {
  std::lock_guard lock(mu_);
  last_active_ = Clock::now();
}

std::string LiveSession::due_reason(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  if (state_ != "ready" || !close_reason_.empty()) return "";
  if (now - opened_at_ >= std::chrono::seconds(request_.max_lifetime_s)) return "max_lifetime";
  // The idle clock runs only while no call runs or waits.
  if (!running_ && queue_.empty() && now - last_active_ >= std::chrono::seconds(request_.idle_timeout_s))
    return "idle_timeout";
  return "";
}

void LiveSession::nudge_closing(Clock::time_point now) {
  std::shared_ptr<jobs::Session> e;
  {
    std::lock_guard lock(mu_);
    if (close_reason_.empty() || !running_ || restarted_for_close_ || now - closing_since_ < kInterruptGrace) return;
    restarted_for_close_ = true;
    e = engine_;
  }
  if (e) (void)e->restart();  // the call ignored the interrupt: a new interpreter ends it
}

bool LiveSession::closed() const {
  std::lock_guard lock(mu_);
  return state_ == "closed";
}

std::string LiveSession::close_reason() const {
  std::lock_guard lock(mu_);
  return close_reason_;
}

std::string LiveSession::closed_at() const {
  std::lock_guard lock(mu_);
  return closed_at_;
}

void LiveSession::note(json event) {
  event["at"] = jobs::now_rfc3339();
  std::lock_guard lock(mu_);
  notes_.push_back(std::move(event));
}

std::vector<json> LiveSession::notes() const {
  std::lock_guard lock(mu_);
  return notes_;
}

std::string LiveSession::start() const {
  std::lock_guard lock(mu_);
  return start_;
}

json LiveSession::view() const {
  std::lock_guard lock(mu_);
  auto now = Clock::now();
  auto left = [&](Clock::duration d) { return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(d).count()); };
  json calls = json::array();
  for (const auto& e : execs_) calls.push_back(exec_view(*e, false, &requests_));
  std::string state = state_;
  if (state == "ready" && (running_ || !queue_.empty())) state = "busy";
  json v = {{"id", row_.id},
            {"state", state},
            {"created_at", row_.created_at},
            {"closed_at", closed_at_},
            {"close_reason", close_reason_},
            {"idle_timeout_s", request_.idle_timeout_s},
            {"max_lifetime_s", request_.max_lifetime_s},
            {"calls", calls},
            {"events", notes_},
            {"data_requests", requests_.to_json()},
            {"request", session_request_json(request_)}};
  if (!start_.empty()) {
    v["start"] = start_;  // preloaded: forked from the preloaded interpreter (docs/sessions.md)
    v["open_ms"] = open_ms_;
    if (!start_note_.empty()) v["start_note"] = start_note_;
  }
  if (state_ == "ready") {
    v["lifetime_left_s"] = left(std::chrono::seconds(request_.max_lifetime_s) - (now - opened_at_));
    if (!running_ && queue_.empty())
      v["idle_left_s"] = left(std::chrono::seconds(request_.idle_timeout_s) - (now - last_active_));
  }
  return v;
}

}  // namespace airlock::service
