// The store's job path on SQLite and on PostgreSQL, one node, measured in one
// run (docs/performance.md "SQLite and PostgreSQL"). Both durable: SQLite in
// WAL mode with synchronous = FULL, PostgreSQL (a server this program starts
// in a temporary directory on the same disk, tests/support/postgres_server.h)
// with fsync and synchronous_commit on. One job = create_job, mark_running,
// finish_job (three writes, one record appended to the tenant's chain).
//  1. latency: one thread, N jobs, alternating between the two stores job by
//     job; p50 and p99 of each and the ratio PostgreSQL / SQLite.
//  2. throughput: 16 threads for SECONDS on one store, then on the other,
//     ROUNDS times interleaved; jobs/s of each and the ratio.
// Usage (root or not): store_backends_bench [N] [SECONDS] [ROUNDS]
// $TMPDIR chooses the disk of both (default /tmp).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/store.h"
#include "support/postgres_server.h"
#include "sys/remove_tree.h"
#include "timing.h"

using airlock::bench::Clock;
using airlock::bench::ms_since;
using airlock::bench::pct;
using airlock::store::Store;

namespace {

const char* kRequest = R"({"command":["/bin/true"]})";
const char* kRecord = R"({"outcome":"succeeded","usage":{"cpu_ms":1,"wall_ms":2}})";

bool one_job(Store& store, const std::string& tenant) {
  airlock::store::JobRow row;
  row.tenant_id = tenant;
  row.key_id = "bench";
  row.request_json = kRequest;
  auto created = store.create_job(row);
  if (!created) return false;
  if (!store.mark_running(created->first.id, 1, "")) return false;
  return bool(store.finish_job(created->first.id, "succeeded", "", kRecord, {}));
}

double throughput(Store& store, const std::string& tenant, int seconds) {
  std::atomic<int> jobs{0};
  double elapsed = airlock::bench::run_for(16, seconds, [&](int) {
    if (one_job(store, tenant)) ++jobs;
  });
  return jobs / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 300;
  int seconds = argc > 2 ? std::atoi(argv[2]) : 5;
  int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  auto server = airlock::testing::PostgresServer::start({.durable = true});
  if (!server) {
    std::fprintf(stderr, "store_backends_bench: %s\n", server.error().message().c_str());
    return 2;
  }
  auto url = (*server)->create_database();
  if (!url) {
    std::fprintf(stderr, "store_backends_bench: %s\n", url.error().message().c_str());
    return 2;
  }
  std::string tmpl = (*server)->dir() + "/sqlite-XXXXXX";  // the same disk as the server's
  std::string dir = ::mkdtemp(tmpl.data());
  auto sqlite = Store::open(dir + "/data");
  auto pg = Store::open(dir + "/pgdata", airlock::store::StoreOptions{.database_url = *url});
  if (!sqlite || !pg) {
    std::fprintf(stderr, "store_backends_bench: %s\n", (!sqlite ? sqlite : pg).error().message().c_str());
    return 2;
  }
  std::string ts = (*sqlite)->create_tenant("bench", {})->id;
  std::string tp = (*pg)->create_tenant("bench", {})->id;

  std::vector<double> lat_s, lat_p;
  for (int i = 0; i < 20; ++i) {  // warm up both
    one_job(**sqlite, ts);
    one_job(**pg, tp);
  }
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    if (!one_job(**sqlite, ts)) ++failed;
    lat_s.push_back(ms_since(t0));
    t0 = Clock::now();
    if (!one_job(**pg, tp)) ++failed;
    lat_p.push_back(ms_since(t0));
  }
  std::printf("latency, one thread, %d jobs each (create + start + finish), interleaved:\n", n);
  std::printf("  sqlite     p50 %.2f ms  p99 %.2f ms\n", pct(lat_s, 0.5), pct(lat_s, 0.99));
  std::printf("  postgres   p50 %.2f ms  p99 %.2f ms\n", pct(lat_p, 0.5), pct(lat_p, 0.99));
  std::printf("  ratio postgres/sqlite: p50 %.2f  p99 %.2f\n", pct(lat_p, 0.5) / pct(lat_s, 0.5),
              pct(lat_p, 0.99) / pct(lat_s, 0.99));

  std::vector<double> tput_s, tput_p;
  for (int r = 0; r < rounds; ++r) {
    tput_s.push_back(throughput(**sqlite, ts, seconds));
    tput_p.push_back(throughput(**pg, tp, seconds));
  }
  std::printf("throughput, 16 threads, %d s each, %d rounds interleaved (jobs/s):\n", seconds, rounds);
  for (int r = 0; r < rounds; ++r) std::printf("  round %d: sqlite %.0f  postgres %.0f\n", r + 1, tput_s[r], tput_p[r]);
  double ms = pct(tput_s, 0.5), mp = pct(tput_p, 0.5);
  std::printf("  median: sqlite %.0f  postgres %.0f  ratio postgres/sqlite %.2f\n", ms, mp, mp / ms);
  auto vs = (*sqlite)->verify();
  auto vp = (*pg)->verify();
  std::printf("chains: sqlite %s, postgres %s; failed jobs %d\n", vs && vs->ok ? "intact" : "BROKEN",
              vp && vp->ok ? "intact" : "BROKEN", failed);
  sqlite->reset();
  pg->reset();
  (void)airlock::sys::remove_tree(dir);
  return vs && vs->ok && vp && vp->ok && failed == 0 ? 0 : 1;
}
