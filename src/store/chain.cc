#include "store/chain.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "store/retention_proof.h"

namespace airlock::store {

std::string record_hash(std::string_view prev_hash, std::string_view json) {
  Sha256 h;
  h.update(prev_hash);
  h.update("\n");
  h.update(json);
  return h.hex_digest();
}

std::string retention_record_json(const std::vector<std::string>& removed_jobs,
                                  int64_t removed_through_seq,
                                  const std::string& last_removed_hash) {
  nlohmann::ordered_json j;
  j["kind"] = "retention";
  j["removed_jobs"] = removed_jobs;
  j["removed_through_seq"] = removed_through_seq;
  j["last_removed_hash"] = last_removed_hash;
  return j.dump();
}

std::string snapshot_removal_record_json(const SnapshotRow& snapshot, const std::string& reason,
                                         uint64_t released_contents) {
  nlohmann::ordered_json j;
  j["kind"] = "snapshot_removed";
  j["reason"] = reason;
  j["digest"] = snapshot.digest;
  j["source"] = snapshot.source;
  j["created_at"] = snapshot.created_at;
  j["expires_at"] = snapshot.expires_at;
  j["released_contents"] = released_contents;
  return j.dump();
}

std::string data_request_answer_record_json(const DataRequestAnswer& a) {
  nlohmann::json j = {{"kind", "data_request_answer"}, {"job_id", a.job_id}, {"request_id", a.request_id}};
  if (a.state == AnswerState::kAnswered) {
    j["answer"] = "job";
    j["by_job"] = a.by_job;
  } else {
    j["answer"] = "refused";
    j["reason"] = a.reason;
  }
  j["key_id"] = a.key_id;
  j["at"] = a.at;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_data_request_answer_record(std::string_view json) {
  auto j = parse_json_or_discarded(json, kMaxStoredJsonDepth);
  if (!j.is_object()) return false;
  auto kind = j.find("kind");
  auto job = j.find("job_id");
  return kind != j.end() && *kind == "data_request_answer" && job != j.end() && job->is_string();
}

bool is_snapshot_removal_record(std::string_view json) {
  auto j = parse_json_or_discarded(json, kMaxStoredJsonDepth);
  if (!j.is_object()) return false;
  auto kind = j.find("kind");
  auto digest = j.find("digest");
  return kind != j.end() && *kind == "snapshot_removed" && digest != j.end() && digest->is_string();
}

std::optional<RetentionCover> parse_retention_record(std::string_view json) {
  auto claim = parse_retention_claim(json);  // store/retention_proof.h: the same fields and more
  if (!claim) return std::nullopt;
  return RetentionCover{claim->removed_through_seq, claim->last_removed_hash};
}

void ChainVerifier::problem(const StoredRecord& record, const std::string& what) {
  std::string where = "tenant " + tenant_ + ": record seq " + std::to_string(record.seq);
  if (!record.job_id.empty())
    where += " (job " + record.job_id + ")";
  else
    where += is_snapshot_removal_record(record.json)      ? " (snapshot removal)"
             : is_data_request_answer_record(record.json) ? " (data request answer)"
                                                          : " (retention)";
  problems_.push_back(where + " " + what);
}

void ChainVerifier::note_retention(const StoredRecord& record) {
  auto cover = parse_retention_record(record.json);
  if (!cover) return;  // add() reports it
  if (cover->through_seq >= record.seq) {
    problem(record, "claims to cover seq " + std::to_string(cover->through_seq) +
                        ", which is not before it");
    return;
  }
  // A record that names its policy removed nothing younger than it allows
  // (whether the service wrote it is the signature's to say: verify --checkpoints).
  if (auto claim = parse_retention_claim(record.json);
      claim && (claim->retention_days || !claim->at.empty() || !claim->removed_through_time.empty()))
    if (auto p = retention_age_problem(*claim); !p.empty()) problem(record, p);
  // Each retention removes a prefix of the chain: the widest one still present
  // tells where the remaining records start.
  if (!cover_ || cover->through_seq > cover_->through_seq) cover_ = *cover;
}

void ChainVerifier::start() {
  started_ = true;
  expected_seq_ = cover_ ? cover_->through_seq + 1 : 1;
  expected_prev_ = cover_ ? cover_->last_hash : std::string(kZeroHash);
}

void ChainVerifier::add(const StoredRecord& record) {
  if (!started_) start();
  ++records_;
  if (record.job_id.empty() && !parse_retention_record(record.json) &&
      !is_snapshot_removal_record(record.json) && !is_data_request_answer_record(record.json))
    problem(record, "has no job and is not a retention, snapshot removal or data request answer record");
  if (record.seq < expected_seq_) {
    problem(record, "is still present although a retention record covers it");
  } else {
    if (record.seq > expected_seq_) {
      std::string missing = expected_seq_ == record.seq - 1
                                ? "seq " + std::to_string(expected_seq_)
                                : "seq " + std::to_string(expected_seq_) + ".." +
                                      std::to_string(record.seq - 1);
      problems_.push_back("tenant " + tenant_ + ": records " + missing +
                          " missing (a gap not covered by a retention record)");
    } else if (record.prev_hash != expected_prev_) {
      problem(record, last_ || cover_ ? "broken link: prev_hash is not the previous record's hash"
                                      : "broken link: the first record's prev_hash is not zero");
    }
    expected_seq_ = record.seq + 1;
    expected_prev_ = record.hash;
  }
  if (record_hash(record.prev_hash, record.json) != record.hash) problem(record, "hash mismatch");
  if (!last_ || record.seq > last_->seq) last_ = ChainHead{record.seq, record.hash};
}

void ChainVerifier::finish(const std::optional<ChainHead>& head) {
  std::string who = "tenant " + tenant_ + ": ";
  if (!head) {
    if (last_) problems_.push_back(who + "records exist but the chain head is missing");
    return;
  }
  if (!last_) {
    problems_.push_back(who + "chain head at seq " + std::to_string(head->seq) +
                        " but no records");
    return;
  }
  if (last_->seq < head->seq) {
    problems_.push_back(who + "records seq " + std::to_string(last_->seq + 1) + ".." +
                        std::to_string(head->seq) + " missing at the end of the chain");
  } else if (last_->seq > head->seq) {
    problems_.push_back(who + "record seq " + std::to_string(last_->seq) +
                        " is beyond the chain head (seq " + std::to_string(head->seq) + ")");
  } else if (last_->hash != head->hash) {
    problems_.push_back(who + "the last record's hash does not match the chain head");
  }
}

}  // namespace airlock::store
