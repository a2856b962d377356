// The ZIP layout check (validate/zip_layout.h) and nested archives, through
// the walk (scan_archive_memory): ZIPs built here byte by byte, where the
// local headers and the central directory tell different stories (a member
// only the local headers name, as streaming extractors would write it; a
// prefix, a gap, slack after a deflate stream that hides a header; names,
// sizes or descriptors that differ), and archives inside archives.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "validate/archive_scan.h"
#include "validate/checks.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

uint32_t crc32(std::string_view data) {
  uint32_t c = 0xFFFFFFFF;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320 & (0 - (c & 1)));
  }
  return ~c;
}

void le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// A deflate stream of one stored block (BFINAL, BTYPE 00): valid for method 8 without a compressor.
std::string deflate_stored(std::string_view data) {
  std::string out = "\x01";
  le(out, data.size(), 2);
  le(out, ~data.size() & 0xFFFF, 2);
  return out + std::string(data);
}

struct Member {
  std::string name, data;
  bool deflate = false;
  bool descriptor = false;        // sizes and CRC in a data descriptor (flag bit 3)
  bool in_directory = true;       // false: only its local header names it
  std::string local_name;         // when not empty, the local header's name
  std::string slack;              // bytes after the deflate stream, counted in the compressed size
  std::string extra;              // the central directory's extra field
  uint64_t local_size_delta = 0;  // added to the local header's compressed size
};

struct Layout {
  std::string prefix;      // before the first local header
  std::string after_data;  // between the last member and the central directory
  std::string before_end;  // between the central directory and its end record
  std::string comment;
};

std::string make_zip(const std::vector<Member>& members, const Layout& layout = {}) {
  std::string out = layout.prefix, directory;
  uint64_t listed = 0;
  for (const auto& m : members) {
    std::string body = (m.deflate ? deflate_stored(m.data) : m.data) + m.slack;
    uint32_t crc = crc32(m.data);
    uint16_t flags = m.descriptor ? 0x0008 : 0;
    uint16_t method = m.deflate ? 8 : 0;
    uint64_t offset = out.size();
    std::string local_name = m.local_name.empty() ? m.name : m.local_name;
    le(out, 0x04034b50, 4);
    le(out, 20, 2);
    le(out, flags, 2);
    le(out, method, 2);
    le(out, 0, 4);
    le(out, m.descriptor ? 0 : crc, 4);
    le(out, m.descriptor ? 0 : body.size() + m.local_size_delta, 4);
    le(out, m.descriptor ? 0 : m.data.size(), 4);
    le(out, local_name.size(), 2);
    le(out, 0, 2);
    out += local_name + body;
    if (m.descriptor) {
      le(out, 0x08074b50, 4);
      le(out, crc, 4);
      le(out, body.size(), 4);
      le(out, m.data.size(), 4);
    }
    if (!m.in_directory) continue;
    ++listed;
    le(directory, 0x02014b50, 4);
    le(directory, 20, 2);
    le(directory, 20, 2);
    le(directory, flags, 2);
    le(directory, method, 2);
    le(directory, 0, 4);
    le(directory, crc, 4);
    le(directory, body.size(), 4);
    le(directory, m.data.size(), 4);
    le(directory, m.name.size(), 2);
    le(directory, m.extra.size(), 2);
    le(directory, 0, 2);  // comment
    le(directory, 0, 2);  // disk
    le(directory, 0, 2);  // internal attributes
    le(directory, 0, 4);  // external attributes
    le(directory, offset, 4);
    directory += m.name + m.extra;
  }
  out += layout.after_data;
  uint64_t cd_offset = out.size();
  out += directory + layout.before_end;
  le(out, 0x06054b50, 4);
  le(out, 0, 2);
  le(out, 0, 2);
  le(out, listed, 2);
  le(out, listed, 2);
  le(out, directory.size(), 4);
  le(out, cd_offset, 4);
  le(out, layout.comment.size(), 2);
  return out + layout.comment;
}

// An archive written by libarchive itself: "zip" (deflate, with data descriptors) or "tgz".
std::string libarchive_writes(const std::string& format,
                              const std::vector<std::pair<std::string, std::string>>& files) {
  struct archive* a = archive_write_new();
  if (format == "zip")
    archive_write_set_format_zip(a);
  else
    archive_write_set_format_pax_restricted(a);
  if (format == "tgz") archive_write_add_filter_gzip(a);
  std::vector<char> out(64 << 20);
  size_t used = 0;
  EXPECT_EQ(archive_write_open_memory(a, out.data(), out.size(), &used), ARCHIVE_OK);
  for (const auto& [name, body] : files) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(body.size()));
    EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
    archive_write_data(a, body.data(), body.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return std::string(out.data(), used);
}

