// The archive and office checks' pure parts: the member rules and bounds
// (archive_rules.h), the libarchive walk on archives built here in memory
// (archive_scan.h; in-process in a test, in a confined child in the service),
// the child's answer read strictly, relationship parsing (office.h), and the
// check kinds' shapes and details through run_checks with an in-process reader.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "validate/archive_rules.h"
#include "validate/archive_scan.h"
#include "validate/checks.h"
#include "validate/office.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

struct Entry {
  std::string name;
  std::string body;
  unsigned type = AE_IFREG;
  std::string link;  // symlink target, or a hard link's target when hard
  bool hard = false;
};

// An archive written by libarchive itself: "zip" (deflate), "tar" or "tgz".
std::string make_archive(const std::string& format, const std::vector<Entry>& entries) {
  struct archive* a = archive_write_new();
  if (format == "zip") archive_write_set_format_zip(a);
  else archive_write_set_format_pax_restricted(a);
  if (format == "tgz") archive_write_add_filter_gzip(a);
  std::vector<char> out(64 << 20);
  size_t used = 0;
  EXPECT_EQ(archive_write_open_memory(a, out.data(), out.size(), &used), ARCHIVE_OK);
  for (const auto& e : entries) {
    struct archive_entry* ae = archive_entry_new();
    archive_entry_set_pathname(ae, e.name.c_str());
    archive_entry_set_filetype(ae, e.type);
    archive_entry_set_perm(ae, 0644);
    if (e.hard) archive_entry_set_hardlink(ae, e.link.c_str());
    else if (!e.link.empty()) archive_entry_set_symlink(ae, e.link.c_str());
    archive_entry_set_size(ae, e.type == AE_IFREG && !e.hard ? static_cast<la_int64_t>(e.body.size()) : 0);
    EXPECT_EQ(archive_write_header(a, ae), ARCHIVE_OK) << archive_error_string(a);
    if (e.type == AE_IFREG && !e.body.empty()) archive_write_data(a, e.body.data(), e.body.size());
    archive_entry_free(ae);
  }
  archive_write_close(a);
  archive_write_free(a);
  return std::string(out.data(), used);
}

std::string refusal(const std::string& bytes, const ArchiveBounds& bounds = {}) {
  auto scan = scan_archive_memory(bytes, bounds);
  EXPECT_TRUE(scan) << scan.error().what;
  return scan && scan->refused ? *scan->refused : "(accepted)";
}

TEST(ArchiveRulesTest, MemberNames) {
  EXPECT_TRUE(check_member_name("a/b.csv"));
  EXPECT_TRUE(check_member_name("a..b/..c"));  // dots inside a name are not a component
  EXPECT_EQ(check_member_name("../x").error().what, "member \"../x\": a \"..\" component");
  EXPECT_EQ(check_member_name("a/../../x").error().what, "member \"a/../../x\": a \"..\" component");
  EXPECT_EQ(check_member_name("a/..").error().what, "member \"a/..\": a \"..\" component");
  EXPECT_EQ(check_member_name("/etc/passwd").error().what, "member \"/etc/passwd\": an absolute path");
  EXPECT_EQ(check_member_name("C:evil").error().what, "member \"C:evil\": an absolute path");
  EXPECT_EQ(check_member_name("a\\..\\b").error().what, "member \"a\\\\..\\\\b\": a backslash in its name");
  EXPECT_EQ(check_member_name(std::string("a\nb")).error().what, "member \"a\\x0ab\": a control character in its name");
  EXPECT_EQ(check_member_name("").error().what, "a member without a name");
  EXPECT_EQ(check_member_name("../x").error().kind, ErrorKind::kRefused);  // the input's fault, not airlock's
}

TEST(ArchiveRulesTest, DuplicatesCompareNormalizedNames) {
  EXPECT_EQ(normalized_member_name("./a//b/"), "a/b");
  EXPECT_EQ(normalized_member_name("a/./b"), "a/b");
  ArchiveBounds bounds;
  ArchiveTally tally(bounds);
  EXPECT_TRUE(tally.admit("dir/", MemberKind::kDirectory, 0));
  EXPECT_TRUE(tally.admit("dir/a.csv", MemberKind::kFile, 8));
  EXPECT_EQ(tally.admit("./dir//a.csv", MemberKind::kFile, 8).error().what, "member \"./dir//a.csv\" appears twice");
  EXPECT_EQ(tally.admit("dir", MemberKind::kDirectory, 0).error().what, "member \"dir\" appears twice");
}

