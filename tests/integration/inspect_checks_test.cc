// The archive, office and pdf checks through a real `airlock serve`, on good
// and hostile files that a job writes (tests/integration/inspect_files/*.py):
// each hostile file fails its check with the reason, the good ones pass with
// every member listed. libarchive runs in its confined child (`airlock
// inspect-archive`), poppler in its sandbox; the child's memory on a bomb is
// measured, not timed.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "service_fixture.h"
#include "sys/file_io.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

class InspectChecksTest : public ::testing::Test {
 protected:
  ServiceProcess svc;
  HttpClient http{svc.port()};
};

std::string script(const std::string& name) {
  auto text = sys::read_file(std::string(AIRLOCK_SOURCE_DIR) + "/tests/integration/inspect_files/" + name);
  EXPECT_TRUE(text.has_value()) << name;
  return text ? *text : "";
}

// One job writes every file; one check each. Details by label.
std::map<std::string, json> run_checks_job(HttpClient& http, const TestKey& key, const std::string& code,
                                           const json& checks, json* job = nullptr) {
  json body = {{"code", code},
               {"policy", {{"outputs", {{"types", {"archive", "pdf", "text", "csv", "png"}}, {"max_files", 30}}}}},
               {"checks", checks}};
  json r = run_job(http, key, body, 120);
  if (job) *job = r;
  std::map<std::string, json> by_label;
  for (const auto& c : r["record"]["checks"]) by_label[c["label"]] = c;
  EXPECT_EQ(by_label.size(), checks.size()) << r.dump(2);
  return by_label;
}

json check(const std::string& kind, const std::string& output, json extra = json::object()) {
  extra["kind"] = kind;
  extra["output"] = output;
  extra["name"] = output + (extra.contains("member_types") ? " typed" : "");
  return extra;
}

