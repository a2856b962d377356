// Store: the nodes of a cluster, their heartbeats, and what a lost node leaves
// (docs/store.md "Queue and nodes").
#include <chrono>

#include "jobs/record.h"
#include "store/claim_rules.h"
#include "store/notifier.h"
#include "store/row_readers.h"
#include "store/store.h"
#include "usage/ledger.h"

namespace airlock::store {

namespace {

#define NODE_COLUMNS                                                                        \
  "id, role, address, state, slots, running, session_slots, sessions, warm_images, "       \
  "started_at, heartbeat_at, lost_at"

NodeRow read_node(const Statement& s) {
  NodeRow n;
  n.id = s.text(0);
  n.role = s.text(1);
  n.address = s.text(2);
  n.state = s.text(3);
  n.slots = static_cast<int>(s.int64(4));
  n.running = static_cast<int>(s.int64(5));
  n.session_slots = static_cast<int>(s.int64(6));
  n.sessions = static_cast<int>(s.int64(7));
  n.warm_images = split_images(s.text(8));
  n.started_at = s.text(9);
  n.heartbeat_at = s.text(10);
  n.lost_at = s.text(11);
  return n;
}

}  // namespace

Status Store::notify_locked(const char* channel, const std::string& payload) {
  if (db_->dialect() != Dialect::kPostgres) return {};
  // Sent when the transaction commits, and not at all when it (or the write's
  // savepoint in a group commit) rolls back: a listener never hears of a row
  // it cannot read yet.
  auto s = sql("SELECT pg_notify(?1, ?2)::text");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, channel).bind(2, payload);
  return (*s)->run();
}

Status Store::take_node_leftovers_locked(const std::string& node_id, LostNode& out) {
  out.requeued = 0;
  out.started_jobs.clear();
  out.open_sessions.clear();
  // Claimed, unstarted: back in the queue (a cancel asked meanwhile stays
  // asked: the next claimant ends the job as cancelled without running it).
  auto requeue = sql(
      "UPDATE jobs SET node_id = '', claimed_at = '' "
      "WHERE node_id = ?1 AND state = 'queued' RETURNING id");
  if (!requeue) return std::unexpected(requeue.error());
  (*requeue)->bind(1, node_id);
  auto ids = collect_rows<std::string>(**requeue, [](const Statement& r) { return r.text(0); });
  if (!ids) return std::unexpected(ids.error());
  out.requeued = ids->size();
  for (const auto& id : *ids)
    if (auto st = notify_locked(kChannelJobs, id); !st) return st;

  auto started = sql("SELECT " JOB_COLUMNS " FROM jobs WHERE node_id = ?1 AND state = 'running' ORDER BY n");
  if (!started) return std::unexpected(started.error());
  (*started)->bind(1, node_id);
  auto jobs = collect_rows<JobRow>(**started, read_job_row);
  if (!jobs) return std::unexpected(jobs.error());
  out.started_jobs = std::move(*jobs);

  auto open = sql("SELECT " SESSION_COLUMNS " FROM sessions WHERE node_id = ?1 AND state = 'open' ORDER BY n");
  if (!open) return std::unexpected(open.error());
  (*open)->bind(1, node_id);
  auto sessions = collect_rows<SessionRow>(**open, read_session_row);
  if (!sessions) return std::unexpected(sessions.error());
  out.open_sessions = std::move(*sessions);
  return {};
}

Result<LostNode> Store::register_node(const NodeRow& in) {
  if (auto st = check_node_fields(in.id, in.warm_images); !st) return std::unexpected(st.error());
  if (in.slots < 0 || in.session_slots < 0) return fail(ErrorKind::kInvalid, "node slots must not be negative");
  NodeRow row = in;
  if (row.started_at.empty()) row.started_at = jobs::now_rfc3339();
  if (row.heartbeat_at.empty()) row.heartbeat_at = row.started_at;
  row.state = "up";
  row.running = 0;
  row.sessions = 0;
  row.lost_at.clear();

  LostNode out;
  auto st = write([&]() -> Status {
    out = LostNode{};
    out.node = row;
    auto prev = sql("SELECT " NODE_COLUMNS " FROM nodes WHERE id = ?1");
    if (!prev) return std::unexpected(prev.error());
    (*prev)->bind(1, row.id);
    auto found = first_row<NodeRow>(**prev, read_node);
    if (!found) return std::unexpected(found.error());
    if (*found) {
      out.node = **found;  // the previous life, as it was left
      if (auto st = take_node_leftovers_locked(row.id, out); !st) return st;
    }
    auto s = sql(
        "INSERT INTO nodes (id, role, address, state, slots, running, session_slots, sessions, "
        "warm_images, started_at, heartbeat_at, lost_at) "
        "VALUES (?1, ?2, ?3, 'up', ?4, 0, ?5, 0, ?6, ?7, ?8, '') "
        "ON CONFLICT (id) DO UPDATE SET role = excluded.role, address = excluded.address, "
        "state = 'up', slots = excluded.slots, running = 0, session_slots = excluded.session_slots, "
        "sessions = 0, warm_images = excluded.warm_images, started_at = excluded.started_at, "
        "heartbeat_at = excluded.heartbeat_at, lost_at = ''");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.id)
        .bind(2, row.role)
        .bind(3, row.address)
        .bind(4, int64_t{row.slots})
        .bind(5, int64_t{row.session_slots})
        .bind(6, join_images(row.warm_images))
        .bind(7, row.started_at)
        .bind(8, row.heartbeat_at);
    return (*s)->run();
  });
  if (!st) return std::unexpected(st.error());
  return out;
}

