// The cgroup v2 backend against a fake tree of regular files in a temp dir,
// plus the pure parsers (mountinfo, layout choice, flat-keyed files).
//
// The fake tree: the root holds cgroup.controllers and cgroup.subtree_control;
// the backend's on_mkdir hook creates the interface files the kernel would in
// each new group. Interface files do not go away with rmdir on a fake tree,
// so tests that remove() a group delete its files first (FakeTree::empty_dir).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sandbox/cgroup.h"
#include "sandbox/cgroup_files.h"
#include "sandbox/cgroup_mounts.h"

namespace airlock::sandbox {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::trunc);
  out << content;
}

class FakeTree {
 public:
  FakeTree() {
    char tmpl[] = "/tmp/airlock-cgroup-v2-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    put(root_ / "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
    put(root_ / "cgroup.subtree_control", "");
  }
  ~FakeTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  const fs::path& root() const { return root_; }
  fs::path group(const std::string& name) const { return root_ / "airlock" / name; }

  // What the kernel creates in a new cgroup2 directory (the subset we use).
  static void populate(const std::string& dir) {
    fs::path d(dir);
    put(d / "cgroup.controllers", "cpu memory pids\n");
    put(d / "cgroup.subtree_control", "");
    put(d / "cgroup.procs", "");
    put(d / "cgroup.events", "populated 0\nfrozen 0\n");
    put(d / "cgroup.kill", "");
    put(d / "cgroup.freeze", "0\n");
    put(d / "memory.max", "max\n");
    put(d / "memory.swap.max", "max\n");
    put(d / "memory.current", "0\n");
    put(d / "memory.peak", "0\n");
    put(d / "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
    put(d / "pids.max", "max\n");
    put(d / "pids.events", "max 0\n");
    put(d / "cpu.max", "max 100000\n");
    put(d / "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
  }

  // Deletes the fake interface files so that rmdir can work.
  static void empty_dir(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file()) fs::remove(e.path());
    }
  }

  std::unique_ptr<CgroupBackend> backend() const {
    return make_cgroup_v2_backend(root_.string(), "airlock", &FakeTree::populate);
  }

 private:
  fs::path root_;
};

constexpr uint64_t kMiB = 1024 * 1024;

TEST(CgroupV2Test, CreateEnablesControllersAndWritesLimits) {
  FakeTree tree;
  auto backend = tree.backend();
  EXPECT_EQ(backend->describe(), "cgroup v2 at " + tree.root().string());
  auto group = backend->create("job1", {.memory_bytes = 64 * kMiB, .pids = 16, .cpus = 1.5});
  ASSERT_TRUE(group) << group.error().message();
  EXPECT_EQ((*group)->name(), "job1");

  EXPECT_EQ(slurp(tree.root() / "cgroup.subtree_control"), "+memory +pids +cpu");
  EXPECT_EQ(slurp(tree.root() / "airlock" / "cgroup.subtree_control"), "+memory +pids +cpu");
  fs::path g = tree.group("job1");
  EXPECT_EQ(slurp(g / "memory.max"), "67108864");
  EXPECT_EQ(slurp(g / "memory.swap.max"), "0");
  EXPECT_EQ(slurp(g / "pids.max"), "16");
  EXPECT_EQ(slurp(g / "cpu.max"), "150000 100000");

  struct stat st {};
  ASSERT_GE((*group)->clone_into_fd(), 0);
  ASSERT_EQ(::fstat((*group)->clone_into_fd(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  struct stat want {};
  ASSERT_EQ(::stat(g.c_str(), &want), 0);
  EXPECT_EQ(st.st_ino, want.st_ino);
}

TEST(CgroupV2Test, ZeroLimitsLeaveDefaultsAndTinyCpuIsClamped) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {.cpus = 0.001});
  ASSERT_TRUE(group) << group.error().message();
  EXPECT_EQ(slurp(tree.group("job") / "memory.max"), "max\n");
  EXPECT_EQ(slurp(tree.group("job") / "pids.max"), "max\n");
  EXPECT_EQ(slurp(tree.group("job") / "cpu.max"), "1000 100000");  // the kernel's minimum quota
}

TEST(CgroupV2Test, ControllersAlreadyEnabledAreNotWrittenAgain) {
  FakeTree tree;
  put(tree.root() / "cgroup.subtree_control", "cpu io memory pids\n");
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group) << group.error().message();
  EXPECT_EQ(slurp(tree.root() / "cgroup.subtree_control"), "cpu io memory pids\n");
  put(tree.root() / "cgroup.subtree_control", "memory\n");
  ASSERT_TRUE(tree.backend()->create("job2", {}));
  EXPECT_EQ(slurp(tree.root() / "cgroup.subtree_control"), "+pids +cpu");
}

