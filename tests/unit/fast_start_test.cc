// Pure parts of fast start: the spec's wire form, the preloaded runner's
// command check and escaping, pool class keys, the wire reader's bounds.
#include <gtest/gtest.h>

#include "base/wire.h"
#include "pool/prepared.h"
#include "sandbox/preload_python.h"
#include "sandbox/spec_codec.h"

namespace airlock {
namespace {

sandbox::SandboxSpec sample_spec() {
  sandbox::SandboxSpec s;
  s.root_mountpoint = "/run/airlock/root";
  s.dirs = {"usr", "etc", "inputs"};
  s.files = {{"etc/passwd", std::string("root:x:0:0\n\0binary", 18), 0644}};
  s.symlinks = {{"usr/bin", "bin"}};
  s.binds = {{"/usr", "usr", false, true, false}, {"/dev/null", "dev/null", true, false, true}};
  s.attach = {{7, "inputs", false}, {9, "output", true}};
  s.proc_mask_files = {"/proc/kcore"};
  s.proc_mask_dirs = {"/proc/acpi"};
  s.proc_readonly = {"/proc/sys"};
  s.hostname = "airlock";
  s.uid = 1000;
  s.gid = 1001;
  s.rlimits = {{RLIMIT_NOFILE, 1024, 2048}};
  s.seccomp.instructions = {{0x20, 1, 2, 3}, {0x06, 0, 0, 0x7fff0000}};
  return s;
}

TEST(SpecCodec, RoundTripsEveryFieldAndRenumbersFds) {
  auto spec = sample_spec();
  auto enc = sandbox::encode_spec(spec);
  EXPECT_EQ(enc.fds, (std::vector<int>{7, 9}));
  auto dec = sandbox::decode_spec(enc.bytes, {40, 41});
  ASSERT_TRUE(dec) << dec.error().what;
  EXPECT_EQ(dec->root_mountpoint, spec.root_mountpoint);
  EXPECT_EQ(dec->dirs, spec.dirs);
  ASSERT_EQ(dec->files.size(), 1u);
  EXPECT_EQ(dec->files[0].content, spec.files[0].content);  // NUL bytes survive
  EXPECT_EQ(dec->binds[1].is_file, true);
  EXPECT_EQ(dec->binds[1].recursive, false);
  EXPECT_EQ(dec->binds[1].noexec, true);
  EXPECT_EQ(dec->attach[0].fd, 40);
  EXPECT_EQ(dec->attach[1].fd, 41);
  EXPECT_EQ(dec->attach[1].writable, true);
  EXPECT_EQ(dec->proc_readonly, spec.proc_readonly);
  EXPECT_EQ(dec->gid, 1001u);
  EXPECT_EQ(dec->rlimits[0].hard, 2048u);
  ASSERT_EQ(dec->seccomp.instructions.size(), 2u);
  EXPECT_EQ(dec->seccomp.instructions[1].k, 0x7fff0000u);
  EXPECT_EQ(dec->in_process, nullptr);
}

TEST(SpecCodec, RefusesTruncationExtraBytesAndMissingFds) {
  auto enc = sandbox::encode_spec(sample_spec());
  for (size_t len = 0; len < enc.bytes.size(); len += 7)
    EXPECT_FALSE(sandbox::decode_spec(enc.bytes.substr(0, len), {40, 41})) << len;
  EXPECT_FALSE(sandbox::decode_spec(enc.bytes + "x", {40, 41}));
  EXPECT_FALSE(sandbox::decode_spec(enc.bytes, {40}));  // the second attach names fd index 1
}

TEST(Wire, ReaderNeverReadsPastTheEndAndRefusesHugeCounts) {
  wire::Writer w;
  w.u32(1u << 31);  // a count far beyond the message
  const std::string message = w.take();  // the Reader views it: it must outlive the Reader
  wire::Reader r(message);
  EXPECT_EQ(r.count(4), 0u);
  EXPECT_FALSE(r.ok());
  wire::Reader empty("");
  EXPECT_EQ(empty.str(), "");
  EXPECT_FALSE(empty.ok());
}

TEST(Preload, OnlyPlainPythonInvocationsArePreloadable) {
  using sandbox::preloadable;
  EXPECT_TRUE(preloadable({"python3", "/inputs/a.py"}, {"PATH=/usr/bin"}, "3.11"));
  EXPECT_TRUE(preloadable({"python3.11", "-c", "print(1)", "x"}, {}, "3.11"));
  EXPECT_TRUE(preloadable({"/usr/bin/python3", "-m", "json.tool"}, {}, "3.11"));
  EXPECT_FALSE(preloadable({"python3"}, {}, "3.11"));                      // a REPL on /dev/null
  EXPECT_FALSE(preloadable({"python3", "-u", "a.py"}, {}, "3.11"));        // flags change start-up
  EXPECT_FALSE(preloadable({"python3", "-c"}, {}, "3.11"));
  EXPECT_FALSE(preloadable({"python3.12", "a.py"}, {}, "3.11"));           // another interpreter
  EXPECT_FALSE(preloadable({"/opt/python3", "a.py"}, {}, "3.11"));
  EXPECT_FALSE(preloadable({"sh", "a.py"}, {}, "3.11"));
  EXPECT_FALSE(preloadable({"python3", "a.py"}, {"PYTHONPATH=/x"}, "3.11"));
  // The data request helper's directory is every job's PYTHONPATH: the runner applies it.
  EXPECT_TRUE(preloadable({"python3", "a.py"}, {"PYTHONPATH=/run/airlock/python"}, "3.11"));
  EXPECT_FALSE(preloadable({"python3", "a.py"}, {"PYTHONPATH=/x:/run/airlock/python"}, "3.11"));
  EXPECT_TRUE(preloadable({"python3", "a.py"}, jobs::job_environment({}), "3.11"));
}

TEST(Preload, RunnerCallEscapesEveryByte) {
  const char* argv[] = {"python3", "-c", "print(\"\\\")\"\n'''", nullptr};
  const char* env[] = {"A=\xff\x01", nullptr};
  std::string code = sandbox::runner_call(argv, env);
  // Only hex escapes inside the literals: no quote, backslash or newline of the input survives raw.
  std::string lists = code.substr(code.find('('));
  EXPECT_EQ(lists.find("print"), std::string::npos);
  EXPECT_EQ(lists.find('\''), std::string::npos);
  EXPECT_NE(code.find("b\"\\x70\\x79"), std::string::npos);  // "py" of python3
  EXPECT_NE(code.find("\\xff\\x01"), std::string::npos);
}

TEST(PoolClass, LimitsAreNotPartOfTheClass) {
  jobs::JobPolicy a, b;
  b.memory_bytes = 64 << 20;
  b.workspace_bytes = 1 << 20;
  b.cpu_time_ms = 2000;
  EXPECT_EQ(jobs::sandbox_class_key(a, "host", jobs::Preload::kData), jobs::sandbox_class_key(b, "host", jobs::Preload::kData));
  EXPECT_NE(jobs::sandbox_class_key(a, "host", jobs::Preload::kData), jobs::sandbox_class_key(a, "host", std::nullopt));
  // Nor are network rules: every prepared sandbox has only lo until a job
  // attaches its egress gateway (jobs/job_egress.h).
  b.allow.push_back({"api.example.com", 443});
  EXPECT_EQ(jobs::sandbox_class_key(a, "host", std::nullopt), jobs::sandbox_class_key(b, "host", std::nullopt));
}

// What a pooled sandbox is set to: a job with the pool's limits writes no
// cgroup file and resizes no mount (fit_to_policy), so every limit that a
// cgroup or a mount holds must be part of it, and the cpu time (init's rlimit,
// always set) must not be.
TEST(PoolClass, SandboxLimitsHoldWhatTheGroupAndTheMountsAreSetTo) {
  jobs::JobPolicy base;
  const jobs::SandboxLimits have = jobs::sandbox_limits_for(base);
  EXPECT_EQ(have.cgroup.memory_bytes, base.memory_bytes);
  EXPECT_EQ(have.cgroup.pids, base.pids);
  EXPECT_EQ(have.cgroup.cpus, base.cpus);
  EXPECT_EQ(have.work_bytes, base.workspace_bytes);
  EXPECT_EQ(have.input_bytes, jobs::input_mount_bytes(base.inputs));
  EXPECT_EQ(have.input_inodes, jobs::input_mount_inodes(base.inputs));

  jobs::JobPolicy cpu_time = base;
  cpu_time.cpu_time_ms = 2000;
  cpu_time.timeout_ms = 5000;
  EXPECT_EQ(jobs::sandbox_limits_for(cpu_time), have);

  auto differs = [&](auto change) {
    jobs::JobPolicy p = base;
    change(p);
    return !(jobs::sandbox_limits_for(p) == have);
  };
  EXPECT_TRUE(differs([](jobs::JobPolicy& p) { p.memory_bytes = 64 << 20; }));
  EXPECT_TRUE(differs([](jobs::JobPolicy& p) { p.pids = 8; }));
  EXPECT_TRUE(differs([](jobs::JobPolicy& p) { p.cpus = 0.5; }));
  EXPECT_TRUE(differs([](jobs::JobPolicy& p) { p.workspace_bytes = 1 << 20; }));
  EXPECT_TRUE(differs([](jobs::JobPolicy& p) { p.inputs.max_total_bytes = 1 << 20; }));
  EXPECT_TRUE(differs([](jobs::JobPolicy& p) { p.inputs.max_count = 2; }));
}

}  // namespace
}  // namespace airlock
