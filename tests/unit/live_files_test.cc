// The host's file operations on a live workspace: paths stay beneath the
// root whatever the sandboxed code planted there.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "workspace/live_files.h"

namespace airlock::workspace {
namespace {

namespace fs = std::filesystem;

struct Tree {
  std::string root, outside;
  UniqueFd fd;
  Tree() {
    std::string tmpl = fs::temp_directory_path() / "airlock-live-XXXXXX";
    root = ::mkdtemp(tmpl.data());
    std::string tmpl2 = fs::temp_directory_path() / "airlock-outside-XXXXXX";
    outside = ::mkdtemp(tmpl2.data());
    fd = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ~Tree() {
    fs::remove_all(root);
    fs::remove_all(outside);
  }
  void write(const std::string& rel, const std::string& text) const { std::ofstream(root + "/" + rel) << text; }
};

UniqueFd source(const std::string& text) {
  char name[] = "/tmp/airlock-src-XXXXXX";
  UniqueFd fd(::mkstemp(name));
  ::unlink(name);
  EXPECT_EQ(::write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return fd;
}

TEST(LiveFiles, PutMakesDirectoriesAndReplacesAtomically) {
  Tree t;
  auto src = source("a,b\n1,2\n");
  auto sha = put_file(t.fd.get(), "data/in/x.csv", src.get(), ::getuid(), ::getgid());
  ASSERT_TRUE(sha) << sha.error().message;
  EXPECT_EQ(*sha, Sha256::of("a,b\n1,2\n"));
  auto again = source("a,b\n3,4\n");
  ASSERT_TRUE(put_file(t.fd.get(), "data/in/x.csv", again.get(), ::getuid(), ::getgid()));
  std::ifstream in(t.root + "/data/in/x.csv");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "a,b\n3,4\n");
  auto listing = list_dir(t.fd.get(), "data/in");
  ASSERT_TRUE(listing);
  ASSERT_EQ(listing->entries.size(), 1u);  // no temporary file left
  EXPECT_EQ(listing->entries[0].name, "x.csv");
  EXPECT_EQ(listing->entries[0].kind, "file");
  EXPECT_EQ(listing->entries[0].size, 8u);
}

TEST(LiveFiles, HostilePathsAreRefused) {
  Tree t;
  auto src = source("hello\n");
  for (const char* bad : {"../escape.txt", "/etc/passwd", "a//b", "..", "a/./b", "a/../../b", "-rf", ""}) {
    auto r = put_file(t.fd.get(), bad, src.get(), ::getuid(), ::getgid());
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "bad_path") << bad;
  }
  EXPECT_FALSE(fs::exists(fs::path(t.root).parent_path() / "escape.txt"));
  // Dotfiles belong in a workspace (.local, .config).
  EXPECT_TRUE(put_file(t.fd.get(), ".config/tool.toml", src.get(), ::getuid(), ::getgid()));
}

TEST(LiveFiles, PlantedSymlinksAreNeverFollowed) {
  Tree t;
  std::ofstream(t.outside + "/secret.txt") << "secret\n";
  fs::create_directory_symlink(t.outside, t.root + "/link");
  fs::create_symlink(t.outside + "/secret.txt", t.root + "/secret.txt");
  auto src = source("overwrite\n");
  // Writing through a symlinked directory: refused, the outside is untouched.
  auto put = put_file(t.fd.get(), "link/secret.txt", src.get(), ::getuid(), ::getgid());
  ASSERT_FALSE(put);
  EXPECT_EQ(put.error().code, "bad_path");
  // Reading a symlink to a file outside: refused.
  auto read = read_checked(t.fd.get(), "secret.txt", OutputPolicy{}, t.outside);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, "bad_path");
  auto list = list_dir(t.fd.get(), "link");
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().code, "bad_path");
  // Replacing the symlink itself by an upload replaces the link, not its target.
  ASSERT_TRUE(put_file(t.fd.get(), "secret.txt", src.get(), ::getuid(), ::getgid()));
  EXPECT_FALSE(fs::is_symlink(t.root + "/secret.txt"));
  // Deleting the symlinked directory removes only the link.
  ASSERT_TRUE(remove_path(t.fd.get(), "link"));
  std::ifstream in(t.outside + "/secret.txt");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "secret\n");
}

TEST(LiveFiles, DownloadGoesThroughTheOutputPolicy) {
  Tree t;
  t.write("chart.csv", "x,y\n1,2\n");
  ASSERT_EQ(::mkfifo((t.root + "/pipe").c_str(), 0644), 0);
  std::string binary("\x7f" "ELF\x02\x01\x01\x00\x00\x00", 10);
  t.write("tool", binary);
  auto ok = read_checked(t.fd.get(), "chart.csv", OutputPolicy{}, t.outside);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->type, "csv");
  EXPECT_EQ(ok->sha256, Sha256::of("x,y\n1,2\n"));
  EXPECT_EQ(ok->size, 8u);
  // The copy is the host's own, open at its start, with no name anyone could reach.
  char buf[64];
  EXPECT_EQ(::read(ok->copy.get(), buf, sizeof(buf)), 8);
  EXPECT_EQ(std::string(buf, 8), "x,y\n1,2\n");
  t.write("chart.csv", "changed after the download was checked\n");
  EXPECT_EQ(::pread(ok->copy.get(), buf, 8, 0), 8);
  EXPECT_EQ(std::string(buf, 8), "x,y\n1,2\n") << "what is sent is what was hashed";
  auto fifo = read_checked(t.fd.get(), "pipe", OutputPolicy{}, t.outside);  // must not hang
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code, "not_a_file");
  auto bin = read_checked(t.fd.get(), "tool", OutputPolicy{}, t.outside);
  ASSERT_FALSE(bin);
  EXPECT_EQ(bin.error().code, "type_not_allowed");
  OutputPolicy small;
  small.max_file_bytes = 3;
  auto big = read_checked(t.fd.get(), "chart.csv", small, t.outside);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, "too_large");
  auto missing = read_checked(t.fd.get(), "nope.csv", OutputPolicy{}, t.outside);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "not_found");
}

TEST(LiveFiles, RemoveDeletesWholeDirectories) {
  Tree t;
  fs::create_directories(t.root + "/d/e/f");
  t.write("d/e/f/x.txt", "x\n");
  t.write("d/y.txt", "y\n");
  ASSERT_TRUE(remove_path(t.fd.get(), "d"));
  EXPECT_FALSE(fs::exists(t.root + "/d"));
  auto again = remove_path(t.fd.get(), "d");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, "not_found");
}

}  // namespace
}  // namespace airlock::workspace