// A service or a pool makes a group for every sandbox: the parent is read
// and made ready by the first one only. (A parent whose controllers file
// cannot be read would fail a second preparation.)
TEST(CgroupV2Test, TheParentIsMadeReadyOncePerBackend) {
  FakeTree tree;
  auto backend = tree.backend();
  ASSERT_TRUE(backend->create("job1", {}));
  fs::remove(tree.root() / "airlock" / "cgroup.subtree_control");
  fs::create_directory(tree.root() / "airlock" / "cgroup.subtree_control");
  auto second = backend->create("job2", {.pids = 8});
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(slurp(tree.group("job2") / "pids.max"), "8");
  // A backend of its own prepares the parent, and finds it broken.
  EXPECT_FALSE(tree.backend()->create("job3", {}));
}

// Removed behind the backend's back (by hand, by another tool): the parent
// is made again, with the controllers passed down, and the group in it.
TEST(CgroupV2Test, AParentRemovedSinceIsMadeAgain) {
  FakeTree tree;
  auto backend = tree.backend();
  ASSERT_TRUE(backend->create("job1", {}));
  fs::remove_all(tree.root() / "airlock");
  auto again = backend->create("job2", {.memory_bytes = 32 * kMiB});
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(slurp(tree.root() / "airlock" / "cgroup.subtree_control"), "+memory +pids +cpu");
  EXPECT_EQ(slurp(tree.group("job2") / "memory.max"), "33554432");
}

TEST(CgroupV2Test, MissingSwapFileIsFine) {
  FakeTree tree;
  auto backend = make_cgroup_v2_backend(tree.root().string(), "airlock", [](const std::string& d) {
    FakeTree::populate(d);
    fs::remove(fs::path(d) / "memory.swap.max");
  });
  auto group = backend->create("job", {.memory_bytes = kMiB});
  ASSERT_TRUE(group) << group.error().message();
  EXPECT_EQ(slurp(tree.group("job") / "memory.max"), "1048576");
  EXPECT_FALSE(fs::exists(tree.group("job") / "memory.swap.max"));
}

TEST(CgroupV2Test, MissingLimitFileFailsAndRollsBack) {
  FakeTree tree;
  auto backend = make_cgroup_v2_backend(tree.root().string(), "airlock", [](const std::string& d) {
    // A directory the backend cannot rmdir once files exist: so make none.
    if (fs::path(d).filename() == "airlock") FakeTree::populate(d);
  });
  auto group = backend->create("job", {.pids = 4});
  ASSERT_FALSE(group);
  EXPECT_EQ(group.error().err, ENOENT);
  EXPECT_FALSE(fs::exists(tree.group("job")));  // removed again by the failed group
}

TEST(CgroupV2Test, ExistingGroupAndBadNamesAreRefused) {
  FakeTree tree;
  auto backend = tree.backend();
  auto first = backend->create("job", {});
  ASSERT_TRUE(first);
  auto again = backend->create("job", {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().err, EEXIST);
  for (const char* bad : {"", ".", "..", "a/b", "../../etc"}) {
    EXPECT_FALSE(backend->create(bad, {})) << bad;
    EXPECT_FALSE(backend->open(bad)) << bad;
  }
}

TEST(CgroupV2Test, AddProcessWritesCgroupProcs) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  ASSERT_TRUE((*group)->add_process(4242));
  EXPECT_EQ(slurp(tree.group("job") / "cgroup.procs"), "4242");
}

