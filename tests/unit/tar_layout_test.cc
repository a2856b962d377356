// The raw tar header check (validate/tar_layout.h), through the walk
// (scan_archive_memory): tars built here block by block whose pax or GNU
// long-name headers tell libarchive one thing and a plain ustar reader
// another.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "validate/archive_scan.h"

namespace airlock::validate {
namespace {

std::string header(const std::string& name, char type, uint64_t size,
                   const std::string& prefix = "") {
  std::string b(512, '\0');
  b.replace(0, std::min<size_t>(name.size(), 100), name.substr(0, 100));
  b.replace(100, 7, "0000644", 7);
  b.replace(108, 7, "0000000", 7);
  b.replace(116, 7, "0000000", 7);
  char field[16];
  std::snprintf(field, sizeof field, "%011llo", static_cast<unsigned long long>(size));
  b.replace(124, 11, field, 11);
  b.replace(136, 11, "00000000000", 11);
  b.replace(148, 8, "        ", 8);
  b[156] = type;
  b.replace(257, 6, std::string("ustar\0", 6));
  b.replace(263, 2, "00");
  b.replace(345, std::min<size_t>(prefix.size(), 155), prefix.substr(0, 155));
  unsigned sum = 0;
  for (unsigned char c : b) sum += c;
  std::snprintf(field, sizeof field, "%06o", sum);
  b.replace(148, 7, field, 7);  // six digits and a NUL, then the space
  return b;
}

std::string padded(std::string data) {
  return data + std::string((512 - data.size() % 512) % 512, '\0');
}

std::string record(const std::string& key, const std::string& value) {
  std::string body = " " + key + "=" + value + "\n";
  size_t len = body.size() + 1;
  while (std::to_string(len).size() + body.size() != len) ++len;
  return std::to_string(len) + body;
}

std::string pax(const std::string& records, const std::string& name = "././@PaxHeader") {
  return header(name, 'x', records.size()) + padded(records);
}

std::string file(const std::string& name, const std::string& body, char type = '0') {
  return header(name, type, body.size()) + padded(body);
}

const std::string kEnd(1024, '\0');

std::string refusal(const std::string& bytes) {
  auto scan = scan_archive_memory(bytes, {});
  EXPECT_TRUE(scan) << scan.error().what;
  return scan && scan->refused ? *scan->refused : "(accepted)";
}

TEST(TarLayoutTest, PlainAndLongNamesPass) {
  EXPECT_EQ(refusal(file("a.csv", "1,2\n") + file("dir/b.txt", "b\n") + kEnd), "(accepted)");
  std::string long_name = "dir/" + std::string(150, 'x') + ".csv";
  EXPECT_EQ(refusal(pax(record("path", long_name)) + file(long_name.substr(0, 100), "1\n") + kEnd),
            "(accepted)");
  EXPECT_EQ(refusal(header("././@LongLink", 'L', long_name.size() + 1) + padded(long_name + '\0') +
                    file(long_name.substr(0, 100), "1\n") + kEnd),
            "(accepted)");
  // As libarchive writes a long name (pax), and a ustar prefix.
  EXPECT_EQ(refusal(header("b.csv", '0', 2, "dir") + padded("1\n") + kEnd), "(accepted)");
}

// libarchive (and GNU tar, Python) take the pax path; a plain ustar reader takes the header's name.
TEST(TarLayoutTest, AHeaderNameOnlyAUstarReaderUsesObeysTheRules) {
  EXPECT_EQ(
      refusal(pax(record("path", "a.csv")) + file("../../etc/cron.d/x", "* * * * * id\n") + kEnd),
      "the tar header at offset 1024 names \"../../etc/cron.d/x\" (member \"../../etc/cron.d/x\": "
      "a \"..\" "
      "component), which a reader that ignores pax and GNU long-name headers would use");
  EXPECT_TRUE(refusal(header("././@LongLink", 'L', 6) + padded(std::string("a.csv", 6)) +
                      file("/etc/passwd", "x") + kEnd)
                  .starts_with("the tar header at offset 1024 names \"/etc/passwd\""));
  // An unknown header type is extracted as a file: a pax header's own name counts too.
  EXPECT_TRUE(refusal(pax(record("path", "a.csv"), "../../x") + file("a.csv", "1\n") + kEnd)
                  .starts_with("the tar header at offset 0 names \"../../x\""));
}

TEST(TarLayoutTest, SizesReadersWouldWalkDifferentlyAreRefused) {
  // The pax size takes in the next two blocks as a.csv's data; a ustar reader, by the header's
  // size of 512, reads them as the member ../../etc/hidden.
  std::string hidden = file("../../etc/hidden", "owned\n");
  std::string tar = pax(record("size", "1536")) + header("a.csv", '0', 512) +
                    std::string(512, 'a') + hidden + kEnd;
  EXPECT_EQ(refusal(tar),
            "the tar header at offset 1024 (\"a.csv\"): its pax size 1536 and its ustar size 512 "
            "differ (readers would "
            "split the archive differently)");
}

std::string gzip(const std::string& data) {
  struct archive* a = archive_write_new();
  archive_write_set_format_raw(a);
  archive_write_add_filter_gzip(a);
  std::vector<char> out(1 << 20);
  size_t used = 0;
  EXPECT_EQ(archive_write_open_memory(a, out.data(), out.size(), &used), ARCHIVE_OK);
  struct archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK);
  archive_write_data(a, data.data(), data.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  return std::string(out.data(), used);
}

TEST(TarLayoutTest, AGzippedTarIsCheckedAsWell) {
  std::string tar = pax(record("path", "a.csv")) + file("../../x", "1\n") + kEnd;
  EXPECT_TRUE(refusal(gzip(tar)).starts_with("the tar header at offset 1024 names \"../../x\""))
      << refusal(gzip(tar));
  // Two gzip members, as `cat a.gz b.gz` makes: read on into the second, as gzip -d and libarchive
  // do.
  std::string two = gzip(tar.substr(0, 1024)) + gzip(tar.substr(1024));
  EXPECT_TRUE(refusal(two).starts_with("the tar header at offset 1024 names \"../../x\""))
      << refusal(two);
  std::string clean = file("a.csv", "1\n") + file("b.csv", "2\n") + kEnd;
  EXPECT_EQ(refusal(gzip(clean.substr(0, 1024)) + gzip(clean.substr(1024))), "(accepted)");
}

}  // namespace
}  // namespace airlock::validate