Result<std::vector<std::string>> Store::heartbeat(const Heartbeat& h) {
  if (h.state != "up" && h.state != "draining")
    return fail(ErrorKind::kInvalid, "a heartbeat's state is up or draining, not '" + h.state + "'");
  if (auto st = check_node_fields(h.node_id, h.warm_images); !st) return std::unexpected(st.error());
  std::string now = h.now.empty() ? jobs::now_rfc3339() : h.now;
  std::vector<std::string> cancels;
  auto st = write([&]() -> Status {
    cancels.clear();
    // Conditional on the state: a node declared lost stays lost (its jobs
    // were taken) until it registers again.
    auto s = sql(
        "UPDATE nodes SET heartbeat_at = ?2, running = ?3, sessions = ?4, warm_images = ?5, state = ?6 "
        "WHERE id = ?1 AND state IN ('up', 'draining')");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, h.node_id)
        .bind(2, now)
        .bind(3, int64_t{h.running})
        .bind(4, int64_t{h.sessions})
        .bind(5, join_images(h.warm_images))
        .bind(6, h.state);
    if (auto st = (*s)->run(); !st) return st;
    if ((*s)->changes() != 1)
      return fail(ErrorKind::kRefused, "node '" + h.node_id +
                                           "' is not up (declared lost, left, or never registered): "
                                           "stop its jobs and register again");
    auto c = sql("SELECT id FROM jobs WHERE node_id = ?1 AND state <> 'finished' AND cancel_requested = 1 ORDER BY n");
    if (!c) return std::unexpected(c.error());
    (*c)->bind(1, h.node_id);
    auto ids = collect_rows<std::string>(**c, [](const Statement& r) { return r.text(0); });
    if (!ids) return std::unexpected(ids.error());
    cancels = std::move(*ids);
    return {};
  });
  if (!st) return std::unexpected(st.error());
  return cancels;
}

Result<std::vector<NodeRow>> Store::nodes() {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " NODE_COLUMNS " FROM nodes ORDER BY id");
  if (!s) return std::unexpected(s.error());
  return collect_rows<NodeRow>(**s, read_node);
}

Result<std::optional<NodeRow>> Store::node(const std::string& id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " NODE_COLUMNS " FROM nodes WHERE id = ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, id);
  return first_row<NodeRow>(**s, read_node);
}

Result<std::vector<LostNode>> Store::declare_lost_nodes(const std::string& now, int64_t lease_ms) {
  auto now_ms = usage::parse_time_ms(now);
  if (!now_ms) return fail(ErrorKind::kInvalid, "declare lost nodes: '" + now + "' is not an RFC 3339 UTC time");
  if (lease_ms < 0) return fail(ErrorKind::kInvalid, "declare lost nodes: a negative lease");
  // Heartbeats are written in the same fixed format (jobs::rfc3339), so that
  // text order is time order.
  std::string cutoff = jobs::rfc3339(std::chrono::system_clock::time_point(std::chrono::milliseconds(*now_ms - lease_ms)));

  std::vector<std::string> stale;
  {
    std::lock_guard lock(mu_);
    auto s = sql("SELECT id FROM nodes WHERE state IN ('up', 'draining') AND heartbeat_at < ?1 ORDER BY id");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, cutoff);
    auto ids = collect_rows<std::string>(**s, [](const Statement& r) { return r.text(0); });
    if (!ids) return std::unexpected(ids.error());
    stale = std::move(*ids);
  }

  std::vector<LostNode> lost;
  for (const auto& id : stale) {
    LostNode out;
    bool declared = false;
    // One transaction per node. The UPDATE is conditional on the state and the
    // heartbeat, and counted: of several sweepers (or a heartbeat arriving
    // meanwhile) exactly one changes the row; PostgreSQL makes a second
    // sweeper wait on the row lock and then re-check the condition on the
    // row as the first left it (read committed), so it changes nothing.
    auto st = write([&]() -> Status {
      declared = false;
      out = LostNode{};
      auto s = sql(
          "UPDATE nodes SET state = 'lost', lost_at = ?2 "
          "WHERE id = ?1 AND state IN ('up', 'draining') AND heartbeat_at < ?3");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, id).bind(2, now).bind(3, cutoff);
      if (auto st = (*s)->run(); !st) return st;
      if ((*s)->changes() != 1) return {};
      auto row = sql("SELECT " NODE_COLUMNS " FROM nodes WHERE id = ?1");
      if (!row) return std::unexpected(row.error());
      (*row)->bind(1, id);
      auto found = first_row<NodeRow>(**row, read_node);
      if (!found) return std::unexpected(found.error());
      if (!*found) return fail("node '" + id + "' vanished inside its transaction");
      out.node = **found;
      if (auto st = take_node_leftovers_locked(id, out); !st) return st;
      declared = true;
      return {};
    });
    if (!st) return std::unexpected(st.error());
    if (declared) lost.push_back(std::move(out));
  }
  return lost;
}

Status Store::leave_node(const std::string& node_id) {
  return write([&]() -> Status {
    auto s = sql("UPDATE nodes SET state = 'left' WHERE id = ?1 AND state IN ('up', 'draining')");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, node_id);
    if (auto st = (*s)->run(); !st) return st;
    if ((*s)->changes() != 1)
      return fail(ErrorKind::kRefused, "node '" + node_id + "' is not up or draining (lost, left, or unknown)");
    LostNode ignored;  // a draining node ended its running jobs and sessions itself
    return take_node_leftovers_locked(node_id, ignored);
  });
}

}  // namespace airlock::store
