// airlock run as a user drives it: statuses, records, inputs, outputs,
// cancellation, and what happens when airlock itself is killed.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "run_helpers.h"

using namespace airlock::testing;

namespace {

std::vector<std::string> run_args(const TempDir& t, std::vector<std::string> rest) {
  std::vector<std::string> args = {"run", "--state-dir", t.state()};
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}
}  // namespace

TEST(Lifecycle, ReportsTheProgramsStatusAndStreams) {
  TempDir t;
  auto ran = run_airlock(run_args(t, {"--json", "--", "sh", "-c", "echo out; echo err >&2; exit 4"}));
  EXPECT_EQ(ran.status, 4) << ran.err;
  auto r = ran.record();
  EXPECT_EQ(r["outcome"], "failed");
  EXPECT_EQ(r["exit_code"], 4);
  EXPECT_EQ(r["stdout"]["text"], "out\n");
  EXPECT_EQ(r["stderr"]["text"], "err\n");
  EXPECT_EQ(r["command"], nlohmann::json({"sh", "-c", "echo out; echo err >&2; exit 4"}));
  EXPECT_TRUE(r["cleanup"]["ok"]);
  EXPECT_EQ(r["image"]["name"], "host");
  EXPECT_EQ(r["image"]["digest"].get<std::string>().rfind("sha256:", 0), 0u);
  // The record is also kept in the state directory, identical.
  std::string id = r["id"];
  auto stored = nlohmann::json::parse(read_text(t.state() + "/records/" + id + ".json"));
  EXPECT_EQ(stored, r);
  // The sandbox's remains were removed beside the record's write, and are
  // gone when airlock returns.
  EXPECT_EQ(r["cleanup"]["removed"], nlohmann::json::array({"processes"}));
  EXPECT_EQ(r["cleanup"]["after_record"], nlohmann::json::array({"mounts", "cgroup", "staging"}));
  EXPECT_TRUE(cgroups_named(id).empty());
  struct stat st{};
  EXPECT_NE(::lstat((t.state() + "/jobs/" + id).c_str(), &st), 0) << "the job directory is left";
  EXPECT_NE(::lstat((t.state() + "/jobs/.gone-" + id).c_str(), &st), 0) << "the job directory is left";
}

TEST(Lifecycle, EchoesOutputLiveWithoutJsonAndWritesTheRecordFile) {
  TempDir t;
  auto ran = run_airlock(run_args(t, {"--record", t.sub("new/dir/rec.json"), "--", "echo", "hello"}));
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(ran.out, "hello\n");
  EXPECT_NE(ran.err.find("succeeded"), std::string::npos) << ran.err;
  auto r = nlohmann::json::parse(read_text(t.sub("new/dir/rec.json")));  // parents created
  EXPECT_EQ(r["outcome"], "succeeded");
}

TEST(Lifecycle, OptionErrorsAreOneLineAndStartNothing) {
  TempDir t;
  for (auto args : std::vector<std::vector<std::string>>{
           {"run", "--memory", "lots", "--", "true"}, {"run", "--nope"}, {"run"}, {"bogus"}}) {
    auto ran = run_airlock(args);
    EXPECT_EQ(ran.status, 125);
    EXPECT_EQ(ran.err.rfind("airlock: ", 0), 0u) << ran.err;
    EXPECT_TRUE(ran.out.empty());
  }
}

TEST(Lifecycle, CommandNotFoundIsTheProgramsFailure) {
  TempDir t;
  auto ran = run_airlock(run_args(t, {"--json", "--", "no-such-program"}));
  EXPECT_EQ(ran.status, 127);
  auto r = ran.record();
  EXPECT_EQ(r["outcome"], "failed");
  EXPECT_NE(r["stderr"]["text"].get<std::string>().find("command not found"), std::string::npos);
}

TEST(Lifecycle, RejectedInputMeansTheCodeNeverStarts) {
  TempDir t;
  write_text(t.sub("blob.bin"), std::string("\x7f" "ELF\x00\x01\x02\x03", 8));
  auto ran = run_airlock(
      run_args(t, {"--json", "--input", t.sub("blob.bin"), "--", "sh", "-c", "echo started"}));
  EXPECT_EQ(ran.status, 120);
  auto r = ran.record();
  EXPECT_EQ(r["outcome"], "input_rejected");
  EXPECT_NE(r["reason"].get<std::string>().find("blob.bin"), std::string::npos) << r["reason"];
  EXPECT_EQ(r["stdout"]["bytes"], 0);
  EXPECT_TRUE(r["exit_code"].is_null());

  auto missing = run_airlock(run_args(t, {"--json", "--input", t.sub("nope.csv"), "--", "true"}));
  EXPECT_EQ(missing.status, 120);
  EXPECT_EQ(missing.record()["outcome"], "input_rejected");
}

TEST(Lifecycle, InputsAreReadOnlyCopiesWithAManifest) {
  TempDir t;
  write_text(t.sub("data.csv"), "a,b\n1,2\n");
  auto ran = run_airlock(run_args(
      t, {"--json", "--input", t.sub("data.csv"), "--", "sh", "-c",
          "cat /inputs/data.csv; echo x >> /inputs/data.csv || echo READONLY; pwd; echo $HOME"}));
  EXPECT_EQ(ran.status, 0) << ran.err;
  auto r = ran.record();
  EXPECT_EQ(r["stdout"]["text"], "a,b\n1,2\nREADONLY\n/workspace\n/workspace\n");
  ASSERT_EQ(r["inputs"].size(), 1u);
  EXPECT_EQ(r["inputs"][0]["name"], "data.csv");
  EXPECT_EQ(r["inputs"][0]["type"], "csv");
  EXPECT_EQ(r["inputs"][0]["sha256"], airlock::Sha256::of("a,b\n1,2\n"));
  EXPECT_EQ(read_text(t.sub("data.csv")), "a,b\n1,2\n");
}

