// Store: the application's answers to jobs' data requests.
#include "store/chain.h"
#include "store/store.h"

namespace airlock::store {
namespace {

const char* state_text(AnswerState s) { return s == AnswerState::kAnswered ? "answered" : "refused"; }

}  // namespace

Status Store::answer_data_requests(const std::vector<DataRequestAnswer>& answers) {
  return write([&]() -> Status { return answer_data_requests_locked(answers); });
}

Status Store::answer_data_requests_locked(const std::vector<DataRequestAnswer>& answers) {
  for (const auto& a : answers) {
    auto s = sql("SELECT state, by_job FROM data_request_answers WHERE job_id = ?1 AND request_id = ?2");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, a.job_id).bind(2, a.request_id);
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    if (*row)
      return fail(ErrorKind::kRefused, "request " + a.request_id + " of job " + a.job_id + " is already " +
                                           (*s)->text(0) +
                                           ((*s)->text(0) == "answered" ? " by job " + (*s)->text(1) : ""));
  }
  for (const auto& a : answers) {
    // ON CONFLICT: an answer another node committed since the SELECT (PostgreSQL)
    // refuses this one too, instead of failing as a broken key.
    auto s = sql(
        "INSERT INTO data_request_answers (job_id, request_id, tenant_id, state, by_job, reason, key_id, at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (job_id, request_id) DO NOTHING");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, a.job_id)
        .bind(2, a.request_id)
        .bind(3, a.tenant_id)
        .bind(4, std::string(state_text(a.state)))
        .bind(5, a.by_job)
        .bind(6, a.reason)
        .bind(7, a.key_id)
        .bind(8, a.at);
    if (auto st = (*s)->run(); !st) return st;
    if ((*s)->changes() != 1)
      return fail(ErrorKind::kRefused, "request " + a.request_id + " of job " + a.job_id + " was answered meanwhile");
    StoredRecord record;
    record.tenant_id = a.tenant_id;
    record.json = data_request_answer_record_json(a);
    record.created_at = a.at;
    if (auto st = append_record_locked(record); !st) return st;
  }
  return {};
}

Result<std::vector<DataRequestAnswer>> Store::data_request_answers(const std::string& tenant_id,
                                                                   const std::string& job_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT job_id, request_id, tenant_id, state, by_job, reason, key_id, at FROM data_request_answers "
      "WHERE tenant_id = ?1 AND job_id = ?2 ORDER BY at, length(request_id), request_id");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id).bind(2, job_id);
  return collect_rows<DataRequestAnswer>(**s, [](const Statement& r) {
    return DataRequestAnswer{r.text(2),
                             r.text(0),
                             r.text(1),
                             r.text(3) == "answered" ? AnswerState::kAnswered : AnswerState::kRefused,
                             r.text(4),
                             r.text(5),
                             r.text(6),
                             r.text(7)};
  });
}

}  // namespace airlock::store