TEST(CgroupV2Test, NothingToJoinByHandCloneIntoCgroupPlacesTheSandbox) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  auto join = (*group)->open_self_join();
  ASSERT_TRUE(join) << join.error().message();
  EXPECT_TRUE(join->empty());  // the child gets no cgroup fds at all on v2
}

TEST(CgroupFiles, V1MembershipMapsEachControllerToItsGroup) {
  auto m = cgroupfs::parse_v1_membership(
      "12:cpu,cpuacct:/airlock/job\n4:memory:/airlock/job\n1:name=systemd:/\n0::/airlock/job\n"
      "garbage\n5:pids:/other");
  EXPECT_EQ(m["cpu"], "/airlock/job");
  EXPECT_EQ(m["cpuacct"], "/airlock/job");
  EXPECT_EQ(m["memory"], "/airlock/job");
  EXPECT_EQ(m["pids"], "/other");  // no trailing newline
  EXPECT_EQ(m["name=systemd"], "/");
  EXPECT_EQ(m.count(""), 0u);  // the cgroup2 line names no controller
  EXPECT_EQ(m.count("garbage"), 0u);
  EXPECT_EQ(m.size(), 5u);
}

TEST(CgroupV2Test, KillAllWritesCgroupKillAndWaitsForEmpty) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  fs::path g = tree.group("job");
  put(g / "cgroup.events", "populated 1\nfrozen 0\n");
  EXPECT_EQ((*group)->empty().value_or(true), false);
  auto timed_out = (*group)->kill_all(30);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().err, ETIMEDOUT);
  EXPECT_EQ(slurp(g / "cgroup.kill"), "1");

  put(g / "cgroup.kill", "");
  put(g / "cgroup.events", "populated 0\nfrozen 0\n");
  ASSERT_TRUE((*group)->kill_all());
  EXPECT_EQ(slurp(g / "cgroup.kill"), "") << "an empty group was killed";
  EXPECT_EQ((*group)->empty().value_or(false), true);
}

// A job's group is killed when its init exits, again before its outputs are
// read and again before it is removed: once found empty, it stays empty
// (nothing is left to fork into it), so later calls write and read nothing
// and remove() skips its own check, until add_process() puts a process in.
TEST(CgroupV2Test, KillAllOnceEmptyReturnsAtOnceUntilAProcessIsAdded) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  fs::path g = tree.group("job");
  put(g / "cgroup.events", "populated 1\nfrozen 0\n");
  ASSERT_FALSE((*group)->kill_all(30));  // still populated: killed, and it timed out
  EXPECT_EQ(slurp(g / "cgroup.kill"), "1");
  put(g / "cgroup.kill", "");
  put(g / "cgroup.events", "populated 0\nfrozen 0\n");
  ASSERT_TRUE((*group)->kill_all());
  EXPECT_EQ(slurp(g / "cgroup.kill"), "") << "an empty group was killed";
  put(g / "cgroup.events", "populated 1\nfrozen 0\n");  // not read again
  ASSERT_TRUE((*group)->kill_all(30));
  EXPECT_EQ(slurp(g / "cgroup.kill"), "");
  FakeTree::empty_dir(g);
  ASSERT_TRUE((*group)->remove()) << "remove() read cgroup.events again";

  auto next = tree.backend()->create("job2", {});
  ASSERT_TRUE(next);
  fs::path g2 = tree.group("job2");
  put(g2 / "cgroup.events", "populated 0\nfrozen 0\n");
  ASSERT_TRUE((*next)->kill_all());
  ASSERT_TRUE((*next)->add_process(4242));
  put(g2 / "cgroup.kill", "");
  put(g2 / "cgroup.events", "populated 1\nfrozen 0\n");
  auto timed_out = (*next)->kill_all(30);  // killed and waited for again
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().err, ETIMEDOUT);
  EXPECT_EQ(slurp(g2 / "cgroup.kill"), "1");
}

