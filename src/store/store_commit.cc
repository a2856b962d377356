// Store: the group commit. Writes queued while a commit was on its way to the
// disk run in one transaction, each inside a savepoint so that a refused write
// (a job already finished, a constraint) is rolled back alone and the others
// still commit. See docs/store.md "Durability".
#include <algorithm>
#include <cstdlib>
#include <string>

#include "store/store.h"

namespace airlock::store {

StoreOptions StoreOptions::defaults() {
  StoreOptions o;
  if (const char* v = std::getenv("AIRLOCK_STORE_MAX_BATCH"); v && *v) {
    char* end = nullptr;
    unsigned long n = std::strtoul(v, &end, 10);
    if (end && *end == '\0' && n >= 1 && n <= 4096) o.max_batch = n;
  }
  return o;
}

Status Store::write(std::function<Status()> apply, std::function<void()> committed) {
  CommitQueue::Write w;
  w.apply = std::move(apply);
  w.committed = std::move(committed);
  return commits_.submit(w);
}

void Store::commit_batch(const std::vector<CommitQueue::Write*>& batch) {
  std::lock_guard lock(mu_);
  commit_locked(batch);
}

void Store::commit_locked(const std::vector<CommitQueue::Write*>& batch) {
  auto fail_all = [&](const Error& e) {
    for (auto* w : batch) w->result = std::unexpected(e);
  };
  auto tx = Transaction::begin(*db_);
  if (!tx) return fail_all(tx.error());
  const bool alone = batch.size() == 1;  // no savepoint needed: the transaction is the write's
  std::vector<CommitQueue::Write*> applied, put_off;
  // PostgreSQL: writes whose tenant's chain another node holds run alone after
  // this batch (append_record_locked).
  shared_batch_ = !alone;
  busy_chains_.clear();
  struct Reset {
    Store* s;
    ~Reset() { s->shared_batch_ = false; }
  } reset{this};
  auto run_put_off = [&] {
    shared_batch_ = false;
    for (auto* w : put_off) commit_locked({w});
  };
  for (size_t i = 0; i < batch.size(); ++i) {
    CommitQueue::Write* w = batch[i];
    if (!alone)
      if (auto st = db_->exec("SAVEPOINT write"); !st) return fail_all(st.error());
    Status st = w->apply();
    if (st) {
      if (!alone)
        if (auto rel = db_->exec("RELEASE write"); !rel) return fail_all(rel.error());
      applied.push_back(w);
      continue;
    }
    if (!alone && st.error().kind == ErrorKind::kUnavailable && busy_chains_.size() > 0 &&
        db_->dialect() == Dialect::kPostgres) {
      put_off.push_back(w);
      if (auto rb = db_->exec("ROLLBACK TO write"); !rb) return fail_all(rb.error());
      if (auto rel = db_->exec("RELEASE write"); !rel) return fail_all(rel.error());
      continue;
    }
    w->result = st;
    if (alone) return;  // the guard rolls the transaction back
    if (!db_->in_transaction()) {
      // The database rolled the whole transaction back (SQLite: an I/O error, a full disk):
      // what the earlier writes applied is gone as well. Each of the others
      // is run again, alone, so that this one's failure costs them nothing.
      shared_batch_ = false;
      for (size_t j = 0; j < i; ++j)  // in queue order: those applied and those put off
        if (std::find(applied.begin(), applied.end(), batch[j]) != applied.end() ||
            std::find(put_off.begin(), put_off.end(), batch[j]) != put_off.end())
          commit_locked({batch[j]});
      for (size_t j = i + 1; j < batch.size(); ++j) commit_locked({batch[j]});
      return;
    }
    if (auto rb = db_->exec("ROLLBACK TO write"); !rb) return fail_all(rb.error());
    if (auto rel = db_->exec("RELEASE write"); !rel) return fail_all(rel.error());
  }
  // With synchronous = FULL the commit returns once the WAL is fsynced: one
  // fsync for the whole batch.
  if (auto st = tx->commit(); !st) {
    for (auto* w : applied) w->result = std::unexpected(st.error());
    return run_put_off();
  }
  for (auto* w : applied) {
    w->result = {};
    if (w->committed) w->committed();
  }
  run_put_off();
}

}  // namespace airlock::store