TEST(Lifecycle, OutputsAreCopiedOnlyWhenTheJobSucceeds) {
  TempDir t;
  auto ok = run_airlock(run_args(t, {"--json", "--output-dir", t.sub("out"), "--", "sh", "-c",
                                     "mkdir /output/sub; echo hi > /output/sub/a.txt"}));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(read_text(t.sub("out/sub/a.txt")), "hi\n");
  EXPECT_EQ(ok.record()["outputs"][0]["name"], "sub/a.txt");

  auto bad = run_airlock(run_args(t, {"--json", "--output-dir", t.sub("out2"), "--", "sh", "-c",
                                      "echo hi > /output/a.txt; exit 1"}));
  EXPECT_EQ(bad.status, 1);
  struct stat st{};
  EXPECT_NE(::stat(t.sub("out2/a.txt").c_str(), &st), 0);
  EXPECT_EQ(bad.record()["outputs"][0]["verdict"], "accepted");
}

TEST(Lifecycle, SigtermCancelsTheJobAndEverythingInIt) {
  TempDir t;
  Spawned airlock(
      run_args(t, {"--json", "--", "sh", "-c", "sleep 1000 & setsid sleep 1000 & sleep 1000"}),
      t.path(), t.state());
  uid_t job_uid = job_uid_of(airlock.pid());
  ASSERT_NE(job_uid, 0u);
  for (int i = 0; i < 300 && processes_of_uid(job_uid).size() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(processes_of_uid(job_uid).size(), 5u);  // init, sh, three sleeps
  ::kill(airlock.pid(), SIGTERM);
  EXPECT_EQ(airlock.wait(), 130);
  auto r = nlohmann::json::parse(read_text(t.path() + "/airlock.out"));
  EXPECT_EQ(r["outcome"], "cancelled");
  EXPECT_TRUE(r["cleanup"]["ok"]);
  EXPECT_EQ(r["sandbox"]["host_uid"], job_uid);
  EXPECT_TRUE(no_processes_of_uid(job_uid, 0));
  EXPECT_TRUE(cgroups_named(r["id"]).empty());
}

TEST(Lifecycle, KillingAirlockKillsItsJobAndTheNextStartSweeps) {
  TempDir t;
  Spawned airlock(run_args(t, {"--", "sh", "-c", "sleep 1000 & exec sleep 1000"}), t.path(), t.state());
  uid_t job_uid = job_uid_of(airlock.pid());
  ASSERT_NE(job_uid, 0u);
  for (int i = 0; i < 300 && processes_of_uid(job_uid).size() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(processes_of_uid(job_uid).size(), 3u);  // init, sleep, sleep
  ::kill(airlock.pid(), SIGKILL);
  EXPECT_EQ(airlock.wait(), 128 + SIGKILL);
  // The sandbox's init had a parent-death signal: the whole pid namespace goes.
  EXPECT_TRUE(no_processes_of_uid(job_uid, 2000));

  // What the dead airlock left (its job directory and cgroup) is swept.
  std::string jobs = t.state() + "/jobs";
  std::string id;
  if (DIR* dir = ::opendir(jobs.c_str())) {
    while (dirent* e = ::readdir(dir))
      if (e->d_name[0] != '.') id = e->d_name;
    ::closedir(dir);
  }
  ASSERT_FALSE(id.empty()) << "the killed airlock's job directory should still be there";
  EXPECT_FALSE(cgroups_named(id).empty()) << "and its cgroup";
  auto ran = run_airlock({"sweep", "--state-dir", t.state()});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("removed what 1 earlier job(s) left behind"), std::string::npos) << ran.err;
  auto again = run_airlock({"sweep", "--state-dir", t.state()});
  EXPECT_NE(again.err.find("removed what 0 earlier"), std::string::npos) << again.err;
  EXPECT_TRUE(cgroups_named(id).empty());
  EXPECT_EQ(::rmdir(jobs.c_str()), 0) << "jobs/ should be empty after the sweep";
}

TEST(Lifecycle, ConcurrentJobsDoNotSeeEachOther) {
  TempDir t;
  Spawned first(
      run_args(t, {"--json", "--", "sh", "-c", "echo secret > /tmp/mine; sleep 1; ls /proc | grep -c '^[0-9]'"}),
      t.path(), t.state());
  auto second = run_airlock(run_args(
      t, {"--json", "--", "sh", "-c", "ls /tmp; ls /proc | grep '^[0-9]' | wc -l; ps 2>/dev/null | wc -l"}));
  EXPECT_EQ(first.wait(), 0);
  auto r = second.record();
  EXPECT_EQ(r["outcome"], "succeeded");
  std::string text = r["stdout"]["text"];
  EXPECT_EQ(text.find("mine"), std::string::npos) << text;
  auto f = nlohmann::json::parse(read_text(t.path() + "/airlock.out"));
  // init, sh, ls, grep: nothing of the other job.
  EXPECT_LE(std::stoi(f["stdout"]["text"].get<std::string>()), 5) << f["stdout"]["text"];
}