TEST_F(InspectChecksTest, ArchivesAreListedAndHostileOnesRefused) {
  json checks = json::array({
      check("archive", "good.zip"),
      check("archive", "good.zip", {{"member_types", {"csv"}}}),
      check("archive", "good.tar.gz", {{"member_types", {"csv", "text"}}}),
      check("archive", "traversal.zip"),
      check("archive", "absolute.zip"),
      check("archive", "duplicate.zip"),
      check("archive", "many.zip", {{"max_members", 10}}),
      check("archive", "symlink.zip"),
      check("archive", "hardlink.tar"),
      check("archive", "device.tar.gz"),
      check("archive", "fifo.tar.gz"),
      check("archive", "bomb.zip"),
      check("archive", "lying.zip", {{"max_ratio", 1000000}, {"max_member_bytes", 10 << 20}}),
      check("archive", "notes.txt"),
      check("archive", "hidden.zip"),
      check("archive", "nested.zip"),
  });
  checks.push_back({{"kind", "archive"}, {"output", "nested.zip"}, {"name", "nested allowed"}, {"max_depth", 1}});
  std::string code = script("archives.py") + "open('/output/notes.txt', 'w').write('not an archive\\n')\n";
  json job;
  auto c = run_checks_job(http, svc.alpha, code, checks, &job);
  EXPECT_EQ(job["outcome"], "output_rejected") << job.dump(2);

  ASSERT_TRUE(c["good.zip"]["passed"]) << c["good.zip"].dump(2);
  EXPECT_EQ(c["good.zip"]["detail"],
            "good.zip: ZIP 2.0 (deflation), 2 members, 43 bytes (max_members 1000, max_member_bytes 67108864, "
            "max_total_bytes 268435456, max_ratio 100)");
  json members = c["good.zip"]["members"];
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0]["name"], "summary.csv");
  EXPECT_EQ(members[0]["size"], 31);
  // sha256 of "region,total\nnorth,10\nsouth,20\n"
  EXPECT_EQ(members[0]["sha256"], "64d40c4048e9dea29405b55b7145058c054bf0447f9b723f07ef5e57561d2b06");
  EXPECT_EQ(members[1]["name"], "notes.txt");

  EXPECT_FALSE(c["good.zip typed"]["passed"]);
  EXPECT_EQ(c["good.zip typed"]["detail"], "good.zip is refused: member \"notes.txt\" is text, not one of csv");
  EXPECT_TRUE(c["good.tar.gz typed"]["passed"]) << c["good.tar.gz typed"].dump(2);
  EXPECT_EQ(c["good.tar.gz typed"]["members"][0]["type"], "csv");

  std::map<std::string, std::string> refused = {
      {"traversal.zip", "traversal.zip is refused: member \"../../etc/cron.d/x\": a \"..\" component"},
      {"absolute.zip", "absolute.zip is refused: member \"/etc/passwd\": an absolute path"},
      {"duplicate.zip", "duplicate.zip is refused: member \"./a.csv\" appears twice"},
      {"many.zip", "many.zip is refused: more than max_members 10 members"},
      {"symlink.zip", "symlink.zip is refused: member \"link\" is a symlink (only files and directories are allowed)"},
      {"hardlink.tar", "hardlink.tar is refused: member \"h\" is a hard link (only files and directories are allowed)"},
      {"device.tar.gz", "device.tar.gz is refused: member \"null\" is a device (only files and directories are allowed)"},
      {"fifo.tar.gz", "fifo.tar.gz is refused: member \"pipe\" is a fifo (only files and directories are allowed)"},
      {"notes.txt", "notes.txt is refused: not a readable ZIP or tar archive: Unrecognized archive format"},
  };
  for (const auto& [label, detail] : refused) {
    EXPECT_FALSE(c[label]["passed"]) << label;
    EXPECT_EQ(c[label]["detail"], detail) << label;
  }
  // What was read before the refusal is listed: the first a.csv of duplicate.zip.
  ASSERT_EQ(c["duplicate.zip"]["members"].size(), 1u);
  EXPECT_EQ(c["duplicate.zip"]["members"][0]["name"], "a.csv");

  // 40 MiB of zeros in 40 KiB: stopped by the ratio just past its 1 MiB floor, not inflated whole.
  std::string bomb = c["bomb.zip"]["detail"];
  EXPECT_FALSE(c["bomb.zip"]["passed"]);
  EXPECT_TRUE(bomb.starts_with("bomb.zip is refused: member \"zeros.bin\": 11")) << bomb;
  EXPECT_NE(bomb.find("more than max_ratio 100 (a compression bomb?)"), std::string::npos) << bomb;
  // Its headers claim 1000 bytes: the bytes that come out are counted, not the claim.
  EXPECT_FALSE(c["lying.zip"]["passed"]);
  EXPECT_EQ(c["lying.zip"]["detail"], "lying.zip is refused: member \"zeros.bin\": a member is over max_member_bytes 10485760");
  // The confined child compares the local headers with the central directory before libarchive reads.
  std::string hidden = c["hidden.zip"]["detail"];
  EXPECT_TRUE(hidden.starts_with("hidden.zip is refused: 52 bytes at offset 43 that no central directory entry covers "
                                 "(between members"))
      << hidden;
  EXPECT_EQ(c["nested.zip"]["detail"],
            "nested.zip is refused: member \"inner.zip\" is a ZIP archive: nested archives are refused (max_depth 0)");
  std::string nested = c["nested allowed"]["detail"];
  EXPECT_TRUE(nested.starts_with("nested.zip is refused: in nested archive \"inner.zip\": member \"zeros.bin\": "))
      << nested;
  EXPECT_NE(nested.find("more than max_ratio 100 (a compression bomb?)"), std::string::npos) << nested;
}

