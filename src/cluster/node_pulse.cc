#include "cluster/node_pulse.h"

#include "jobs/record.h"

namespace airlock::cluster {

NodePulse::NodePulse(store::Store& store, store::NodeRow self, std::chrono::milliseconds every, PulseHooks hooks)
    : store_(store), self_(std::move(self)), every_(every), hooks_(std::move(hooks)) {}

NodePulse::~NodePulse() { stop(); }

Status NodePulse::register_self() {
  store::NodeRow row = self_;
  row.state = "up";
  row.started_at = row.heartbeat_at = jobs::now_rfc3339();
  auto left = store_.register_node(row);
  contact_.saw(left.has_value(), StoreContact::Clock::now());
  if (!left) return std::unexpected(left.error());
  if (hooks_.left) hooks_.left(*left);
  return {};
}

Status NodePulse::start() {
  if (auto st = register_self(); !st) return st;
  thread_ = std::thread([this] { loop(); });
  return {};
}

void NodePulse::beat_now() {
  {
    std::lock_guard lock(mu_);
    beat_asked_ = true;
  }
  wake_.notify_all();
}

void NodePulse::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NodePulse::beat() {
  if (!registered_) {
    // Lost: jobs this node still ran were stopped; come back as a new life.
    if (auto st = register_self(); !st) {
      if (hooks_.log) hooks_.log({{"event", "node_register_failed"}, {"error", st.error().message()}});
      return;
    }
    registered_ = true;
    if (hooks_.log) hooks_.log({{"event", "node_registered_again"}, {"node", self_.id}});
  }
  PulseState s = hooks_.state ? hooks_.state() : PulseState{};
  store::Heartbeat h;
  h.node_id = self_.id;
  h.state = s.draining ? "draining" : "up";
  h.running = s.running;
  h.sessions = s.sessions;
  h.warm_images = s.warm_images;
  h.now = jobs::now_rfc3339();
  auto answer = store_.heartbeat(h);
  // A refusal is an answer of the store: the node is in touch with it.
  contact_.saw(answer.has_value() || answer.error().kind == ErrorKind::kRefused, StoreContact::Clock::now());
  if (answer) {
    if (!answer->empty() && hooks_.cancel) hooks_.cancel(*answer);
    return;
  }
  if (answer.error().kind == ErrorKind::kRefused) {
    if (hooks_.log) hooks_.log({{"event", "node_declared_lost"}, {"node", self_.id}, {"error", answer.error().message()}});
    registered_ = false;
    if (hooks_.lost) hooks_.lost();
    return;
  }
  // The database is away for a moment: the next tick tries again (the lease is many ticks).
  if (hooks_.log) hooks_.log({{"event", "heartbeat_failed"}, {"node", self_.id}, {"error", answer.error().message()}});
}

void NodePulse::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, every_, [this] { return stopping_ || beat_asked_; });
    if (stopping_) break;
    beat_asked_ = false;
    lock.unlock();
    beat();
    lock.lock();
  }
}

}  // namespace airlock::cluster