TEST(ArchiveRulesTest, KindsCountsSizesAndRatio) {
  ArchiveBounds bounds{.max_members = 2, .max_member_bytes = 100, .max_total_bytes = 150, .max_ratio = 10,
                       .ratio_floor_bytes = 50};
  ArchiveTally tally(bounds);
  EXPECT_EQ(tally.admit("l", MemberKind::kSymlink, 0).error().what,
            "member \"l\" is a symlink (only files and directories are allowed)");
  EXPECT_EQ(tally.admit("big", MemberKind::kFile, 101).error().what,
            "member \"big\" declares 101 bytes, more than max_member_bytes 100");
  ASSERT_TRUE(tally.admit("a", MemberKind::kFile, std::nullopt));
  EXPECT_TRUE(tally.add_bytes(100, 100));
  EXPECT_EQ(tally.add_bytes(1, 100).error().what, "a member is over max_member_bytes 100");
  ASSERT_TRUE(tally.admit("b", MemberKind::kFile, 10));  // the member count restarts, the total does not
  EXPECT_EQ(tally.add_bytes(60, 1000).error().what, "the members are over max_total_bytes 150");
  EXPECT_EQ(tally.admit("c", MemberKind::kFile, 1).error().what, "more than max_members 2 members");
  // The ratio: judged only past the floor, then out > max_ratio * in.
  EXPECT_TRUE(check_ratio(50, 1, bounds));
  EXPECT_TRUE(check_ratio(100, 10, bounds));
  EXPECT_EQ(check_ratio(101, 10, bounds).error().what,
            "101 bytes came out of 10 bytes of archive, a ratio of 10, more than max_ratio 10 (a compression bomb?)");
  EXPECT_FALSE(check_ratio(51, 0, bounds));  // nothing read yet counts as one byte
}

TEST(ArchiveScanTest, ListsMembersWithSizeAndDigest) {
  for (const char* format : {"zip", "tar", "tgz"}) {
    std::string bytes = make_archive(format, {{"dir/", "", AE_IFDIR}, {"dir/a.csv", "a,b\n1,2\n"}, {"b.txt", ""}});
    auto scan = scan_archive_memory(bytes, {}, {.type_members = true});
    ASSERT_TRUE(scan) << scan.error().what;
    EXPECT_FALSE(scan->refused) << format << ": " << *scan->refused;
    ASSERT_EQ(scan->members.size(), 3u) << format;
    EXPECT_EQ(scan->members[1].name, "dir/a.csv");
    EXPECT_EQ(scan->members[1].size, 8u);
    EXPECT_EQ(scan->members[1].sha256, "492d5ea496056f1a6a6592241032fab764c321596317930b4fa0e1e8bc3b7470");
    EXPECT_EQ(scan->members[1].type, "csv");
    EXPECT_EQ(scan->members[0].kind, MemberKind::kDirectory);
    EXPECT_EQ(scan->members[2].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");  // empty
  }
}

TEST(ArchiveScanTest, HostileArchivesAreRefusedAtTheFirstBound) {
  EXPECT_EQ(refusal(make_archive("tar", {{"../../root/.ssh/authorized_keys", "k"}})),
            "member \"../../root/.ssh/authorized_keys\": a \"..\" component");
  EXPECT_EQ(refusal(make_archive("zip", {{"/etc/cron.d/x", "x"}})), "member \"/etc/cron.d/x\": an absolute path");
  EXPECT_EQ(refusal(make_archive("tgz", {{"l", "", AE_IFLNK, "/etc/shadow"}})),
            "member \"l\" is a symlink (only files and directories are allowed)");
  EXPECT_EQ(refusal(make_archive("tar", {{"a", "x"}, {"h", "", AE_IFREG, "a", true}})),
            "member \"h\" is a hard link (only files and directories are allowed)");
  EXPECT_EQ(refusal(make_archive("tar", {{"dev", "", AE_IFCHR}})),
            "member \"dev\" is a device (only files and directories are allowed)");
  EXPECT_EQ(refusal(make_archive("tar", {{"p", "", AE_IFIFO}})),
            "member \"p\" is a fifo (only files and directories are allowed)");
  EXPECT_EQ(refusal(make_archive("zip", {{"a.csv", "1"}, {"./a.csv", "2"}})), "member \"./a.csv\" appears twice");
  // A bomb: 8 MiB of zeros deflate to a few KiB.
  std::string zeros(8 << 20, '\0');
  std::string bomb = refusal(make_archive("zip", {{"zeros", zeros}}));
  EXPECT_TRUE(bomb.starts_with("member \"zeros\": ")) << bomb;
  EXPECT_TRUE(bomb.ends_with("more than max_ratio 100 (a compression bomb?)")) << bomb;
  EXPECT_EQ(refusal(make_archive("tgz", {{"zeros", zeros}}), {.max_total_bytes = 1 << 20, .max_ratio = 1e6}),
            "member \"zeros\": the members are over max_total_bytes 1048576");
  EXPECT_EQ(refusal("plain text"), "not a readable ZIP or tar archive: Unrecognized archive format");
  EXPECT_EQ(refusal(""), "not a readable ZIP or tar archive: Unrecognized archive format");
}

TEST(ArchiveScanTest, TruncatedAndMutatedArchivesNeverPass) {
  std::string good = make_archive("zip", {{"a.csv", std::string(5000, 'x')}, {"b.csv", "1,2\n"}});
  for (size_t cut : {size_t{10}, good.size() / 2, good.size() - 10}) {
    auto scan = scan_archive_memory(good.substr(0, cut), {});
    ASSERT_TRUE(scan);
    EXPECT_TRUE(scan->refused) << "cut at " << cut;
  }
  std::string tgz = make_archive("tgz", {{"a.csv", std::string(5000, 'x')}});
  auto scan = scan_archive_memory(tgz.substr(0, tgz.size() / 2), {});
  ASSERT_TRUE(scan);
  EXPECT_TRUE(scan->refused);
}

TEST(ArchiveScanTest, TheChildsAnswerIsReadStrictly) {
  ArchiveBounds bounds{.max_members = 2};
  ArchiveScan scan{.format = "ZIP", .members = {{"a", MemberKind::kFile, 3, std::string(64, 'a'), "csv"}}};
  auto back = scan_from_json(scan_to_json(scan), bounds);
  ASSERT_TRUE(back) << back.error().what;
  EXPECT_EQ(back->members[0].name, "a");
  EXPECT_EQ(back->members[0].type, "csv");
  json j = scan_to_json(scan);
  j["members"][0]["sha256"] = "not hex";
  EXPECT_EQ(scan_from_json(j, bounds).error().what, "the archive reader's answer is malformed: a malformed sha256");
  j = scan_to_json(scan);
  j["members"][0]["kind"] = "socket-ish";
  EXPECT_FALSE(scan_from_json(j, bounds));
  j = scan_to_json(scan);
  j["members"] = json::array({j["members"][0], j["members"][0], j["members"][0]});
  EXPECT_EQ(scan_from_json(j, bounds).error().what, "the archive reader's answer is malformed: more members than max_members");
  EXPECT_FALSE(scan_from_json(json::parse("[1]"), bounds));
  auto b = bounds_from_json(bounds_to_json(bounds));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->max_members, 2u);
  EXPECT_FALSE(bounds_from_json(json{{"max_ratio", -1}}));
}

