// Internal to the store: the columns its job and session queries select, and
// how a row of them is read, shared by the files that query those tables.
#pragma once

#include "store/sql.h"
#include "store/types.h"

// The columns every job query selects, in this order (read_job_row reads them).
#define JOB_COLUMNS                                                                       \
  "id, tenant_id, key_id, state, request_json, idempotency_key, created_at, started_at, " \
  "finished_at, outcome, pid, n, node_id, claimed_at, image, cancel_requested"
#define SESSION_COLUMNS \
  "id, tenant_id, key_id, state, request_json, created_at, closed_at, close_reason, node_id"

namespace airlock::store {

JobRow read_job_row(const Statement& s);
SessionRow read_session_row(const Statement& s);

}  // namespace airlock::store
