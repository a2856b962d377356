// What the store as the cluster's queue (issue 17) adds to a job's store
// path, measured in one run against the path without it (docs/performance.md
// "Claims"). Per engine (SQLite; PostgreSQL on a durable server this program
// starts), one thread, jobs alternating between:
//   baseline: create_job, mark_running, finish_job (role all);
//   claimed:  create_job, claim_job, mark_running(node), finish_job (a worker);
// p50 per job of each and the ratio claimed / baseline. The queue holds
// QUEUED other jobs of another tenant at its max_running, so every claim
// passes over them, as a busy cluster's claims do.
// Usage: claims_bench [N] [QUEUED]   ($TMPDIR chooses the disk; default /tmp)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "store/store.h"
#include "support/postgres_server.h"
#include "sys/remove_tree.h"

using Clock = std::chrono::steady_clock;
using airlock::store::Store;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double p50(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char* kRecord = R"({"outcome":"succeeded"})";

std::string create(Store& s, const std::string& tenant) {
  airlock::store::JobRow row{.tenant_id = tenant, .key_id = "bench", .request_json = R"({"command":["/bin/true"]})"};
  auto c = s.create_job(row);
  return c ? c->first.id : "";
}

bool baseline(Store& s, const std::string& tenant) {
  std::string id = create(s, tenant);
  return !id.empty() && s.mark_running(id, 1, "") && s.finish_job(id, "succeeded", "", kRecord, {});
}

bool claimed(Store& s, const std::string& tenant) {
  if (create(s, tenant).empty()) return false;
  auto c = s.claim_job(airlock::store::ClaimOptions{.node_id = "bench-node"});
  if (!c || !*c) return false;
  return s.mark_running((*c)->id, 1, "", "bench-node") && s.finish_job((*c)->id, "succeeded", "", kRecord, {});
}

bool measure(const char* engine, Store& s, int n, int queued) {
  auto t = s.create_tenant("bench", {.max_running = 1000});
  auto full = s.create_tenant("full", {.max_running = 1});
  if (!t || !full) return false;
  if (!s.register_node({.id = "bench-node", .role = "worker", .address = "127.0.0.1:1", .slots = 1000})) return false;
  // The other tenant: one running job (at its max_running) and QUEUED waiting.
  std::string running = create(s, full->id);
  if (running.empty() || !s.mark_running(running, 1, "")) return false;
  for (int i = 0; i < queued; ++i)
    if (create(s, full->id).empty()) return false;
  for (int i = 0; i < 20; ++i)
    if (!baseline(s, t->id) || !claimed(s, t->id)) return false;  // warm up
  std::vector<double> base, claim;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    if (!baseline(s, t->id)) return false;
    base.push_back(ms_since(t0));
    t0 = Clock::now();
    if (!claimed(s, t->id)) return false;
    claim.push_back(ms_since(t0));
  }
  std::printf("%-10s baseline p50 %.3f ms   claimed p50 %.3f ms   ratio %.2f   (n=%d, queued=%d)\n", engine,
              p50(base), p50(claim), p50(claim) / p50(base), n, queued);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 300;
  int queued = argc > 2 ? std::atoi(argv[2]) : 1000;
  auto server = airlock::testing::PostgresServer::start({.durable = true});
  if (!server) {
    std::fprintf(stderr, "claims_bench: %s\n", server.error().message().c_str());
    return 2;
  }
  auto url = (*server)->create_database();
  if (!url) {
    std::fprintf(stderr, "claims_bench: %s\n", url.error().message().c_str());
    return 2;
  }
  std::string tmpl = (*server)->dir() + "/sqlite-XXXXXX";  // the same disk as the server's
  std::string dir = ::mkdtemp(tmpl.data());
  int rc = 0;
  {
    auto sqlite = Store::open(dir + "/data");
    auto pg = Store::open(dir + "/pgdata", airlock::store::StoreOptions{.database_url = *url});
    if (!sqlite || !pg) {
      std::fprintf(stderr, "claims_bench: %s\n", (!sqlite ? sqlite : pg).error().message().c_str());
      rc = 2;
    } else if (!measure("sqlite", **sqlite, n, queued) || !measure("postgresql", **pg, n, queued)) {
      std::fprintf(stderr, "claims_bench: a store call failed\n");
      rc = 1;
    }
  }
  (void)airlock::sys::remove_tree(dir);
  return rc;
}