const char* kRels =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" "
    "Target=\"styles.xml\"/>"
    "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink\" "
    "Target=\"https://example.invalid/?a=1&amp;b=2\" TargetMode=\"External\"/></Relationships>";

TEST(OfficeTest, RelationshipsAreParsed) {
  auto rels = parse_relationships(kRels);
  ASSERT_TRUE(rels) << rels.error().what;
  ASSERT_EQ(rels->size(), 2u);
  EXPECT_EQ((*rels)[0].target, "styles.xml");
  EXPECT_FALSE((*rels)[0].external);
  EXPECT_EQ((*rels)[1].target, "https://example.invalid/?a=1&b=2");
  EXPECT_TRUE((*rels)[1].external);
  // A prefixed element and a loosely spelled mode are still relationships that leave the package.
  auto prefixed = parse_relationships("<r:Relationships xmlns:r=\"x\"><r:Relationship Id=\"a\" Type=\"t/oleObject\" "
                                      "Target=\"\\\\host\\share\" TargetMode=\"external\"/></r:Relationships>");
  ASSERT_TRUE(prefixed);
  ASSERT_EQ(prefixed->size(), 1u);
  EXPECT_TRUE((*prefixed)[0].external);
  EXPECT_FALSE(parse_relationships("<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><Relationships/>"));
  EXPECT_FALSE(parse_relationships("<Relationships><Relationship"));
}

ArchiveScan package(std::vector<std::string> names, std::vector<std::pair<std::string, std::string>> rels = {}) {
  ArchiveScan scan;
  for (auto& n : names) scan.members.push_back({n, MemberKind::kFile, 1, std::string(64, '0'), ""});
  scan.rels = std::move(rels);
  return scan;
}