ArchiveScan scan(const std::string& bytes, const ArchiveBounds& bounds = {},
                 const ArchiveScanOptions& options = {}) {
  auto s = scan_archive_memory(bytes, bounds, options);
  EXPECT_TRUE(s) << s.error().what;
  return s ? *s : ArchiveScan{};
}

std::string refusal(const std::string& bytes, const ArchiveBounds& bounds = {}) {
  ArchiveScan s = scan(bytes, bounds);
  return s.refused ? *s.refused : "(accepted)";
}

const Member kA{.name = "a.csv", .data = "x,y\n1,2\n"};
const Member kHidden{.name = "../../etc/hidden", .data = "owned\n", .in_directory = false};

TEST(ZipLayoutTest, WellFormedZipsPass) {
  EXPECT_EQ(refusal(make_zip({kA, {.name = "b.txt", .data = "hello\n", .deflate = true}})),
            "(accepted)");
  Member described{.name = "c.txt", .data = "described\n", .deflate = true, .descriptor = true};
  ArchiveScan s = scan(make_zip({kA, described}, {.comment = "a comment"}));
  EXPECT_FALSE(s.refused) << *s.refused;
  ASSERT_EQ(s.members.size(), 2u);
  EXPECT_EQ(s.members[1].size, 10u);
  // What libarchive writes (deflated, with data descriptors) passes as before.
  EXPECT_EQ(
      refusal(libarchive_writes("zip", {{"a.csv", "1,2\n"}, {"b.bin", std::string(100000, 'z')}})),
      "(accepted)");
}

// The case of the issue: `bsdtar -xf -` and ZipInputStream would write ../../etc/hidden.
TEST(ZipLayoutTest, AMemberOnlyTheLocalHeadersNameIsRefused) {
  std::string between = make_zip({kA, kHidden, {.name = "b.txt", .data = "b\n"}});
  EXPECT_TRUE(refusal(between).starts_with(
      "52 bytes at offset 43 that no central directory entry covers (between "
      "members; they may hide local headers)"))
      << refusal(between);
  EXPECT_EQ(refusal(make_zip({kHidden, kA})),
            "52 bytes at offset 0 that no central directory entry covers (before the first member; "
            "they may hide "
            "local headers)");
  EXPECT_EQ(refusal(make_zip({kA, kHidden})),
            "52 bytes at offset 43 that no central directory entry covers (after the last member; "
            "they may hide "
            "local headers)");
  // Plain data before the first entry (a self-extracting stub, a polyglot's other format) is
  // refused the same way.
  EXPECT_TRUE(refusal(make_zip({kA}, {.prefix = "MZ\x90!"}))
                  .starts_with("4 bytes at offset 0 that no central"));
  EXPECT_TRUE(refusal(make_zip({kA}, {.after_data = "junk"}))
                  .starts_with("4 bytes at offset 43 that no central"));
}

TEST(ZipLayoutTest, LocalHeadersThatDisagreeWithTheDirectoryAreRefused) {
  EXPECT_EQ(refusal(make_zip({{.name = "a.csv", .data = "1\n", .local_name = "../../x"}})),
            "the local header at offset 0 names \"../../x\", the central directory \"a.csv\"");
  EXPECT_EQ(refusal(make_zip({{.name = "a.csv", .data = "1\n", .local_size_delta = 40}})),
            "member \"a.csv\": its local header and the central directory differ in CRC or sizes");
  // A stored member with a data descriptor: a streaming reader has to guess where it ends.
  EXPECT_EQ(refusal(make_zip({{.name = "s.bin", .data = "PK\x07\x08", .descriptor = true}})),
            "member \"s.bin\": a data descriptor on a member that is not deflated (a streaming "
            "reader cannot find its "
            "end)");
  // Slack after the deflate stream, inside the compressed size: a streaming reader goes on from the
  // stream's end.
  std::string hidden_header = make_zip({kHidden}).substr(0, 52);
  Member slack{.name = "d.txt",
               .data = "deflated\n",
               .deflate = true,
               .descriptor = true,
               .slack = hidden_header};
  EXPECT_EQ(refusal(make_zip({slack})),
            "member \"d.txt\": its deflate data ends 52 bytes before its compressed size (bytes a "
            "streaming reader "
            "would read as headers)");
  // Two directory entries over one local header.
  EXPECT_NE(refusal(make_zip({kA, kA})), "(accepted)");
}