TEST(CgroupV2Test, KillAllWithoutCgroupKillFreezesAndThaws) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  fs::path g = tree.group("job");
  fs::remove(g / "cgroup.kill");  // before Linux 5.14
  put(g / "cgroup.freeze", "");
  put(g / "cgroup.events", "populated 1\nfrozen 0\n");  // (a fake tree never empties)
  auto timed_out = (*group)->kill_all(60);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().err, ETIMEDOUT);
  EXPECT_EQ(slurp(g / "cgroup.freeze"), "0");  // frozen, and thawed again
}

TEST(CgroupV2Test, UsageParsesStatFiles) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  fs::path g = tree.group("job");
  put(g / "cpu.stat", "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\nnr_periods 0\n");
  put(g / "memory.peak", "50331648\n");
  put(g / "memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n");
  put(g / "pids.events", "max 3\n");
  auto u = (*group)->usage();
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_EQ(u->cpu_ns, 1234567000u);
  EXPECT_EQ(u->peak_memory_bytes, 50331648u);
  EXPECT_EQ(u->oom_kills, 1u);
  EXPECT_TRUE(u->pids_limit_hit);
  EXPECT_EQ((*group)->cpu_ns().value_or(0), 1234567000u);

  put(g / "pids.events", "max 0\n");
  EXPECT_FALSE((*group)->usage()->pids_limit_hit);
}

TEST(CgroupV2Test, PeakFallsBackToHighestMemoryCurrentSeen) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  fs::path g = tree.group("job");
  fs::remove(g / "memory.peak");  // before Linux 5.19
  put(g / "memory.current", "1000\n");
  EXPECT_EQ((*group)->usage()->peak_memory_bytes, 1000u);
  put(g / "memory.current", "10\n");
  EXPECT_EQ((*group)->usage()->peak_memory_bytes, 1000u);
}

TEST(CgroupV2Test, RemoveIsAPlainRmdir) {
  FakeTree tree;
  auto group = tree.backend()->create("job", {});
  ASSERT_TRUE(group);
  fs::path g = tree.group("job");
  // A fake group still holds files: rmdir refuses and nothing is deleted.
  auto busy = (*group)->remove();
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().err, ENOTEMPTY);
  EXPECT_TRUE(fs::exists(g / "memory.max"));
  FakeTree::empty_dir(g);  // what the kernel's rmdir does by itself
  ASSERT_TRUE((*group)->remove());
  EXPECT_FALSE(fs::exists(g));
  EXPECT_TRUE(fs::exists(tree.root() / "airlock"));  // the parent stays
  group->reset();  // the destructor of a removed group touches nothing
  EXPECT_FALSE(fs::exists(g));
}