TEST_F(InspectChecksTest, OfficePackagesWithMacrosOrExternalLinksAreRefused) {
  json checks = json::array({
      check("office", "good.docx"),
      check("office", "macro.docx"),
      check("office", "template.docx"),
      check("office", "link.docx"),
      check("office", "external.xlsx"),
      check("office", "bad_rels.docx"),
      check("office", "plain.docx"),
  });
  checks.push_back({{"kind", "office"}, {"output", "link.docx"}, {"name", "hyperlinks allowed"}, {"allow_hyperlinks", true}});
  auto c = run_checks_job(http, svc.alpha, script("office.py"), checks);
  EXPECT_TRUE(c["good.docx"]["passed"]) << c["good.docx"].dump(2);
  EXPECT_EQ(c["good.docx"]["detail"],
            "good.docx: an Office package of 3 parts, 1 relationships part, no macros, no external links");
  EXPECT_EQ(c["good.docx"]["members"].size(), 3u);
  EXPECT_TRUE(c["hyperlinks allowed"]["passed"]) << c["hyperlinks allowed"].dump(2);
  std::map<std::string, std::string> refused = {
      {"macro.docx", "macro.docx is refused: macros: the package holds \"word/vbaProject.bin\""},
      {"template.docx",
       "template.docx is refused: an external relationship in \"word/_rels/settings.xml.rels\": \"attachedTemplate\" to "
       "\"http://attacker.invalid/t.dotm\""},
      {"link.docx",
       "link.docx is refused: an external relationship in \"word/_rels/document.xml.rels\": \"hyperlink\" to "
       "\"https://example.invalid/\""},
      {"external.xlsx", "external.xlsx is refused: an external link: the package holds \"xl/externalLinks/externalLink1.xml\""},
      {"bad_rels.docx",
       "bad_rels.docx is refused: relationships part \"word/_rels/document.xml.rels\": byte 0: a DOCTYPE is refused (no DTD "
       "or entity declarations)"},
      {"plain.docx", "plain.docx is refused: not an Office package (no [Content_Types].xml)"},
  };
  for (const auto& [label, detail] : refused) {
    EXPECT_FALSE(c[label]["passed"]) << label;
    EXPECT_EQ(c[label]["detail"], detail) << label;
  }
}

bool have_poppler() { return ::access("/usr/bin/pdftotext", X_OK) == 0 && ::access("/usr/bin/pdfdetach", X_OK) == 0; }

TEST_F(InspectChecksTest, PdfsWithActiveContentEmbeddedFilesOrEncryptionAreRefused) {
  if (!have_poppler()) GTEST_SKIP() << "poppler-utils is not installed (scripts/setup.sh installs it)";
  json checks = json::array({
      check("pdf", "plain.pdf", {{"max_page_width", 700}, {"max_page_height", 800}}),
      check("pdf", "wide.pdf", {{"max_page_width", 700}}),
      check("pdf", "javascript.pdf"),
      check("pdf", "launch.pdf"),
      check("pdf", "uri.pdf"),
      check("pdf", "embedded.pdf"),
      check("pdf", "encrypted.pdf"),
      check("pdf", "objstm_js.pdf"),
      check("pdf", "objstm_launch.pdf"),
      check("pdf", "damaged.pdf"),
  });
  checks.push_back({{"kind", "pdf"}, {"output", "uri.pdf"}, {"name", "uri allowed"}, {"allow", {"uri"}}});
  auto c = run_checks_job(http, svc.alpha, script("pdfs.py"), checks);
  EXPECT_TRUE(c["plain.pdf"]["passed"]) << c["plain.pdf"].dump(2);
  EXPECT_TRUE(c["uri allowed"]["passed"]) << c["uri allowed"].dump(2);
  std::map<std::string, std::string> refused = {
      {"wide.pdf", "wide.pdf has 1 page; a page 5000.00 pt wide, more than max_page_width 700.00"},
      {"javascript.pdf", "javascript.pdf has 1 page; it holds JavaScript"},
      {"launch.pdf", "launch.pdf has 1 page; it holds a Launch action (runs a program)"},
      {"uri.pdf", "uri.pdf has 1 page; it holds 1 URI link, the first to \"https://example.invalid/x\""},
      {"embedded.pdf", "embedded.pdf has 1 page; it holds 1 embedded file"},
      {"encrypted.pdf", "encrypted.pdf has 1 page; it is encrypted"},
      // In object streams under ASCIIHex, and Flate with a PNG predictor: qpdf decodes them.
      {"objstm_js.pdf", "objstm_js.pdf has 1 page; it holds JavaScript"},
      {"objstm_launch.pdf", "objstm_launch.pdf has 1 page; it holds a Launch action (runs a program)"},
  };
  for (const auto& [label, detail] : refused) {
    EXPECT_FALSE(c[label]["passed"]) << label;
    EXPECT_EQ(c[label]["detail"], detail) << label;
  }
  std::string damaged = c["damaged.pdf"]["detail"];
  EXPECT_FALSE(c["damaged.pdf"]["passed"]);
  EXPECT_TRUE(damaged.starts_with("damaged.pdf: the PDF reader (poppler, qpdf) in its sandbox ended as failed"))
      << damaged;
  EXPECT_NE(damaged.find("pdf_actions: qpdf had to repair the document, which is refused"), std::string::npos)
      << damaged;
}

