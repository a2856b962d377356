// The service's data directory fills up during a load: `airlock serve` runs
// on a small tmpfs the test mounts, a ballast file takes most of it, and
// uploads and jobs with outputs fill the rest. Clients get a clear 507, no
// accepted job loses its record, stored outputs and records are intact, the
// service goes on once space is freed, and the chains verify.
#include <dirent.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

// A tmpfs of `size_mb` mounted at `path` for the test's duration.
class SmallFilesystem {
 public:
  SmallFilesystem(std::string path, int size_mb) : path_(std::move(path)) {
    ::mkdir(path_.c_str(), 0700);
    std::string opts = "size=" + std::to_string(size_mb) + "m,mode=0700";
    if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0)
      throw std::runtime_error("mount a tmpfs on " + path_);
  }
  ~SmallFilesystem() {
    ::umount2(path_.c_str(), MNT_DETACH);
    ::rmdir(path_.c_str());
  }
  uint64_t free_bytes() const {
    struct statvfs s{};
    ::statvfs(path_.c_str(), &s);
    return static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string random_text(std::mt19937& rng, size_t bytes) {
  static const char hex[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes);
  while (s.size() < bytes) s += (s.size() % 64 == 63) ? '\n' : hex[rng() % 16];
  return s;
}

std::string sqlite_integrity(const std::string& db_path) {
  sqlite3* db = nullptr;
  std::string result = "cannot open";
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return result;
}

bool is_storage_full(const airlock::api::Response& r) {
  if (r.status != 507) return false;
  json j = json::parse(r.body, nullptr, false);
  return !j.is_discarded() && j["error"]["code"] == "insufficient_storage" &&
         j["error"]["message"].get<std::string>().find("storage is full") != std::string::npos;
}

// A job whose output is `kb` KiB of fresh random text (each one needs room
// of its own), written after the shell commands `first`.
json output_job(int kb, const std::string& first = "") {
  std::string sh = first + "head -c " + std::to_string(kb * 768) + " /dev/urandom | base64 > /output/out.txt";
  return {{"command", {"sh", "-c", sh}}};
}

// POST /v1/jobs; while the tenant's queue is full (429), waits for a place
// (up to 2 minutes) and submits again.
airlock::api::Response submit_within_the_queue_cap(HttpClient& http, const TestKey& key, const json& job) {
  auto r = http.request("POST", "/v1/jobs", job.dump(), key.auth());
  for (int waited = 0; r.status == 429 && waited < 120'000; waited += 100) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    r = http.request("POST", "/v1/jobs", job.dump(), key.auth());
  }
  return r;
}

}  // namespace