TEST(ZipLayoutTest, TheEndRecordMustBeOneAndEndTheFile) {
  // An end record inside the comment of another: readers disagree on which one is the archive.
  std::string inner = make_zip({kHidden});
  std::string fake_end = inner.substr(inner.size() - 22);
  EXPECT_EQ(
      refusal(make_zip({kA}, {.comment = fake_end})),
      "two end-of-central-directory records (readers would disagree on which is the archive)");
  EXPECT_EQ(refusal(make_zip({kA}, {.before_end = "gap!"})),
            "4 bytes between the central directory and its end record (they may hide headers)");
  std::string zip = make_zip({kA});
  EXPECT_EQ(refusal(zip.substr(0, zip.size() - 10)),
            "a ZIP without an end-of-central-directory record (truncated?)");
  // A tar with a ZIP appended (a polyglot): the ZIP's view does not start at byte 0.
  std::string tar = libarchive_writes("tgz", {{"a.csv", "1,2\n"}});
  EXPECT_NE(refusal(tar + zip), "(accepted)");
}

TEST(ZipLayoutTest, AUnicodePathFieldMustNameTheMemberAsItsHeaderDoes) {
  auto unicode_path = [](const std::string& header_name, const std::string& path) {
    std::string data = "\x01";
    le(data, crc32(header_name), 4);
    data += path;
    std::string extra;
    le(extra, 0x7075, 2);
    le(extra, data.size(), 2);
    return extra + data;
  };
  EXPECT_EQ(
      refusal(make_zip(
          {{.name = "a.csv", .data = "1\n", .extra = unicode_path("a.csv", "../../.bashrc")}})),
      "member \"a.csv\": a Unicode Path extra field names it \"../../.bashrc\" (readers disagree "
      "on its name)");
  EXPECT_EQ(refusal(make_zip(
                {{.name = "a.csv", .data = "1\n", .extra = unicode_path("a.csv", "a.csv")}})),
            "(accepted)");
}

// --- Archives inside archives ---------------------------------------------

std::string zeros_zip() {
  return libarchive_writes("zip", {{"zeros.bin", std::string(10 << 20, '\0')}});
}

TEST(NestedArchiveTest, AZipInAZipIsRefusedUnlessNestingIsAllowed) {
  std::string bomb = libarchive_writes("zip", {{"inner.zip", zeros_zip()}});
  EXPECT_EQ(refusal(bomb),
            "member \"inner.zip\" is a ZIP archive: nested archives are refused (max_depth 0)");
  ArchiveBounds nested;
  nested.max_depth = 1;
  // Allowed one level deep: its 10 MiB of zeros are judged by the same ratio bound.
  std::string r = refusal(bomb, nested);
  EXPECT_TRUE(r.starts_with("in nested archive \"inner.zip\": member \"zeros.bin\": ")) << r;
  EXPECT_NE(r.find("more than max_ratio 100 (a compression bomb?)"), std::string::npos) << r;
  // And by the size bounds, counted with the outer archive's members.
  nested.max_ratio = 1e6;
  nested.max_member_bytes = 1 << 20;
  EXPECT_EQ(
      refusal(bomb, nested),
      "in nested archive \"inner.zip\": member \"zeros.bin\" declares 10485760 bytes, more than "
      "max_member_bytes 1048576");
}

TEST(NestedArchiveTest, ANestedArchiveWithinTheBoundsIsWalkedAndListed) {
  std::string inner = libarchive_writes("zip", {{"a.csv", "1,2\n"}, {"b.csv", "3,4\n"}});
  std::string tgz = libarchive_writes("tgz", {{"c.csv", "5,6\n"}});
  std::string outer = libarchive_writes(
      "zip", {{"readme.txt", "hi\n"}, {"inner.zip", inner}, {"more.tar.gz", tgz}});
  ArchiveBounds bounds;
  bounds.max_depth = 1;
  ArchiveScan s = scan(outer, bounds, {.type_members = true});
  ASSERT_FALSE(s.refused) << *s.refused;
  std::vector<std::string> names;
  for (const auto& m : s.members) names.push_back(m.name + ":" + m.type);
  EXPECT_EQ(names, (std::vector<std::string>{"readme.txt:text", "inner.zip:archive",
                                             "inner.zip!/a.csv:csv", "inner.zip!/b.csv:csv",
                                             "more.tar.gz:archive", "more.tar.gz!/c.csv:csv"}));
  // The nested members count against max_members.
  bounds.max_members = 4;
  EXPECT_EQ(refusal(outer, bounds), "more than max_members 4 members");
  bounds.max_members = 3;
  EXPECT_EQ(refusal(outer, bounds),
            "in nested archive \"inner.zip\": more than max_members 3 members");
  // Nested names obey the same rules.
  std::string evil =
      libarchive_writes("zip", {{"x.zip", libarchive_writes("zip", {{"../../etc/x", "1"}})}});
  EXPECT_EQ(refusal(evil, {.max_depth = 1}),
            "in nested archive \"x.zip\": member \"../../etc/x\": a \"..\" component");
}

