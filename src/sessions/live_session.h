// One open session inside the service: its sandbox (jobs::Session), the calls
// waiting and running in it, and the thread that runs them one at a time.
// The thread opens the sandbox first, then takes calls in order until the
// session closes (on request, idle, lifetime, or because the sandbox died),
// and ends by destroying the sandbox. Every method is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sessions/session.h"
#include "sessions/session_data_requests.h"
#include "service/api_error.h"
#include "service/log_buffer.h"
#include "sessions/session_request.h"
#include "store/types.h"

namespace airlock::service {

// One call (an "exec"): durable by id while the service runs; its output is
// kept in `output` (capped) for replay, its result once it has ended.
struct Exec {
  std::string id, session_id, kind, code;
  uint64_t timeout_ms = 0;
  int64_t seq = 0;
  std::string state = "queued";  // queued, running, finished
  std::string created_at, started_at, finished_at;
  std::shared_ptr<LogBuffer> output;
  jobs::CallResult result;  // when finished
  std::vector<std::string> answers;  // the data requests this call answers
  CallRequests asked;                // when finished: the data requests it sent
  nlohmann::json asked_json;         // ... as the store keeps them (answers as of the call's end)
};

// The bytes an ended call holds in memory (its output buffer and result).
uint64_t held_bytes(const Exec& e);
// The JSON of an exec: with the full result when `with_result` and finished.
// `requests` (the session's, for the answers of the call's data requests as
// of now) may be null: the answers as of the call's end are shown then.
nlohmann::json exec_view(const Exec& e, bool with_result, const SessionDataRequests* requests = nullptr);
// What the store keeps of an ended call (outputs capped, figures counted).
nlohmann::json stored_call(const Exec& e);

using Clock = std::chrono::steady_clock;

class LiveSession;

// The /workspace of a session that is still open, for a file operation or a
// snapshot: its sandbox, held until the operation ends, and the workspace's
// root directory. 409 session_closed once the sandbox is gone.
struct OpenWorkspace {
  std::shared_ptr<jobs::Session> engine;
  UniqueFd root;
};
ApiResult<OpenWorkspace> open_workspace(const LiveSession& session);

class LiveSession {
 public:
  struct Hooks {
    std::function<void(const Exec&)> call_ended;  // on the session's thread, after the result is set
    std::function<void(LiveSession&)> closed;     // on the session's thread, the sandbox gone
    // Opens the sandbox (a spare one when it can); unset: jobs::Session::open.
    std::function<Result<std::unique_ptr<jobs::Session>>(const jobs::Session::Options&)> open;
  };
  // `output_cap`: the live output kept per call for its stream; `kept_bytes`:
  // the ended calls' outputs and results kept in memory together.
  LiveSession(store::SessionRow row, SessionRequest request, jobs::Session::Options options, uint64_t output_cap,
              uint64_t kept_bytes, Hooks hooks, SessionRequestLimits request_limits = {});
  ~LiveSession();  // joins the thread (close() first)

  // Starts the thread; `opened` is called once, from it, when the sandbox is
  // ready or failed to open (the session then closes as "failed_to_start").
  void start(std::function<void(const Status&)> opened);

  const store::SessionRow& row() const { return row_; }
  const SessionRequest& request() const { return request_; }

  // Queues a call; its view. Fails when the session is closing or 16 calls
  // wait (kInternal), or when an id in request.answers is unknown (kNotFound)
  // or not open (kRefused); those it names are answered by this call.
  Result<nlohmann::json> submit(const ExecRequest& request, const std::string& exec_id,
                                const std::string& key_id = "");
  // Refuses data request `request_id` with `reason`; the request's JSON.
  // kNotFound: no such request; kRefused: answered or refused already.
  Result<nlohmann::json> refuse_request(const std::string& request_id, const std::string& reason,
                                        const std::string& key_id);
  // Every data request of the session with its answer ({"limits", "requests"}).
  nlohmann::json data_requests_json() const;
  // Calls waiting, running, and the latest ended ones (older ones are in the
  // store). An Exec changes under the session's lock: read it through
  // exec_json()/exec_jsons(); only its id and output buffer may be used
  // directly (the result is complete once the output buffer is finished).
  std::shared_ptr<Exec> exec(const std::string& id) const;
  std::optional<nlohmann::json> exec_json(const std::string& id) const;  // with its result
  std::vector<nlohmann::json> exec_jsons() const;                          // without results

  Status interrupt();
  Status restart();
  // Begins closing with `reason` (the first reason wins): the running call is
  // interrupted, queued calls end as "cancelled", the sandbox is destroyed.
  // `done` runs once the session is closed (at once if it already is).
  void close(const std::string& reason, std::function<void()> done = nullptr);

  // The sandbox while the session is open (null before it opens and after it closes).
  std::shared_ptr<jobs::Session> engine() const;
  void touch();  // an API call on the session: the idle clock restarts

  // For the housekeeping loop.
  std::string due_reason(Clock::time_point now) const;  // "idle_timeout", "max_lifetime" or ""
  void nudge_closing(Clock::time_point now);               // restarts a call that ignores the interrupt
  bool closed() const;
  std::string close_reason() const;
  std::string closed_at() const;
  // How the sandbox started ("preloaded" or "cold"); "" until it opened.
  std::string start() const;

  // The input policy over everything uploaded into the session: at most
  // max_count distinct paths and max_total_bytes together (a path uploaded
  // again counts once, at its new size). Reserves the upload; end_upload()
  // keeps it (`copied`) or gives it back.
  Status reserve_upload(const std::string& path, uint64_t size);
  void end_upload(const std::string& path, bool copied);
  void forget_uploads(const std::string& path);  // `path` (and what was beneath it) was deleted

  nlohmann::json view() const;
  // Events for the record: a file uploaded, downloaded or removed, a snapshot taken.
  void note(nlohmann::json event);
  std::vector<nlohmann::json> notes() const;

 private:
  void run(std::function<void(const Status&)> opened);
  // Ends every waiting call as "cancelled"; returns their output buffers, to
  // be finished once the lock is released.
  std::vector<std::shared_ptr<LogBuffer>> cancel_queued_locked(const std::string& why);
  // Keeps the latest ended calls in memory: at most kKeptFinished, and no more
  // than kept_bytes_ of them together (the latest one always).
  void forget_old_locked();

  store::SessionRow row_;
  SessionRequest request_;
  jobs::Session::Options options_;
  uint64_t output_cap_;
  uint64_t kept_bytes_;
  Hooks hooks_;
  Clock::time_point opened_at_ = Clock::now();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::string state_ = "starting";  // starting, ready, closing, closed
  std::shared_ptr<jobs::Session> engine_;
  std::string start_, start_note_;  // set once the engine opened
  double open_ms_ = 0;
  std::deque<std::shared_ptr<Exec>> queue_;
  std::shared_ptr<Exec> running_;
  std::vector<std::shared_ptr<Exec>> execs_;
  int64_t next_seq_ = 1;
  Clock::time_point last_active_ = Clock::now();
  Clock::time_point closing_since_{};
  bool restarted_for_close_ = false;
  std::string close_reason_, closed_at_;
  std::vector<std::function<void()>> on_closed_;
  std::vector<nlohmann::json> notes_;
  std::map<std::string, uint64_t> uploaded_;                  // path -> size, for the input policy
  std::map<std::string, std::optional<uint64_t>> reserved_;  // path -> size before the upload in flight
  SessionDataRequests requests_;
  std::thread thread_;
};

}  // namespace airlock::service
