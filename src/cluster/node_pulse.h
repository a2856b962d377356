// A node's heartbeat (CLUSTER-CONTRACT.md "Service"): registers the node,
// then writes its heartbeat every heartbeat_ms on a thread of its own. The
// answer carries the ids of this node's jobs whose cancel was requested (by
// any API node); a refusal means the others declared this node lost and
// took its jobs: it stops them, then registers again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "cluster/store_contact.h"
#include "store/store.h"

namespace airlock::cluster {

// What the next heartbeat reports.
struct PulseState {
  bool draining = false;
  int running = 0, sessions = 0;
  std::vector<std::string> warm_images;
};

struct PulseHooks {
  std::function<PulseState()> state;
  std::function<void(const std::vector<std::string>&)> cancel;  // job ids to cancel
  // Declared lost: every job it still runs was ended by another node.
  std::function<void()> lost;
  // What the node's previous life (or the life before a loss) left:
  // register_node()'s answer, for the caller to end.
  std::function<void(const store::LostNode&)> left;
  std::function<void(const nlohmann::json&)> log;
};

class NodePulse {
 public:
  NodePulse(store::Store& store, store::NodeRow self, std::chrono::milliseconds every, PulseHooks hooks);
  ~NodePulse();
  NodePulse(const NodePulse&) = delete;
  NodePulse& operator=(const NodePulse&) = delete;

  // Registers the node (its previous life goes to hooks.left) and starts the thread.
  Status start();
  // A heartbeat now rather than at the next tick (the node began to drain).
  void beat_now();
  void stop();  // joins the thread; writes nothing more
  // Whether every heartbeat for the last `lease` reached the store: only then
  // may this node judge the others' heartbeats (cluster/lost_nodes.h).
  bool in_touch_for(std::chrono::milliseconds lease) const {
    return contact_.unbroken_for(lease, StoreContact::Clock::now());
  }
  // A failure of the store seen elsewhere (the sweep itself) breaks the touch too.
  void store_failed() { contact_.saw(false, StoreContact::Clock::now()); }

 private:
  void loop();
  Status register_self();
  void beat();

  store::Store& store_;
  store::NodeRow self_;
  std::chrono::milliseconds every_;
  PulseHooks hooks_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false, beat_asked_ = false;
  bool registered_ = true;  // false after a refusal, until registered again
  StoreContact contact_;
  std::thread thread_;
};

}  // namespace airlock::cluster
