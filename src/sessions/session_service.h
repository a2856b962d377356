// Sessions in the service: who may open one, the open sessions of
// this process (each a LiveSession with its own sandbox and thread), durable
// calls by id, files in a session's workspace, snapshots, and the
// housekeeping that closes idle and expired sessions and removes expired
// snapshots. Every session is recorded in the store; closing one (for any
// reason) appends its record, listing every call, to the tenant's chain.
//
// Sessions live in this process: a sandbox's init ends when its host socket
// closes, so a service that dies takes its sessions with it; the next start
// closes their rows as "service_restarted" and the sweep removes what the
// sandboxes left.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/unique_fd.h"
#include "pool/tenant_interpreters.h"
#include "sandbox/cgroup.h"
#include "sandbox/zygote.h"
#include "service/api_error.h"
#include "service/config.h"
#include "service/job_service.h"
#include "sessions/live_session.h"
#include "service/task_pool.h"
#include "store/store.h"

namespace airlock::service {

// The record of a closed session (pure): the request, every call as stored
// (its outputs left out), the events (uploads, downloads, snapshots,
// restarts), and the usage summed over the calls.
nlohmann::json session_record(const store::SessionRow& row, const std::string& closed_at,
                              const std::string& reason, nlohmann::json calls, const nlohmann::json& events);

class SessionService {
 public:
  SessionService(const ServiceConfig& config, store::Store& store, JobService& jobs);
  ~SessionService();

  Status start();
  void stop();  // closes every open session ("service_stopped")

  // Closes a session this process does not hold (a lost node's, or one a
  // previous life of this node left): its record from the stored calls, an
  // event "lost" saying why, `node` named in the record, and the row closed
  // with `reason` ("node lost: w1"). A row closed meanwhile is left as it is.
  Status close_unheld(const store::SessionRow& row, const std::string& reason, const std::string& node,
                      const std::string& why);
  size_t open_count();
  // The sessions' preloaded interpreters (TenantInterpreters::stats); [] without them.
  nlohmann::json interpreter_stats();  // sessions this process holds open (a worker's heartbeat)
  // On an API node: the node that keeps session `id` while it is open and
  // the caller may read it (its tenant's, or any with the admin scope);
  // "" when it is closed or unknown, so the route answers from the store
  // (404, its closed view, 409 session_closed) as on one machine.
  ApiResult<std::string> open_node_of(const Caller& c, const std::string& id);

  using Reply = std::function<void(ApiResult<nlohmann::json>)>;

  // Answers once the sandbox is ready (or could not be made).
  void create(const Caller& c, const nlohmann::json& body, Reply reply);
  // Reading (list, get, calls, snapshots) is for "read", "run" and "admin"
  // keys; an admin key reads every tenant's (GET /v1/sessions?tenant=ID|NAME|*),
  // but acts only on its own tenant's: another tenant's session or snapshot is
  // not there for close, calls, files or delete (docs/sessions.md).
  ApiResult<nlohmann::json> list(const Caller& c, const std::map<std::string, std::string>& query);
  ApiResult<nlohmann::json> get(const Caller& c, const std::string& id);
  // Answers once the session is closed, with its final view and record.
  void close(const Caller& c, const std::string& id, Reply reply);

  ApiResult<nlohmann::json> submit(const Caller& c, const std::string& id, const nlohmann::json& body,
                                   int* wait_s);
  ApiResult<nlohmann::json> exec(const Caller& c, const std::string& id, const std::string& exec_id);
  ApiResult<nlohmann::json> execs(const Caller& c, const std::string& id);
  // For SSE: the call's output buffer and a function giving its final view.
  struct ExecStream {
    std::shared_ptr<LogBuffer> output;
    std::function<nlohmann::json()> final_view;
  };
  ApiResult<ExecStream> exec_stream(const Caller& c, const std::string& id, const std::string& exec_id);
  // Calls `done` once the call has ended or `timeout_s` passed.
  void when_exec_done(const Caller& c, const std::string& id, const std::string& exec_id, int timeout_s,
                      std::function<void()> done);
  // Refuses one of the session's data requests: {"reason"} (1-1000 bytes).
  // 404 for another tenant's session or an unknown request; 409 if it was
  // answered or refused already, or the session is closed.
  ApiResult<nlohmann::json> refuse_request(const Caller& c, const std::string& id, const std::string& request_id,
                                           const nlohmann::json& body);
  ApiResult<nlohmann::json> interrupt(const Caller& c, const std::string& id);
  ApiResult<nlohmann::json> restart(const Caller& c, const std::string& id);