TEST(OfficeTest, RefusalsOfMacrosAndExternalLinks) {
  EXPECT_FALSE(office_refusal(package({"[Content_Types].xml", "word/document.xml"}), false));
  EXPECT_EQ(*office_refusal(package({"word/document.xml"}), false), "not an Office package (no [Content_Types].xml)");
  EXPECT_EQ(*office_refusal(package({"[Content_Types].xml", "xl/VBAProject.BIN"}), false),
            "macros: the package holds \"xl/VBAProject.BIN\"");
  EXPECT_EQ(*office_refusal(package({"[Content_Types].xml", "xl/externalLinks/externalLink1.xml"}), false),
            "an external link: the package holds \"xl/externalLinks/externalLink1.xml\"");
  auto linked = package({"[Content_Types].xml"}, {{"word/_rels/document.xml.rels", kRels}});
  EXPECT_EQ(*office_refusal(linked, false),
            "an external relationship in \"word/_rels/document.xml.rels\": \"hyperlink\" to "
            "\"https://example.invalid/?a=1&b=2\"");
  EXPECT_FALSE(office_refusal(linked, true));  // hyperlinks allowed
  // Macros under another name: Word loads them by the relationship's type.
  auto renamed = package({"[Content_Types].xml", "word/m.bin"},
                         {{"word/_rels/document.xml.rels",
                           "<Relationships><Relationship Id=\"rId9\" Type=\"http://schemas.microsoft.com/office/2006/"
                           "relationships/vbaProject\" Target=\"m.bin\"/></Relationships>"}});
  EXPECT_EQ(office_refusal(renamed, true).value_or("(accepted)"),
            "macros: a \"vbaProject\" relationship in \"word/_rels/document.xml.rels\" to \"m.bin\"");
  auto broken = package({"[Content_Types].xml"}, {{"_rels/.rels", "<Relationships>"}});
  EXPECT_TRUE(office_refusal(broken, true)->starts_with("relationships part \"_rels/.rels\": "));
}

// --- The check kinds, through parse_checks and run_checks ----------------

std::string shape_error(const json& check) {
  auto r = parse_checks(json::array({check}));
  return r ? "(parsed)" : r.error().what;
}

TEST(ArchiveCheckTest, Shapes) {
  EXPECT_EQ(shape_error({{"kind", "archive"}, {"output", "a.zip"}}), "(parsed)");
  EXPECT_EQ(shape_error({{"kind", "archive"}, {"output", "a.zip"}, {"max_members", 0}}),
            "checks[0].max_members: must be 1 to 10000");
  EXPECT_EQ(shape_error({{"kind", "archive"}, {"output", "a.zip"}, {"max_ratio", 0.5}}),
            "checks[0].max_ratio: must be a number from 1 to 1000000");
  EXPECT_EQ(shape_error({{"kind", "archive"}, {"output", "a.zip"}, {"member_types", {"exe"}}}),
            "checks[0].member_types: unknown type \"exe\" must be a non-empty array of file types (text, csv, tsv, "
            "json, png, jpeg, pdf, svg, xml, archive, binary)");
  EXPECT_EQ(shape_error({{"kind", "archive"}, {"output", "a.zip"}, {"symlinks", true}}),
            "checks[0]: unknown field \"symlinks\" (allowed: kind, name, output, max_members, max_member_bytes, "
            "max_total_bytes, max_ratio, max_depth, member_types)");
  EXPECT_EQ(shape_error({{"kind", "archive"}, {"output", "a.zip"}, {"max_depth", 4}}),
            "checks[0].max_depth: must be 0 to 3");
  EXPECT_EQ(shape_error({{"kind", "office"}, {"output", "a.docx"}, {"max_depth", 0}}), "(parsed)");
  EXPECT_EQ(shape_error({{"kind", "office"}, {"output", "a.docx"}, {"allow_hyperlinks", "yes"}}),
            "checks[0].allow_hyperlinks: must be true or false");
  EXPECT_EQ(shape_error({{"kind", "pdf"}, {"output", "a.pdf"}, {"allow", {"macros"}}}),
            "checks[0].allow: unknown \"macros\" (allowed: javascript, launch, uri, embedded_files, encryption)");
  EXPECT_EQ(shape_error({{"kind", "pdf"}, {"output", "a.pdf"}, {"min_page_width", 10}, {"max_page_width", 5}}),
            "checks[0].min_page_width: greater than max_page_width");
}

FileSource one_file(std::string name, std::string bytes) {
  return [name, bytes](const std::string& n) -> std::optional<ByteSource> {
    if (n != name) return std::nullopt;
    return string_source(bytes);
  };
}