TEST(NestedArchiveTest, DepthAndFormatsTheWalkDoesNotRead) {
  std::string three = libarchive_writes(
      "zip",
      {{"b.zip", libarchive_writes("zip", {{"c.zip", libarchive_writes("zip", {{"d", "1"}})}})}});
  EXPECT_EQ(refusal(three, {.max_depth = 1}),
            "in nested archive \"b.zip\": member \"c.zip\" is a ZIP archive: nested archives are "
            "refused (max_depth 1)");
  EXPECT_EQ(refusal(three, {.max_depth = 2}), "(accepted)");
  std::string bz =
      libarchive_writes("zip", {{"x.bz2", std::string("BZh91AY&SY") + std::string(100, '\x01')}});
  EXPECT_EQ(refusal(bz),
            "member \"x.bz2\" is a bzip2 stream: nested archives are refused (max_depth 0)");
  EXPECT_EQ(refusal(bz, {.max_depth = 1}),
            "member \"x.bz2\" is a bzip2 stream, which the check does not read inside");
  // A ZIP behind a prefix (a self-extracting program) is found by its end record.
  std::string sfx =
      libarchive_writes("zip", {{"setup.exe", "MZ" + std::string(600, '\x90') + zeros_zip()}});
  EXPECT_EQ(refusal(sfx, {.max_depth = 1}),
            "member \"setup.exe\" ends with a ZIP directory after other data (a self-extracting or "
            "polyglot file), "
            "which the check does not read inside");
}

// --- Through the check kinds ----------------------------------------------

CheckResult run_one_check(const json& check, const std::string& bytes) {
  auto parsed = parse_checks(json::array({check}));
  EXPECT_TRUE(parsed) << parsed.error().what;
  FileSource file = [&](const std::string&) -> std::optional<ByteSource> {
    return string_source(bytes);
  };
  ArchiveReader in_process = [&](const std::string&, const ArchiveBounds& b,
                                 const ArchiveScanOptions& o) {
    return scan_archive_memory(bytes, b, o);
  };
  return run_checks(*parsed, file, file, {}, {}, in_process).at(0);
}

const char* kTypes =
    "<?xml version=\"1.0\"?><Types "
    "xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>";

TEST(NestedArchiveTest, OfficeWalksEmbeddedPackagesAndRefusesTheirMacros) {
  std::string book = libarchive_writes(
      "zip", {{"[Content_Types].xml", kTypes}, {"xl/workbook.xml", "<workbook/>"}});
  std::string macro_book =
      libarchive_writes("zip", {{"[Content_Types].xml", kTypes}, {"xl/vbaProject.bin", "macro"}});
  auto docx = [&](const std::string& embedded) {
    return libarchive_writes("zip", {{"[Content_Types].xml", kTypes},
                                     {"word/document.xml", "<document/>"},
                                     {"word/embeddings/Microsoft_Excel_Worksheet.xlsx", embedded}});
  };
  json office = {{"kind", "office"}, {"output", "report.docx"}};
  CheckResult chart = run_one_check(office, docx(book));
  EXPECT_TRUE(chart.passed) << chart.detail;
  EXPECT_EQ(chart.detail,
            "report.docx: an Office package of 5 parts, 0 relationships parts, no macros, no "
            "external links");
  CheckResult macro = run_one_check(office, docx(macro_book));
  EXPECT_EQ(macro.detail,
            "report.docx is refused: macros: the package holds "
            "\"word/embeddings/Microsoft_Excel_Worksheet.xlsx!/xl/vbaProject.bin\"");
  office["max_depth"] = 0;
  EXPECT_EQ(run_one_check(office, docx(book)).detail,
            "report.docx is refused: member \"word/embeddings/Microsoft_Excel_Worksheet.xlsx\" is "
            "a ZIP archive: nested "
            "archives are refused (max_depth 0)");
  // The archive check: a ZIP holding a ZIP of 10 MiB of zeros, refused by default.
  std::string bomb = libarchive_writes("zip", {{"inner.zip", zeros_zip()}});
  CheckResult archive = run_one_check({{"kind", "archive"}, {"output", "bundle.zip"}}, bomb);
  EXPECT_EQ(archive.detail,
            "bundle.zip is refused: member \"inner.zip\" is a ZIP archive: nested archives are "
            "refused (max_depth 0)");
  CheckResult deep =
      run_one_check({{"kind", "archive"}, {"output", "bundle.zip"}, {"max_depth", 2}},
                    libarchive_writes("zip", {{"a.csv", "1\n"}}));
  EXPECT_TRUE(deep.passed);
  EXPECT_TRUE(deep.detail.ends_with(", max_ratio 100, max_depth 2)")) << deep.detail;
}

}  // namespace
}  // namespace airlock::validate
