// The junit and pdf checks through a real `airlock serve`: a job's JUnit
// report is typed xml and its counts decide the outcome; a job's PDF is read
// by poppler in a sandbox of its own, and hostile PDFs fail the check with
// poppler's reason instead of reaching a parser in the service.
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "service_fixture.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

class OutputChecksTest : public ::testing::Test {
 protected:
  ServiceProcess svc;
  HttpClient http{svc.port()};
};

const char* kReport =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<testsuite name=\"unit\" tests=\"2\" failures=\"FAILS\">\n"
    "  <testcase name=\"a\"/>\n  <testcase name=\"b\">FAILURE</testcase>\n</testsuite>\n";

std::string report(bool failing) {
  std::string r = kReport;
  r.replace(r.find("FAILS"), 5, failing ? "1" : "0");
  r.replace(r.find("FAILURE"), 7, failing ? "<failure message=\"1 != 2\"/>" : "");
  return r;
}

json write_file_job(const std::string& name, const std::string& content, const json& check) {
  std::string code = "import sys\nopen('/output/" + name + "', 'wb').write(bytes.fromhex('" +
                     [&] {
                       static constexpr char kHex[] = "0123456789abcdef";
                       std::string hex;
                       for (unsigned char c : content) hex += {kHex[c >> 4], kHex[c & 15]};
                       return hex;
                     }() +
                     "'))\n";
  return {{"code", code}, {"checks", {check}}};
}

TEST_F(OutputChecksTest, JunitReportIsXmlAndItsCountsDecideTheOutcome) {
  json check = {{"kind", "junit"}, {"output", "report.xml"}};
  json ok = run_job(http, svc.alpha, write_file_job("report.xml", report(false), check));
  ASSERT_EQ(ok["outcome"], "succeeded") << ok.dump(2);
  EXPECT_EQ(ok["record"]["outputs"][0]["type"], "xml");
  EXPECT_EQ(ok["record"]["checks"][0]["detail"],
            "report.xml: 2 tests, 0 failures, 0 errors, 0 skipped (min_tests 1, max_failures 0, max_errors 0)");
  json bad = run_job(http, svc.alpha, write_file_job("report.xml", report(true), check));
  EXPECT_EQ(bad["outcome"], "output_rejected") << bad.dump(2);
  EXPECT_EQ(bad["record"]["reason"],
            "check failed: junit#0: report.xml: 2 tests, 1 failure, 0 errors, 0 skipped: more than max_failures 0");
  // An entity bomb is not even typed xml; the check refuses it at its DOCTYPE.
  std::string bomb = "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;\">]>"
                     "<testsuite><testcase name=\"&b;\"/></testsuite>";
  json hostile = run_job(http, svc.alpha, write_file_job("report.xml", bomb, check));
  EXPECT_EQ(hostile["outcome"], "output_rejected") << hostile.dump(2);
  EXPECT_EQ(hostile["record"]["outputs"][0]["type"], "text");
  EXPECT_EQ(hostile["record"]["checks"][0]["detail"],
            "report.xml is not a JUnit XML report: byte 21: a DOCTYPE is refused (no DTD or entity declarations)");
}

bool have_poppler() { return ::access("/usr/bin/pdftotext", X_OK) == 0 && ::access("/usr/bin/pdfinfo", X_OK) == 0; }

TEST_F(OutputChecksTest, PdfIsReadByPopplerInASandbox) {
  if (!have_poppler()) GTEST_SKIP() << "poppler-utils is not installed (scripts/setup.sh installs it)";
  std::string code =
      "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
      "from matplotlib.backends.backend_pdf import PdfPages\n"
      "with PdfPages('/output/doc.pdf') as pdf:\n"
      "    for t in ['Quarterly report', 'page two']:\n"
      "        f = plt.figure(); f.text(0.1, 0.5, t); pdf.savefig(f); plt.close(f)\n";
  json check = {{"kind", "pdf"}, {"output", "doc.pdf"}, {"min_pages", 2}, {"max_pages", 2},
                {"contains", {"Quarterly report", "page two"}}, {"excludes", {"root:x:0:0"}}};
  json ok = run_job(http, svc.alpha, {{"code", code}, {"checks", {check}}});
  ASSERT_EQ(ok["outcome"], "succeeded") << ok.dump(2);
  EXPECT_EQ(ok["record"]["outputs"][0]["type"], "pdf");
  EXPECT_EQ(ok["record"]["checks"][0]["detail"],
            "doc.pdf has 2 pages (contains 2 required phrases, none of 1 excluded phrases, min_pages 2, max_pages 2)");
  check["contains"] = {"Annual report"};
  json bad = run_job(http, svc.alpha, {{"code", code}, {"checks", {check}}});
  EXPECT_EQ(bad["outcome"], "output_rejected");
  EXPECT_EQ(bad["record"]["checks"][0]["detail"], "doc.pdf has 2 pages; its text does not contain \"Annual report\"");
}

TEST_F(OutputChecksTest, HostilePdfsFailTheCheckWithPopplersReason) {
  if (!have_poppler()) GTEST_SKIP() << "poppler-utils is not installed (scripts/setup.sh installs it)";
  json check = {{"kind", "pdf"}, {"output", "doc.pdf"}, {"max_pages", 10}};
  // A page tree that claims two billion pages.
  std::string huge =
      "%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n"
      "2 0 obj <</Type /Pages /Kids [3 0 R] /Count 2000000000>> endobj\n"
      "3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 3 3]>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n";
  json r = run_job(http, svc.alpha, write_file_job("doc.pdf", huge, check));
  EXPECT_EQ(r["outcome"], "output_rejected") << r.dump(2);
  std::string detail = r["record"]["checks"][0]["detail"];
  EXPECT_TRUE(detail.starts_with("doc.pdf: the PDF reader (poppler, qpdf) in its sandbox ended as failed: "
                                 "the program exited with status 99"))
      << detail;
  EXPECT_NE(detail.find("Page count (2000000000) larger than number of objects"), std::string::npos) << detail;
  // Garbage between a PDF header and trailer.
  std::string garbage = "%PDF-1.7\n";
  for (int i = 0; i < 4000; ++i) garbage += static_cast<char>("{>)(<]/\\\x80\xff"[i % 10]);
  garbage += "\n%%EOF\n";
  r = run_job(http, svc.alpha, write_file_job("doc.pdf", garbage, check));
  EXPECT_EQ(r["outcome"], "output_rejected") << r.dump(2);
  detail = r["record"]["checks"][0]["detail"];
  EXPECT_TRUE(detail.starts_with("doc.pdf: the PDF reader (poppler, qpdf) in its sandbox ended as failed")) << detail;
  EXPECT_NE(detail.find("Couldn't read xref table"), std::string::npos) << detail;
}

}  // namespace
}  // namespace airlock::testing
