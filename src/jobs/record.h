// The job record: one JSON document per job, the same for CLI, API and
// store (schema in docs/job-record.md). Written once, when the job ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "egress/attempt_log.h"
#include "jobs/outcome.h"
#include "jobs/policy.h"
#include "requests/data_request.h"
#include "validate/checks.h"
#include "workspace/manifest.h"

namespace airlock::jobs {

struct CapturedStream {
  std::string text;     // the exact bytes, at most the cap
  uint64_t bytes = 0;   // everything the program wrote
  bool truncated = false;
};

struct Usage {
  uint64_t wall_ms = 0;
  uint64_t cpu_ms = 0;
  uint64_t peak_memory_bytes = 0;
};

// Where the time went, in milliseconds (fractional), for operators and the
// benchmark: setup before the clone, the clone until the payload started,
// the run, collection and the final cleanup.
struct Timing {
  std::vector<std::pair<std::string, double>> phases;
  void add(const std::string& name, double ms) { phases.emplace_back(name, ms); }
};

struct Cleanup {
  std::vector<std::string> removed;
  std::vector<std::string> failed;  // "what: why"
  // Removed after the record was written (the service answers first; `airlock
  // run` removes them while the record is written): what goes then ("mounts",
  // "cgroup", "staging"); a failure is in the service's log and metrics or on
  // `airlock run`'s stderr, and `airlock sweep` finds what is left.
  std::vector<std::string> after_record;
};

struct JobRecord {
  std::string id;
  std::string owner;
  std::vector<std::string> command;
  std::string image_name;
  std::string image_digest;
  // The boundary's profile (sandbox/profile.h): its name and the digest of
  // its data ("" when the name is unknown).
  std::string profile_name = "standard";
  std::string profile_digest;
  std::string image_manifest_digest;  // "" for host (it has no manifest)
  // The digest names content that can be run again (a stored image); the
  // host image's digest only tells that its packages changed: unpinned.
  bool image_pinned = false;
  std::string image_requested;  // as the request named it: "python-data", "x@sha256:..."
  JobPolicy policy;
  std::vector<workspace::ManifestEntry> inputs;
  // The workspace snapshot /workspace was restored from ("" digest: none).
  struct Snapshot {
    std::string digest;  // "sha256:<hex>" of its canonical manifest
    uint64_t entries = 0;
    uint64_t size_bytes = 0;
  } snapshot;
  std::vector<workspace::ManifestEntry> outputs;
  Outcome outcome = Outcome::kSandboxError;
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::vector<std::string> limits_hit;
  Usage usage;
  CapturedStream stdout_stream, stderr_stream;
  std::string started_at, finished_at;  // RFC 3339, UTC, milliseconds
  Cleanup cleanup;
  Timing timing;
  std::string start_kind = "cold";      // cold, warm, preloaded
  std::string prepared = "on_demand";   // on_demand, or ahead (taken from the warm pool)
  std::string start_note;               // why not warm, when the pool could not serve
  std::string interpreter;              // preloaded: "data" or "stdlib" (pool/preload_choice.h)
  uint32_t sandbox_uid = 0;
  uint32_t host_uid = 0;
  std::string cgroup_backend;
  std::vector<egress::Attempt> network;  // every request to the egress gateway
  uint64_t network_dropped = 0;          // attempts beyond what the record keeps

  // What the program asked the application for (docs/data-requests.md);
  // absent when it asked nothing (no line came on its channel).
  struct DataRequests {
    requests::Limits limits;
    std::vector<requests::DataRequest> requests;
    std::vector<requests::Refusal> refused;
  };
  std::optional<DataRequests> data_requests;

  // Set on a follow-up job (`answers` of POST /v1/jobs): the job whose
  // requests it answers, which of them, and that job's record hash.
  struct Answers {
    std::string job;
    std::vector<std::string> requests;
    std::string record_sha256;
  };
  std::optional<Answers> answers;

  // The output checks the request asked for, in order; absent when none ran
  // (they run only on the outputs of a job that succeeded).
  std::optional<std::vector<validate::CheckResult>> checks;

  // Set when the job ran in the service (`airlock serve`): who asked, the
  // job's states, and the service's share of the time beside `timing`.
  struct ServiceSide {
    std::string tenant, key_id;
    std::string created_at, started_at, finished_at;  // started_at "": it never started
    Timing timing;  // queue, prepare, run, finish
    // The node that ended the job: ran it, or found it left by a lost node
    // (JSON "node"; omitted when "").
    std::string node;
  };
  std::optional<ServiceSide> service;

  bool stored = false;  // written to the state directory (not part of the JSON)

  void add_limit(const std::string& name);  // once each
};

// How a captured stream is written in the record: as "utf-8" text when it is
// valid UTF-8 whose JSON form is at most kStreamTextSlack larger than its
// base64 form, else as "base64". Either way the stream takes at most
// base64_size(cap) + kStreamTextSlack bytes of the record, and its exact
// bytes come back with stream_bytes().
enum class StreamEncoding { kUtf8, kBase64 };
inline constexpr size_t kStreamTextSlack = 4096;
StreamEncoding stream_encoding(std::string_view bytes);
std::string_view encoding_name(StreamEncoding encoding);
// Length of `s` as a JSON string's contents (nlohmann's escapes, UTF-8 kept).
size_t json_escaped_size(std::string_view s);
// The bytes of a record's "stdout" or "stderr" object; nullopt if malformed.
std::optional<std::string> stream_bytes(const nlohmann::json& stream);

nlohmann::json to_json(const JobRecord& record);
// The record's "data_requests" object.
nlohmann::json to_json(const JobRecord::DataRequests& data_requests);
// Serialized as JSON; program output is written as stream_encoding() says.
std::string record_text(const JobRecord& record);

// RFC 3339 UTC time with milliseconds, e.g. 2026-11-30T03:00:00.123Z.
std::string now_rfc3339();
std::string rfc3339(std::chrono::system_clock::time_point at);

}  // namespace airlock::jobs