CheckResult run_with(const json& check, const std::string& name, const std::string& bytes, const PdfReader& pdf = {}) {
  auto parsed = parse_checks(json::array({check}));
  EXPECT_TRUE(parsed) << parsed.error().what;
  ArchiveReader in_process = [&](const std::string& n, const ArchiveBounds& b, const ArchiveScanOptions& o) {
    EXPECT_EQ(n, name);
    return scan_archive_memory(bytes, b, o);
  };
  return run_checks(*parsed, one_file(name, bytes), one_file("", ""), {}, pdf, in_process).at(0);
}

TEST(ArchiveCheckTest, DetailsAndMembers) {
  std::string zip = make_archive("zip", {{"summary.csv", "a,b\n1,2\n"}, {"chart.png", "not a png"}});
  auto ok = run_with({{"kind", "archive"}, {"output", "bundle.zip"}}, "bundle.zip", zip);
  EXPECT_TRUE(ok.passed) << ok.detail;
  EXPECT_TRUE(ok.detail.starts_with("bundle.zip: ZIP 2.0 (deflation), 2 members, 17 bytes (max_members 1000")) << ok.detail;
  json j = to_json(ok);
  ASSERT_EQ(j["members"].size(), 2u);
  EXPECT_EQ(j["members"][0], json({{"name", "summary.csv"}, {"kind", "file"}, {"size", 8},
                                   {"sha256", "492d5ea496056f1a6a6592241032fab764c321596317930b4fa0e1e8bc3b7470"}}));
  auto typed = run_with({{"kind", "archive"}, {"output", "bundle.zip"}, {"member_types", {"csv", "png"}}}, "bundle.zip", zip);
  EXPECT_FALSE(typed.passed);
  EXPECT_EQ(typed.detail, "bundle.zip is refused: member \"chart.png\" is text, not one of csv, png");
  auto none = run_checks(*parse_checks(json::array({{{"kind", "archive"}, {"output", "bundle.zip"}}})),
                         one_file("bundle.zip", zip), one_file("", ""));
  EXPECT_EQ(none.at(0).detail,
            "bundle.zip: archive checks need an archive reader (libarchive in a confined process), and none is configured");
  auto missing = run_with({{"kind", "archive"}, {"output", "other.zip"}}, "bundle.zip", zip);
  EXPECT_EQ(missing.detail, "no accepted output named \"other.zip\"");
  EXPECT_TRUE(to_json(missing)["members"].is_null() || !to_json(missing).contains("members"));
}

const char* kPdf = "%PDF-1.4\n...\n%%EOF\n";

TEST(PdfCheckTest, ActiveContentAndPageSizes) {
  PdfFacts base{.pages = 1, .text = "Report", .max_page_width = 612, .max_page_height = 792, .min_page_width = 612,
                .min_page_height = 792};
  auto run = [&](PdfFacts facts, json extra = json::object()) {
    extra["kind"] = "pdf";
    extra["output"] = "a.pdf";
    return run_with(extra, "a.pdf", kPdf, [facts](const std::string&) -> Result<PdfFacts> { return facts; });
  };
  EXPECT_TRUE(run(base).passed);
  auto with = [&](auto change) {
    PdfFacts f = base;
    change(f);
    return f;
  };
  EXPECT_EQ(run(with([](PdfFacts& f) { f.javascript = 2; })).detail, "a.pdf has 1 page; it holds JavaScript");
  EXPECT_TRUE(run(with([](PdfFacts& f) { f.javascript = 2; }), {{"allow", {"javascript"}}}).passed);
  EXPECT_EQ(run(with([](PdfFacts& f) { f.launch_actions = 1; })).detail,
            "a.pdf has 1 page; it holds a Launch action (runs a program)");
  EXPECT_EQ(run(with([](PdfFacts& f) { f.urls = {"https://x.invalid/", "b"}; })).detail,
            "a.pdf has 1 page; it holds 2 URI links, the first to \"https://x.invalid/\"");
  EXPECT_EQ(run(with([](PdfFacts& f) { f.embedded_files = 1; })).detail, "a.pdf has 1 page; it holds 1 embedded file");
  EXPECT_EQ(run(with([](PdfFacts& f) { f.encrypted = true; })).detail, "a.pdf has 1 page; it is encrypted");
  EXPECT_TRUE(run(with([](PdfFacts& f) { f.encrypted = true; }), {{"allow", {"encryption"}}}).passed);
  EXPECT_EQ(run(base, {{"max_page_height", 700}}).detail,
            "a.pdf has 1 page; a page 792.00 pt high, more than max_page_height 700.00");
  EXPECT_EQ(run(base, {{"min_page_width", 700}}).detail,
            "a.pdf has 1 page; a page 612.00 pt wide, less than min_page_width 700.00");
}

}  // namespace
}  // namespace airlock::validate
