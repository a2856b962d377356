#include "service/job_query.h"

namespace airlock::service {
namespace {

// A filter value from the URL: printable, not too long (shown back in errors).
bool plain_text(const std::string& v, size_t max) {
  if (v.empty() || v.size() > max) return false;
  for (unsigned char c : v)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

ApiResult<JobQuery> parse_job_query(const std::map<std::string, std::string>& q, const JobQueryCaller& who) {
  JobQuery out;
  store::JobFilter& f = out.filter;
  for (const auto& [k, v] : q) {
    if (k == "state") {
      if (v == "queued") f.state = store::JobState::kQueued;
      else if (v == "running") f.state = store::JobState::kRunning;
      else if (v == "finished") f.state = store::JobState::kFinished;
      else return api_error(400, "bad_request", "state: one of queued, running, finished");
    } else if (k == "outcome") {
      f.outcome = v;
    } else if (k == "limit") {
      if (v.empty() || v.size() > 3 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1 ||
          std::stoi(v) > 500)
        return api_error(400, "bad_request", "limit: a whole number from 1 to 500");
      f.limit = std::stoi(v);
    } else if (k == "cursor") {
      f.cursor = v;
    } else if (k == "created_after") {
      f.created_after = v;
    } else if (k == "created_before") {
      f.created_before = v;
    } else if (k == "image") {
      if (!plain_text(v, 256)) return api_error(400, "bad_request", "image: an image name, 1 to 256 printable characters");
      f.image = v;
    } else if (k == "tenant") {
      auto t = parse_tenant_param(v, who);
      if (!t) return std::unexpected(t.error());
      out.tenant = *t;
    } else {
      return api_error(400, "bad_request", "unknown query parameter " + k);
    }
  }
  return out;
}

}  // namespace airlock::service