TEST(FaultDiskFull, ClientsGetAClearErrorAndNoRecordIsLost) {
  TempDir dir;
  SmallFilesystem fs(dir.sub("data"), 24);
  // The queue caps are raised past what the test submits (the fixture's tenants
  // allow 64 queued jobs; the default service cap is a quarter of max_queued),
  // and a job refused for a full queue all the same waits for a place: what is
  // tested is the disk, not how fast this machine drains the queue.
  ServiceProcess svc({"--max-queued", "512", "--tenant-max-queued", "128"}, {}, fs.path());
  HttpClient http(svc.port());
  std::mt19937 rng(11);

  // The ballast leaves about 1.5 MiB: a few jobs' outputs and uploads fill it.
  std::string ballast = fs.path() + "/ballast";
  auto fill = [&](const std::string& path, uint64_t leave) {
    std::ofstream out(path, std::ios::binary);
    std::string chunk(4 << 10, 'b');
    for (uint64_t left = fs.free_bytes() > leave ? fs.free_bytes() - leave : 0; left >= chunk.size();
         left -= chunk.size())
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  };
  fill(ballast, 3u << 19);
  std::printf("disk full: %llu KiB free after the ballast\n", static_cast<unsigned long long>(fs.free_bytes() >> 10));

  // Jobs accepted while there is room that end once there is none: their
  // records (and outputs) meet a full disk.
  std::vector<std::string> accepted;
  for (int i = 0; i < 4; ++i) {
    json job = i % 2 ? json{{"command", {"sleep", "2"}}} : output_job(64, "sleep 2; ");
    auto r = http.request("POST", "/v1/jobs", job.dump(), svc.alpha.auth());
    ASSERT_EQ(r.status, 201) << r.body;
    accepted.push_back(r.json()["id"]);
  }

  // Fill it: uploads and jobs until both have been refused for lack of room.
  std::map<std::string, std::string> uploads;  // id -> sha256
  int jobs_refused = 0, uploads_refused = 0;
  for (int i = 0; i < 80 && (jobs_refused < 3 || uploads_refused < 3); ++i) {
    std::string text = random_text(rng, 96 << 10);
    auto up = http.request("POST", "/v1/files?name=u" + std::to_string(i) + ".txt", text, svc.alpha.auth());
    if (up.status == 201) uploads[up.json()["id"]] = airlock::Sha256::of(text);
    else if (is_storage_full(up)) ++uploads_refused;
    else ADD_FAILURE() << "upload " << i << ": " << up.status << " " << up.body;

    auto r = submit_within_the_queue_cap(http, svc.alpha, output_job(128));
    if (r.status == 201) accepted.push_back(r.json()["id"]);
    else if (is_storage_full(r)) ++jobs_refused;
    else ADD_FAILURE() << "job " << i << ": " << r.status << " " << r.body;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Whatever room is left goes too, while the sleeping jobs end.
  std::string topping = fs.path() + "/ballast2";
  fill(topping, 0);
  std::printf("disk full: %zu jobs accepted, %d refused; %zu uploads stored, %d refused; %llu KiB free\n",
              accepted.size(), jobs_refused, uploads.size(), uploads_refused,
              static_cast<unsigned long long>(fs.free_bytes() >> 10));
  EXPECT_GE(jobs_refused, 3);
  EXPECT_GE(uploads_refused, 3);
  // The service still answers while full: reads work.
  EXPECT_EQ(http.request("GET", "/healthz").status, 200);
  EXPECT_EQ(http.request("GET", "/v1/jobs/" + accepted[0], "", svc.alpha.auth()).status, 200);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  // Jobs ended meanwhile whose records the store could not take: kept, not lost.
  EXPECT_NE(svc.log().find("\"record_not_stored\""), std::string::npos) << svc.log().substr(0, 4000);

  // Space is back: every accepted job ends with its record.
  ASSERT_EQ(::unlink(topping.c_str()), 0);
  ASSERT_EQ(::unlink(ballast.c_str()), 0);
  int succeeded = 0, storage_errors = 0;
  for (const auto& id : accepted) {
    json j;
    for (int waited = 0; waited < 60000; waited += 50) {
      j = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth()).json();
      if (j["state"] == "finished") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(j["state"], "finished") << "job " << id << " lost its end: " << j.dump();
    ASSERT_TRUE(j.contains("record")) << j.dump();
    if (j["outcome"] == "succeeded") {
      ++succeeded;
      // Each stored output is the one the record names.
      for (const auto& out : j["record"]["outputs"]) {
        auto file = http.request("GET", "/v1/jobs/" + id + "/outputs/" + out["name"].get<std::string>(), "",
                                 svc.alpha.auth());
        ASSERT_EQ(file.status, 200) << j.dump();
        EXPECT_EQ(airlock::Sha256::of(file.body), out["sha256"]);
      }
    } else {
      ++storage_errors;
      EXPECT_EQ(j["outcome"], "sandbox_error") << j.dump();
      EXPECT_NE(j["record"]["reason"].get<std::string>().find("No space left on device"), std::string::npos)
          << j.dump();
    }
  }
  std::printf("disk full: %d jobs succeeded, %d ended sandbox_error for lack of room\n", succeeded, storage_errors);

  // And the service goes on: uploads and jobs work again, stored uploads are intact.
  ASSERT_FALSE(uploads.empty());
  auto [file_id, file_sha] = *uploads.begin();
  json again = run_job(http, svc.alpha,
                       {{"command", {"sh", "-c", "cat /inputs/* > /output/out.txt"}}, {"inputs", {file_id}}});
  EXPECT_EQ(again["outcome"], "succeeded") << again.dump();
  EXPECT_EQ(again["record"]["inputs"][0]["sha256"], file_sha);
  auto up = http.request("POST", "/v1/files?name=after.txt", "after\n", svc.alpha.auth());
  EXPECT_EQ(up.status, 201) << up.body;

  EXPECT_EQ(svc.stop(), 0);
  auto verify = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(std::to_string(accepted.size() + 1) + " records"), std::string::npos) << verify.out;
  EXPECT_EQ(sqlite_integrity(svc.data_dir() + "/airlock.db"), "ok");
  // Nothing half-written is left: no spooled bodies, no partial artifact copies.
  for (const char* sub : {"/spool", "/artifacts/tmp"}) {
    std::vector<std::string> left;
    if (DIR* d = ::opendir((svc.data_dir() + sub).c_str())) {
      while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') left.push_back(e->d_name);
      ::closedir(d);
    }
    EXPECT_TRUE(left.empty()) << sub << ": " << left.size() << " files left";
  }
}