  // Files of the session's /workspace (session_files.cc).
  void put_file(const Caller& c, const std::string& id, const std::string& path, const std::string& spooled,
                uint64_t size, Reply reply);
  ApiResult<nlohmann::json> list_files(const Caller& c, const std::string& id, const std::string& path);
  // A checked copy of the file, open at its start, sent from there (never
  // read into memory); it goes when the response is sent.
  struct Download {
    std::shared_ptr<UniqueFd> file;
    uint64_t size = 0;
    std::string sha256, type;
  };
  void get_file(const Caller& c, const std::string& id, const std::string& path,
                std::function<void(ApiResult<Download>)> reply);
  void delete_file(const Caller& c, const std::string& id, const std::string& path, Reply reply);

  // Snapshots (session_snapshots.cc).
  void snapshot(const Caller& c, const std::string& id, Reply reply);
  ApiResult<nlohmann::json> snapshots(const Caller& c, const std::map<std::string, std::string>& query);
  ApiResult<nlohmann::json> snapshot_info(const Caller& c, const std::string& digest,
                                          const std::map<std::string, std::string>& query);
  ApiResult<nlohmann::json> delete_snapshot(const Caller& c, const std::string& digest);
  ApiResult<nlohmann::json> expire_snapshots();  // also done periodically

 private:
  std::shared_ptr<LiveSession> find(const Caller& c, const std::string& id);  // the caller's tenant's
  // What the caller may read: with the admin scope, any tenant's.
  std::shared_ptr<LiveSession> find_readable(const Caller& c, const std::string& id);
  Result<std::optional<store::SessionRow>> readable_row(const Caller& c, const std::string& id);
  ApiResult<nlohmann::json> view_of(const Caller& c, const std::string& id, bool any_tenant);
  enum class Access { kRead, kChange };  // kRead: a "read" or "run" key; kChange: a "run" key
  ApiResult<std::shared_ptr<LiveSession>> open_session(const Caller& c, const std::string& id, Access access);
  bool stopping();  // takes mu_
  void call_ended(const Exec& e);
  void session_closed(LiveSession& s);
  nlohmann::json record_of(LiveSession& s);
  ApiResult<nlohmann::json> closed_view(const store::SessionRow& row);
  // The session's data requests with their answers: the live session's, or
  // those its record keeps once it closed (an array; empty when none).
  nlohmann::json request_answers(const std::shared_ptr<LiveSession>& live, const store::SessionRow* row);
  void housekeeping_loop();

  ServiceConfig config_;
  store::Store& store_;
  JobService& jobs_;
  std::unique_ptr<sandbox::CgroupBackend> cgroups_;
  // With preloaded_pool > 0, sessions fork from preloaded interpreters of
  // their tenant's own (session_image_zygotes.cc; pool/tenant_interpreters.h),
  // one per tenant and image, started by the tenant's first session on it.
  std::unique_ptr<jobs::TenantInterpreters> interpreters_;
  Result<std::shared_ptr<sandbox::Zygote>> tenant_zygote(const std::string& tenant, const jobs::ImageSource& image);
  Result<std::unique_ptr<sandbox::Zygote>> start_zygote(const std::string& image_class);
  std::mutex images_mu_;
  std::map<std::string, jobs::ImageSource> images_;             // by image_class(): what an interpreter runs
  std::map<std::string, std::string> image_zygote_refusals_;   // by digest: why the image can have none
  // Spare sessions (session_spares.cc): preloaded sessions opened ahead with
  // the default policy, so that opening one is only fitting it to the request.
  Result<std::unique_ptr<jobs::Session>> open_engine(const jobs::Session::Options& options);
  void spares_loop();
  jobs::Session::Options spare_options(const std::string& tenant);
  void drop_spares_of(const std::vector<std::string>& tenants);
  std::mutex spares_mu_;
  std::condition_variable spares_wake_;
  // Spares are forks of one tenant's interpreter, so each serves only that
  // tenant: they are kept for the tenant that last opened a session.
  struct Spare {
    std::string tenant;
    std::unique_ptr<jobs::Session> session;
  };
  std::deque<Spare> spares_;
  std::optional<std::string> spare_tenant_;  // whose spares are made; none before the first session
  bool spares_stopping_ = false;
  std::thread spares_thread_;
  TaskPool tasks_{2};

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<LiveSession>> sessions_;  // open (or closing) ones
  struct Waiter {
    std::shared_ptr<Exec> exec;
    Clock::time_point deadline;
    std::function<void()> done;
  };
  std::vector<Waiter> waiters_;
  std::thread housekeeping_;
};

}  // namespace airlock::service