// examples/analyst_bundle.py through the service: its bundle.zip (the CSV and
// the chart) passes an archive check that lists both members with their
// digests and types; the same check refuses a bundle with a third member type.
TEST_F(InspectChecksTest, AnalystBundleIsInspectedBeforeItIsPublished) {
  auto example = [](const std::string& name) {
    auto text = sys::read_file(std::string(AIRLOCK_SOURCE_DIR) + "/examples/" + name);
    EXPECT_TRUE(text.has_value()) << name;
    return json(text ? *text : "");
  };
  // The job writes the example and its inputs where the example looks for them, then runs it.
  json files = {{"analyst.py", example("analyst.py")}, {"analyst_bundle.py", example("analyst_bundle.py")},
                {"in/sales_jan.csv", example("sales_jan.csv")}, {"in/sales_feb.csv", example("sales_feb.csv")}};
  std::string code = "import json, os, runpy\nos.makedirs('/tmp/ex/in')\nfiles = json.loads(" + json(files.dump()).dump() +
                     ")\nfor n, t in files.items():\n    open('/tmp/ex/' + n, 'w').write(t)\n"
                     "os.environ['AIRLOCK_INPUTS'] = '/tmp/ex/in'\n"
                     "runpy.run_path('/tmp/ex/analyst_bundle.py', run_name='__main__')\n";
  json checks = json::array({{{"kind", "archive"}, {"output", "bundle.zip"}, {"name", "bundle"},
                              {"member_types", {"csv", "png"}}, {"max_members", 2}},
                             {{"kind", "archive"}, {"output", "bundle.zip"}, {"name", "csv only"},
                              {"member_types", {"csv"}}}});
  json job;
  auto c = run_checks_job(http, svc.alpha, code, checks, &job);
  ASSERT_TRUE(c["bundle"]["passed"]) << job.dump(2);
  json members = c["bundle"]["members"];
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0]["name"], "summary.csv");
  EXPECT_EQ(members[0]["type"], "csv");
  EXPECT_EQ(members[1]["name"], "chart.png");
  EXPECT_EQ(members[1]["type"], "png");
  // The digests in the check's record are those of the job's own outputs.
  for (const auto& o : job["record"]["outputs"])
    for (const auto& m : members)
      if (o["name"] == m["name"]) {
        EXPECT_EQ(o["sha256"], m["sha256"]) << m["name"];
      }
  EXPECT_FALSE(c["csv only"]["passed"]);
  EXPECT_EQ(c["csv only"]["detail"], "bundle.zip is refused: member \"chart.png\" is png, not one of csv");
  EXPECT_EQ(job["outcome"], "output_rejected");
}

// The confined child on a bomb with size and ratio bounds lifted: only the
// total bound (64 MiB) stops it after 64 MiB have streamed through, and its
// peak memory, measured by the kernel, stays a small fraction of that.
TEST(ArchiveInspector, BombStreamsInBoundedMemory) {
  TempDir dir;
  std::string zip = dir.path() + "/bomb.zip";
  std::string make = "import zipfile\nwith zipfile.ZipFile('" + zip +
                     "', 'w', zipfile.ZIP_DEFLATED) as f:\n    f.writestr('zeros.bin', b'\\0' * (200 << 20))\n";
  ASSERT_EQ(std::system(("/usr/bin/python3 -c \"" + make + "\"").c_str()), 0);
  std::string bounds = R"({"max_members":10,"max_member_bytes":1099511627776,"max_total_bytes":67108864,)"
                       R"("max_ratio":1000000,"ratio_floor_bytes":1048576,"typed_member_bytes":16777216})";
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::execl(AIRLOCK_BINARY, AIRLOCK_BINARY, "inspect-archive", zip.c_str(), bounds.c_str(), "{}", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) answer.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  rusage usage{};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  json j = json::parse(answer);
  EXPECT_EQ(j["refused"], "member \"zeros.bin\": the members are over max_total_bytes 67108864") << answer;
  EXPECT_LT(usage.ru_maxrss, 32 * 1024) << "peak RSS in KiB";  // 64 MiB came out
}

}  // namespace
}  // namespace airlock::testing