TEST(CgroupV2Test, ListAndOpen) {
  FakeTree tree;
  auto backend = tree.backend();
  EXPECT_TRUE(backend->list().value().empty());  // no parent yet
  auto a = backend->create("b-job", {});
  auto b = backend->create("a-job", {});
  ASSERT_TRUE(a && b);
  put(tree.root() / "airlock" / "not-a-group", "");  // files are not groups
  EXPECT_EQ(backend->list().value(), (std::vector<std::string>{"a-job", "b-job"}));

  auto opened = backend->open("a-job");
  ASSERT_TRUE(opened) << opened.error().message();
  EXPECT_EQ((*opened)->name(), "a-job");
  EXPECT_GE((*opened)->clone_into_fd(), 0);
  auto missing = backend->open("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().err, ENOENT);
}

// --- pure parsers -----------------------------------------------------------

constexpr const char* kPureV2 =
    "22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
    "26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n"
    "28 1 0:26 / /tmp rw shared:9 - tmpfs tmpfs rw\n";

// This machine: v1 per-controller mounts plus an empty cgroup2 "unified".
constexpr const char* kHybrid =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

// systemd-era v1: cpu and cpuacct co-mounted (with symlinks cpu, cpuacct).
constexpr const char* kCoMounted =
    "25 18 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 "
    "cgroup2 rw,nsdelegate\n"
    "27 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup "
    "cgroup rw,xattr,name=systemd\n"
    "31 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:15 - cgroup "
    "cgroup rw,cpu,cpuacct\n"
    "32 25 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:16 - cgroup "
    "cgroup rw,memory\n"
    "33 25 0:30 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup "
    "rw,pids\n"
    "34 25 0:31 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:18 - cgroup "
    "cgroup rw,freezer\n";

// v2 counts socket buffers in memory.max by default; the one way to turn that
// off is a boot option, which detect_cgroup_backend() refuses.
TEST(CgroupMountsTest, V2WithoutSocketAccountingIsRefused) {
  EXPECT_TRUE(check_v2_socket_accounting("BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet\n"));
  EXPECT_TRUE(check_v2_socket_accounting("cgroup.memory=nokmem psi=1"));
  EXPECT_TRUE(check_v2_socket_accounting("quiet -- cgroup.memory=nosocket"));  // init's argument
  for (const char* cmdline : {"ro cgroup.memory=nosocket quiet", "cgroup.memory=nokmem,nosocket\n",
                              "cgroup.memory=nosocket,nokmem"}) {
    auto st = check_v2_socket_accounting(cmdline);
    ASSERT_FALSE(st) << cmdline;
    EXPECT_NE(st.error().message().find("socket buffers"), std::string::npos);
  }
}

TEST(CgroupMountsTest, ParsesPureV2Host) {
  auto mounts = parse_cgroup_mounts(kPureV2);
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].mount_point, "/sys/fs/cgroup");
  EXPECT_EQ(mounts[0].root, "/");
  EXPECT_TRUE(mounts[0].v2);
  EXPECT_TRUE(mounts[0].has_option("nsdelegate"));

  auto layout = choose_cgroup_layout(mounts, "cpuset cpu io memory hugetlb pids rdma misc\n");
  ASSERT_TRUE(layout) << layout.error().message();
  EXPECT_EQ(layout->kind, CgroupLayout::Kind::kV2);
  EXPECT_EQ(layout->v2_root, "/sys/fs/cgroup");
  // cgroup2 without the memory controller and no v1 hierarchy: nothing usable.
  EXPECT_FALSE(choose_cgroup_layout(mounts, "cpu io pids\n"));
}

