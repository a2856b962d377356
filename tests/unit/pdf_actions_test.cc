// The pdf check's scan for active content (src/service/pdf_actions.py, run by
// the reader in its sandbox; here on the host, on PDFs the test writes with
// tests/unit/pdf_files/hostile_pdfs.py): actions hidden in object streams
// under every standard filter and chain, added by an incremental update, in an
// encrypted document; a damaged document and a missing qpdf fail the scan.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "service/pdf_reader.h"
#include "sys/file_io.h"

namespace airlock::service {
namespace {

bool have_qpdf() { return ::access("/usr/bin/qpdf", X_OK) == 0; }

struct Ran {
  int status = -1;
  std::string out;  // stdout and stderr
};

Ran run(const std::string& command) {
  Ran r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class PdfActionsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_qpdf()) return;
    char tmpl[] = "/tmp/airlock-pdf-actions-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(sys::write_file_atomic(dir_ + "/pdf_actions.py", pdf_actions_script()));
    Ran made = run("/usr/bin/python3 " + std::string(AIRLOCK_SOURCE_DIR) +
                   "/tests/unit/pdf_files/hostile_pdfs.py " + dir_);
    ASSERT_EQ(made.status, 0) << made.out;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (!have_qpdf()) GTEST_SKIP() << "qpdf is not installed (scripts/setup.sh --all installs it)";
  }

  // The scan's counts, as the reader reads them.
  static validate::PdfFacts scan(const std::string& pdf) {
    validate::PdfFacts facts;
    Ran r = run("/usr/bin/python3 " + dir_ + "/pdf_actions.py " + dir_ + "/" + pdf);
    EXPECT_EQ(r.status, 0) << pdf << ": " << r.out;
    EXPECT_TRUE(actions_from_scan(r.out, "", facts)) << pdf << ": " << r.out;
    return facts;
  }
  static Ran scan_fails(const std::string& pdf, const std::string& path = "/usr/bin:/bin") {
    return run("env PATH=" + path + " /usr/bin/python3 " + dir_ + "/pdf_actions.py " + dir_ + "/" +
               pdf);
  }
  static std::string dir_;
};
std::string PdfActionsTest::dir_;

const char* kFilters[] = {"flate",         "flate_png", "flate_tiff", "ahx",
                          "a85",           "lzw",       "rl",         "a85_flate",
                          "ahx_flate_png", "a85_lzw",   "ahx_rl",     "flate_flate"};

TEST_F(PdfActionsTest, ActionsInObjectStreamsAreFoundUnderEveryStandardFilter) {
  for (const char* f : kFilters) {
    std::string filter(f);
    EXPECT_GT(scan("js_" + filter + ".pdf").javascript, 0u) << filter;
    validate::PdfFacts launch = scan("launch_" + filter + ".pdf");  // written /L#61unch
    EXPECT_GT(launch.launch_actions, 0u) << filter;
    EXPECT_EQ(launch.javascript, 0u) << filter;
    validate::PdfFacts uri = scan("uri_" + filter + ".pdf");
    ASSERT_EQ(uri.urls.size(), 1u) << filter;
    EXPECT_EQ(uri.urls[0], "(a /URI action poppler does not list)");
  }
}

TEST_F(PdfActionsTest, CleanDocumentsInObjectStreamsPass) {
  for (const char* pdf :
       {"clean_ahx.pdf", "clean_qpdf.pdf", "update_base.pdf", "encrypted_empty_clean.pdf"}) {
    validate::PdfFacts facts = scan(pdf);
    EXPECT_EQ(facts.javascript + facts.launch_actions + facts.urls.size(), 0u) << pdf;
  }
}

TEST_F(PdfActionsTest, AnActionAddedByAnIncrementalUpdateIsFound) {
  EXPECT_GT(scan("update_js.pdf").javascript, 0u);
}

// AES-256 with an empty user password: every viewer opens it without asking;
// qpdf decrypts the object stream, which a scan of the bytes cannot read.
TEST_F(PdfActionsTest, AnEncryptedDocumentIsDecryptedWithTheEmptyPassword) {
  EXPECT_GT(scan("encrypted_empty_js.pdf").javascript, 0u);
  Ran r = scan_fails("encrypted_password_js.pdf");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("pdf_actions: qpdf cannot read the document (status 2)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("invalid password"), std::string::npos) << r.out;
}

TEST_F(PdfActionsTest, ADamagedDocumentIsRefusedNotRepaired) {
  Ran table = scan_fails("broken_table_js.pdf");
  EXPECT_EQ(table.status, 1) << table.out;
  EXPECT_NE(
      table.out.find("pdf_actions: qpdf had to repair the document, which is refused: WARNING:"),
      std::string::npos)
      << table.out;
  Ran stream = scan_fails("broken_xref_js.pdf");
  EXPECT_EQ(stream.status, 1) << stream.out;
  EXPECT_NE(stream.out.find("pdf_actions: qpdf cannot read the document"), std::string::npos)
      << stream.out;
  EXPECT_EQ(stream.out.find("javascript"), std::string::npos)
      << "no counts printed: " << stream.out;
}

TEST_F(PdfActionsTest, WithoutQpdfTheScanFailsInsteadOfPassing) {
  Ran r = scan_fails("clean_ahx.pdf", "/nonexistent");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out,
            "pdf_actions: qpdf is not installed in the pdf check's image (Debian package qpdf)\n");
}

}  // namespace
}  // namespace airlock::service
