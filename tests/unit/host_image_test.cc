#include "sandbox/host_image.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include "sys/file_io.h"
#include "sys/remove_tree.h"

using namespace airlock;

namespace {
class HostImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-image-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    list_ = dir_ + "/status";
    ASSERT_TRUE(sys::write_file_atomic(list_, "Package: python3\nVersion: 3.11.2-1\n").has_value());
  }
  void TearDown() override { (void)sys::remove_tree(dir_); }
  std::string digest() {
    sandbox::SandboxSpec spec;
    auto info = sandbox::apply_host_image(spec, dir_, list_);
    EXPECT_TRUE(info.has_value());
    return info ? info->digest : "";
  }
  std::string dir_, list_;
};
}  // namespace

TEST_F(HostImageTest, DigestFollowsThePackageList) {
  std::string first = digest();
  EXPECT_EQ(first.rfind("sha256:", 0), 0u);
  EXPECT_EQ(first.size(), 7u + 64u);
  EXPECT_EQ(digest(), first);  // stable, and served from the cache the second time
  // An upgrade rewrites the list: the digest must change, cache or not.
  ASSERT_TRUE(sys::write_file_atomic(list_, "Package: python3\nVersion: 3.11.2-2\n").has_value());
  std::string upgraded = digest();
  EXPECT_NE(upgraded, first);
  EXPECT_EQ(digest(), upgraded);
}

TEST_F(HostImageTest, SyntheticEtcHasTheSandboxUserAndNoHostSecrets) {
  sandbox::SandboxSpec spec;
  ASSERT_TRUE(sandbox::apply_host_image(spec, "", list_).has_value());
  auto file = [&](const std::string& path) {
    auto it = std::find_if(spec.files.begin(), spec.files.end(), [&](auto& f) { return f.path == path; });
    return it == spec.files.end() ? std::string("<missing>") : it->content;
  };
  EXPECT_NE(file("etc/passwd").find("sandbox:x:1000:1000:"), std::string::npos);
  EXPECT_NE(file("etc/hosts").find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(file("etc/resolv.conf"), "<missing>");  // no resolver
  for (const auto& b : spec.binds) {
    EXPECT_NE(b.source, "/etc/shadow");
    EXPECT_NE(b.source, "/etc");
    EXPECT_EQ(b.source.find("/etc/ssl/private"), std::string::npos);
    EXPECT_EQ(b.source.rfind("/root", 0), std::string::npos);
    EXPECT_EQ(b.source.rfind("/home", 0), std::string::npos);
  }
  // /usr is there, read-only comes from seal_readonly; /proc's sensitive files are masked.
  EXPECT_TRUE(std::any_of(spec.binds.begin(), spec.binds.end(), [](auto& b) { return b.target == "usr"; }));
  EXPECT_NE(std::find(spec.proc_mask_files.begin(), spec.proc_mask_files.end(), "/proc/kallsyms"),
            spec.proc_mask_files.end());
}
