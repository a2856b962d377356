// Store: many threads, and two connections (as the daemon and the CLI), at once.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

// Creates, starts and finishes `n` jobs, alternating between `tenants`.
void work(Store& store, const std::vector<std::string>& tenants, int thread, int n,
          std::atomic<int>& failures) {
  for (int i = 0; i < n; ++i) {
    JobRow row;
    row.tenant_id = tenants[static_cast<size_t>(i) % tenants.size()];
    row.key_id = "k";
    row.request_json = "{}";
    if (i % 5 == 0) row.idempotency_key = "t" + std::to_string(thread) + "-" + std::to_string(i);
    auto created = store.create_job(row);
    if (!created || !created->second) {
      ++failures;
      continue;
    }
    const std::string& id = created->first.id;
    if (!store.mark_running(id, 1000 + i, "")) ++failures;
    nlohmann::json rec = {{"id", id}, {"thread", thread}, {"usage", {{"cpu_ms", 1}}}};
    if (!store.finish_job(id, "succeeded", "", rec.dump(), {})) ++failures;
    if (i % 10 == 0) {
      JobFilter f;
      f.limit = 5;
      if (!store.jobs(row.tenant_id, f)) ++failures;
    }
  }
}

void expect_contiguous_chains(Store& store, const std::vector<std::string>& tenants,
                              uint64_t total) {
  auto report = store.verify();
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_TRUE(report->ok) << report->problems[0];
  EXPECT_EQ(report->records, total);
  uint64_t jobs = 0;
  for (const auto& t : tenants) {
    auto u = store.usage(t, "", "");
    ASSERT_TRUE(u);
    jobs += u->jobs;
    EXPECT_EQ(u->cpu_ms, u->jobs);
  }
  EXPECT_EQ(jobs, total);
}

class StoreConcurrency : public ::testing::TestWithParam<testing::Backend> {};

TEST_P(StoreConcurrency, EightThreadsKeepEveryChainIntact) {
  TempDir tmp;
  StoreOptions options;
  std::unique_ptr<Store> store;
  AIRLOCK_OPEN_STORE_ON_BACKEND(tmp.path(), store, options);
  std::vector<std::string> tenants;
  for (const char* name : {"acme", "globex", "initech"})
    tenants.push_back(store->create_tenant(name, {})->id);

  constexpr int kThreads = 8, kJobs = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { work(*store, tenants, t, kJobs, failures); });
  // A verifier runs alongside the writers and always sees whole transactions.
  std::atomic<bool> done{false};
  std::atomic<int> bad_verifies{0};
  std::thread verifier([&] {
    while (!done) {
      auto report = store->verify();
      if (!report || !report->ok) ++bad_verifies;
      // std::mutex is not fair: without a pause the verifier can hold the
      // store almost all the time and starve the writers (seen: 58 s in CI).
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  verifier.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(bad_verifies, 0);
  expect_contiguous_chains(*store, tenants, uint64_t{kThreads} * kJobs);
  EXPECT_TRUE(store->unfinished_jobs()->empty());
}

// Two stores on one database: two processes on one SQLite file, or two nodes
// on one PostgreSQL database, whose appends to one tenant's chain interleave.
TEST_P(StoreConcurrency, TwoConnectionsOnOneDatabaseShareTheChains) {
  TempDir tmp;
  StoreOptions options;
  std::unique_ptr<Store> first;
  AIRLOCK_OPEN_STORE_ON_BACKEND(tmp.path(), first, options);
  auto opened = Store::open(tmp.path(), options);
  ASSERT_TRUE(opened) << opened.error().message();
  auto second = std::move(*opened);
  std::vector<std::string> tenants = {first->create_tenant("acme", {})->id,
                                      second->create_tenant("globex", {})->id};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { work(t % 2 ? *second : *first, tenants, t, 25, failures); });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  expect_contiguous_chains(*first, tenants, 100);
  // A key made through one connection authenticates through the other at once
  // (the CLI creates keys while the daemon runs).
  auto key = second->create_key(tenants[0], "cli", {"run"});
  ASSERT_TRUE(key);
  auto found = first->authenticate(key->second);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->id, key->first.id);
}

AIRLOCK_STORE_BACKENDS(StoreConcurrency);

}  // namespace
}  // namespace airlock::store
