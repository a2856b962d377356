// The files an image keeps uncompressed (images/erofs_hints.h), matched the
// way mkfs.erofs matches its --compress-hints patterns (regcomp with
// REG_EXTENDED, against the path in the tree).
#include <regex.h>

#include <gtest/gtest.h>

#include <string>

#include "images/erofs_hints.h"

using namespace airlock::images;

namespace {

bool uncompressed(const std::string& path) {
  for (const auto& p : uncompressed_patterns()) {
    regex_t re;
    EXPECT_EQ(::regcomp(&re, p.c_str(), REG_EXTENDED | REG_NOSUB), 0) << p;
    bool hit = ::regexec(&re, path.c_str(), 0, nullptr, 0) == 0;
    ::regfree(&re);
    if (hit) return true;
  }
  return false;
}

}  // namespace

TEST(ErofsHints, TheLoaderLibcAndPythonStayPlain) {
  for (const char* path :
       {"usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", "usr/lib/x86_64-linux-gnu/libm.so.6",
        "etc/ld.so.cache", "usr/bin/dash", "usr/bin/bash", "usr/lib/x86_64-linux-gnu/libtinfo.so.6.4",
        "usr/bin/python3.11", "/usr/bin/python3.13", "usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
        "usr/lib/x86_64-linux-gnu/libexpat.so.1.8.10"})
    EXPECT_TRUE(uncompressed(path)) << path;
}

TEST(ErofsHints, EverythingElseIsCompressed) {
  // Near misses: another directory, a suffix, a prefix, the link names
  // (links have no data), the Python library tree.
  for (const char* path :
       {"usr/lib/x86_64-linux-gnu/libc.so.6.bak", "usr/lib/x86_64-linux-gnu/libcrypt.so.1",
        "tmp/usr/lib/x86_64-linux-gnu/libc.so.6", "usr/local/bin/python3.11", "usr/bin/python3.11-config",
        "usr/bin/python3", "usr/lib/x86_64-linux-gnu/libz.so.1", "usr/lib/python3.11/os.py",
        "usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "etc/ld.so.cache~", "usr/bin/bashbug",
        "usr/lib/x86_64-linux-gnu/gconv/libc.so.6"})
    EXPECT_FALSE(uncompressed(path)) << path;
}

TEST(ErofsHints, EachLineIsAZeroClusterAndAPattern) {
  std::string text = erofs_compress_hints();
  size_t lines = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    ASSERT_NE(end, std::string::npos) << "the last line has no newline";
    std::string line = text.substr(at, end - at);
    EXPECT_EQ(line.rfind("0 ^", 0), 0u) << line;
    EXPECT_EQ(line.find(' ', 2), std::string::npos) << "a space would end the pattern: " << line;
    at = end + 1;
    ++lines;
  }
  EXPECT_EQ(lines, uncompressed_patterns().size());
  EXPECT_EQ(text, erofs_compress_hints());  // fixed text: builds stay reproducible
}
