// JobService in cluster mode (role api or worker; CLUSTER-CONTRACT.md
// "Service"): the node's heartbeat, the worker's claim threads, admission by
// the store's counts, the lost-node sweep, waiters answered from the store.
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "cluster/admission.h"
#include "cluster/lost_nodes.h"
#include "cluster/node_health.h"
#include "jobs/record.h"
#include "service/job_service.h"
#include "service/store_retry.h"
#include "sys/remove_tree.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kSweepEvery = std::chrono::seconds(1);
constexpr auto kWaiterPoll = std::chrono::milliseconds(500);

}  // namespace

Status JobService::start_cluster() {
  const bool worker = config_.role == Role::kWorker;
  store::NodeRow self;
  self.id = config_.node_id;
  self.role = std::string(role_name(config_.role));
  self.address = config_.node_address;
  self.slots = worker ? static_cast<int>(config_.max_running) : 0;
  self.session_slots = worker ? static_cast<int>(config_.max_sessions) : 0;
  // The images this worker keeps sandboxes ready for (the pool's, as
  // configured): jobs of these images are left to it first (Store::claim_job).
  std::vector<std::string> warm;
  if (worker && (config_.warm_pool > 0 || config_.preloaded_pool > 0)) {
    warm = config_.pool_images;  // and the default image ("host" included), as the pool serves it
    if (std::find(warm.begin(), warm.end(), config_.default_image) == warm.end()) warm.push_back(config_.default_image);
  }
  cluster::PulseHooks hooks;
  hooks.state = [this, warm] {
    cluster::PulseState s;
    s.draining = draining_.load();
    s.running = running_count_.load();
    s.warm_images = warm;
    s.sessions = static_cast<int>(metrics_.sessions_open());  // placement reads it (cluster/placement.h)
    return s;
  };
  hooks.cancel = [this](const std::vector<std::string>& ids) { cancel_requested(ids); };
  hooks.lost = [this] { lost_all_jobs(); };
  hooks.left = [this](const store::LostNode& left) {
    // This node's previous life: its claimed jobs went back to the queue; the started ones end here.
    size_t ended = cluster::end_left_work(store_, left, [this](const store::JobRow& row, const std::string& reason,
                                                              const std::string& node) {
      end_left_job(row, reason, node);
    });
    if (ended > 0 || left.requeued > 0)
      log({{"event", "previous_life_ended"}, {"node", left.node.id}, {"requeued", left.requeued}, {"ended", ended}});
  };
  hooks.log = [this](const json& j) { log(j); };
  pulse_ = std::make_unique<cluster::NodePulse>(store_, self, std::chrono::milliseconds(config_.heartbeat_ms),
                                                std::move(hooks));
  if (auto st = pulse_->start(); !st) return fail("register the node " + config_.node_id + ": " + st.error().message());
  log({{"event", "node_up"}, {"node", config_.node_id}, {"role", self.role}, {"address", self.address},
       {"slots", self.slots}});
  if (!config_.database_url.empty()) {
    auto n = store::Notifier::open(config_.database_url, {"airlock_jobs", "airlock_finished", "airlock_cancel"});
    if (n) {
      notifier_ = std::move(*n);
      notifier_thread_ = std::thread([this] { notifier_loop(); });
    } else {
      log({{"event", "notifier_unavailable"}, {"error", n.error().message()}});  // the polls still work
    }
  }
  if (worker) {
    claims_ = std::make_unique<cluster::ClaimSource>(
        store_, config_.node_id, [warm] { return warm; }, [this](const json& j) { log(j); });
    for (size_t i = 0; i < config_.max_running; ++i) workers_.emplace_back([this] { claim_loop(); });
  }
  housekeeping_ = std::thread([this] { housekeeping_loop(); });
  return {};
}

void JobService::claim_loop() {
  while (auto job = claims_->next()) {
    std::optional<JobCancel> cancel;
    std::string cancel_error;
    ++running_count_;
    {
      std::lock_guard lock(mu_);
      auto made = JobCancel::create();
      if (made) {
        cancel.emplace(std::move(*made));
        running_[job->job_id] = &*cancel;
        if (stopping_) (void)cancel->fire();
      } else {
        cancel_error = made.error().message();
      }
    }
    run_one(*job, cancel ? &*cancel : nullptr, cancel_error);
    {
      std::lock_guard lock(mu_);
      running_.erase(job->job_id);
    }
    --running_count_;
    work_.notify_all();
    claims_->wake();  // a slot is free: claim at once rather than after the poll
  }
}

void JobService::cancel_requested(const std::vector<std::string>& ids) {
  std::lock_guard lock(mu_);
  for (const auto& id : ids)
    if (auto it = running_.find(id); it != running_.end() && !it->second->fired()) {
      (void)it->second->fire();
      log({{"event", "cancel_seen"}, {"job_id", id}, {"node", config_.node_id}});
    }
}

void JobService::lost_all_jobs() {
  // The others ended these jobs as "node lost" and may run its claims: stop
  // them all; their records are refused by the store (already finished).
  std::lock_guard lock(mu_);
  for (auto& [id, c] : running_) (void)c->fire();
}

void JobService::end_left_job(const store::JobRow& row, const std::string& reason, const std::string& node) {
  finish_without_running(row, jobs::Outcome::kSandboxError, reason, node);
  // A job of this node's previous life may have left its scratch here.
  if (node == config_.node_id) (void)sys::remove_tree(config_.work_dir + "/" + row.id);
}