TEST(CgroupMountsTest, ParsesThisHybridHost) {
  auto mounts = parse_cgroup_mounts(kHybrid);
  ASSERT_EQ(mounts.size(), 10u);  // the tmpfs is not a cgroup mount
  auto layout = choose_cgroup_layout(mounts, "");
  ASSERT_TRUE(layout) << layout.error().message();
  EXPECT_EQ(layout->kind, CgroupLayout::Kind::kV1);
  EXPECT_EQ(layout->v1_root, "/sys/fs/cgroup");
  EXPECT_EQ(layout->unified, "/sys/fs/cgroup/unified");

  auto by = v1_controller_mounts(mounts, "/sys/fs/cgroup",
                                 {"memory", "pids", "cpu", "cpuacct", "freezer", "net_cls"});
  EXPECT_EQ(by.at("memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(by.at("pids"), "/sys/fs/cgroup/pids");
  EXPECT_EQ(by.at("cpu"), "/sys/fs/cgroup/cpu");
  EXPECT_EQ(by.at("cpuacct"), "/sys/fs/cgroup/cpuacct");
  EXPECT_EQ(by.at("freezer"), "/sys/fs/cgroup/freezer");
  EXPECT_FALSE(by.contains("net_cls"));
  EXPECT_FALSE(by.contains("systemd"));  // name=systemd is not a controller "systemd"
}

// A new group joins a v1 hierarchy only for what the cgroup2 group cannot do:
// count cpu time (cpuacct, without cpu.stat), kill (freezer, without cgroup.kill).
TEST(CgroupMountsTest, ANewGroupSkipsTheHierarchiesCgroup2StandsInFor) {
  using V = std::vector<std::string>;
  EXPECT_EQ(v1_controllers_for_new_group(true, true), (V{"memory", "pids", "cpu"}));
  EXPECT_EQ(v1_controllers_for_new_group(true, false), (V{"memory", "pids", "cpu", "freezer"}));
  EXPECT_EQ(v1_controllers_for_new_group(false, true), (V{"memory", "pids", "cpu", "cpuacct"}));
  EXPECT_EQ(v1_controllers_for_new_group(false, false), (V{"memory", "pids", "cpu", "cpuacct", "freezer"}));
}

TEST(CgroupMountsTest, ParsesCoMountedCpuCpuacct) {
  auto mounts = parse_cgroup_mounts(kCoMounted);
  auto by = v1_controller_mounts(mounts, "/sys/fs/cgroup", {"cpu", "cpuacct", "memory"});
  EXPECT_EQ(by.at("cpu"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(by.at("cpuacct"), "/sys/fs/cgroup/cpu,cpuacct");
  auto layout = choose_cgroup_layout(mounts, "");
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->kind, CgroupLayout::Kind::kV1);
  EXPECT_EQ(layout->unified, "/sys/fs/cgroup/unified");
}

TEST(CgroupMountsTest, UnescapesAndSkipsJunk) {
  auto mounts = parse_cgroup_mounts(
      "50 1 0:40 / /mnt/my\\040cg rw - cgroup cgroup rw,memory\n"
      "garbage line\n"
      "51 1 0:41 / /x rw - cgroup\n"  // truncated after the separator
      "52 1 0:42 /sub /mnt/cg2 rw shared:1 master:2 - cgroup2 none rw\n");
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].mount_point, "/mnt/my cg");
  EXPECT_TRUE(mounts[0].has_option("memory"));
  EXPECT_EQ(mounts[1].root, "/sub");
  EXPECT_TRUE(mounts[1].v2);
  // A v1 mount beneath v1_root wins over one elsewhere.
  auto both = parse_cgroup_mounts(
      "1 0 0:1 / /elsewhere/memory rw - cgroup cgroup rw,memory\n"
      "2 0 0:1 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  EXPECT_EQ(v1_controller_mounts(both, "/sys/fs/cgroup", {"memory"}).at("memory"),
            "/sys/fs/cgroup/memory");
}

TEST(CgroupFilesTest, ParsesKeyedWordsAndPids) {
  EXPECT_EQ(cgroupfs::parse_keyed("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"), 3u);
  EXPECT_EQ(cgroupfs::parse_keyed("max 7", "max"), 7u);
  EXPECT_FALSE(cgroupfs::parse_keyed("maxx 7\n", "max"));
  EXPECT_FALSE(cgroupfs::parse_keyed("max x\n", "max"));
  EXPECT_EQ(cgroupfs::parse_words("+memory pids\tcpu\n"),
            (std::vector<std::string>{"memory", "pids", "cpu"}));
  EXPECT_EQ(cgroupfs::parse_pids("12\n34\nbad\n\n0\n"), (std::vector<pid_t>{12, 34}));
}

// One rule for both layouts: `cpus` cores of a 100 ms period, never under the
// kernel's 1 ms.
TEST(CgroupFilesTest, CpuQuotaIsCoresTimesThePeriodAtLeastOneMillisecond) {
  EXPECT_EQ(cgroupfs::kCpuPeriodUs, 100000u);
  EXPECT_EQ(cgroupfs::cpu_quota_us(1.0), 100000u);
  EXPECT_EQ(cgroupfs::cpu_quota_us(0.5), 50000u);
  EXPECT_EQ(cgroupfs::cpu_quota_us(2.5), 250000u);
  EXPECT_EQ(cgroupfs::cpu_quota_us(0.0049), 1000u);
  EXPECT_EQ(cgroupfs::cpu_quota_us(0.0101), 1010u);
}

}  // namespace
}  // namespace airlock::sandbox