ApiResult<std::monostate> JobService::admit_in_store(const store::Tenant& tenant) {
  auto all = store_.queue_counts("");
  if (!all) return store_failure(all.error());
  auto mine = store_.queue_counts(tenant.id);
  if (!mine) return store_failure(mine.error());
  const size_t tenant_cap = std::min(static_cast<size_t>(std::max(0, tenant.limits.max_queued)),
                                     tenant_max_queued(config_, tenant.name));
  // Claimed jobs have not started: they wait like queued ones.
  if (auto why = cluster::admission_refusal(static_cast<size_t>(all->queued + all->claimed),
                                            static_cast<size_t>(mine->queued + mine->claimed), config_.max_queued,
                                            tenant_cap))
    return api_error(429, "overloaded", "tenant " + tenant.name + ": " + *why);
  return std::monostate{};
}

void JobService::cluster_housekeeping() {
  auto now = Clock::now();
  // A node judges the others' heartbeats only once its own have reached the
  // store for a whole lease: after an outage (or its own start) the others
  // get that long to write theirs.
  const auto lease = std::chrono::milliseconds(config_.node_lease_ms);
  if (now >= next_cluster_sweep_ && pulse_ && pulse_->in_touch_for(lease)) {
    next_cluster_sweep_ = now + kSweepEvery;
    auto lost = cluster::sweep_lost_nodes(store_, static_cast<int64_t>(config_.node_lease_ms),
                                          [this](const store::JobRow& row, const std::string& reason,
                                                 const std::string& node) { end_left_job(row, reason, node); });
    if (!lost) {
      if (store_may_pass_later(lost.error())) pulse_->store_failed();
      log({{"event", "lost_node_sweep_failed"}, {"error", lost.error().message()}});
    } else {
      for (const auto& n : *lost)
        log({{"event", "node_lost"}, {"node", n.node.id}, {"requeued", n.requeued},
             {"ended_jobs", n.started_jobs.size()}, {"closed_sessions", n.open_sessions.size()},
             {"swept_by", config_.node_id}});
    }
  }
  // Jobs waited for (wait, SSE) that run on other nodes: the store says when they end.
  if (now < next_waiter_poll_) return;
  next_waiter_poll_ = now + kWaiterPoll;
  std::vector<std::string> watched;
  {
    std::lock_guard lock(mu_);
    for (const auto& w : waiters_) watched.push_back(w.job_id);
    for (const auto& [id, buffer] : live_)
      if (!buffer->finished() && !running_.count(id)) watched.push_back(id);
  }
  std::sort(watched.begin(), watched.end());
  watched.erase(std::unique(watched.begin(), watched.end()), watched.end());
  for (const auto& id : watched) {
    auto row = store_.job_of_any_tenant(id);
    if (row && (!*row || (*row)->state == store::JobState::kFinished)) finished_elsewhere(id);
  }
}

void JobService::finished_elsewhere(const std::string& job_id) {
  std::shared_ptr<LogBuffer> buffer;
  {
    std::lock_guard lock(mu_);
    if (running_.count(job_id)) return;  // it ends here; job_ended() answers
    if (auto it = live_.find(job_id); it != live_.end() && !it->second->finished()) buffer = it->second;
  }
  if (buffer) {
    auto row = store_.job_of_any_tenant(job_id);
    if (row && *row) replay_record(*buffer, (*row)->tenant_id, job_id);
  }
  job_ended(job_id);
}

void JobService::notifier_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    auto n = notifier_->wait(std::chrono::milliseconds(250));
    if (n && *n) {
      const auto& [channel, payload] = **n;
      if (channel == "airlock_jobs" && claims_) claims_->wake();
      else if (channel == "airlock_finished") finished_elsewhere(payload);
      else if (channel == "airlock_cancel") cancel_requested({payload});
    } else if (!n) {
      log({{"event", "notifier_failed"}, {"error", n.error().message()}});
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the polls go on meanwhile
    }
    lock.lock();
  }
}

void JobService::drain() {
  if (config_.role != Role::kWorker) return;
  draining_ = true;
  log({{"event", "draining"}, {"node", config_.node_id}, {"running", running_count_.load()}});
  if (claims_) claims_->close();
  if (pulse_) pulse_->beat_now();  // the others see "draining" now
  // Each job thread ends its job, then finds the claims closed.
  for (auto& t : workers_) t.join();
  workers_.clear();
  // No heartbeat after the leave: it would mark the node draining again.
  if (pulse_) pulse_->stop();
  left_cluster_ = true;
  if (auto st = store_.leave_node(config_.node_id); !st)
    log({{"event", "leave_failed"}, {"node", config_.node_id}, {"error", st.error().message()}});
  else
    log({{"event", "drained"}, {"node", config_.node_id}});
}

json JobService::health() {
  json h = {{"status", "ok"}};
  if (!cluster()) return h;
  h["role"] = std::string(role_name(config_.role));
  h["node"] = config_.node_id;
  if (draining_) h["draining"] = true;
  auto nodes = store_.nodes();
  if (!nodes) {
    // Unauthenticated: what failed goes to the log only.
    log({{"event", "health_store_failed"}, {"error", nodes.error().message()}});
    return json{{"status", "unavailable"}, {"store", "unavailable"},
                {"role", std::string(role_name(config_.role))}, {"node", config_.node_id}};
  }
  h["nodes"] = cluster::nodes_json(*nodes, jobs::now_rfc3339());
  return h;
}

std::string JobService::cluster_metrics_text() const {
  auto counts = store_.queue_counts("");
  size_t queued = counts ? static_cast<size_t>(counts->queued + counts->claimed) : 0;
  size_t running = counts ? static_cast<size_t>(counts->running) : 0;
  std::string out = metrics_.render(queued, running);
  if (auto nodes = store_.nodes()) out += cluster::nodes_metrics(*nodes);
  return out;
}

}  // namespace airlock::service
