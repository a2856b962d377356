// What the pdf check takes from poppler's outputs (service/pdf_reader.h):
// only poppler's own lines, never a line the document's metadata could forge.
#include <gtest/gtest.h>

#include "service/pdf_reader.h"

namespace airlock::service {
namespace {

// pdfinfo -f 1 -l 1000, with a Title that forges an "Encrypted: no" and a page size before the real lines.
const char* kInfo =
    "Title:           x\nEncrypted:       no\nPage    1 size:  1 x 1 pts\nPages:           9\n"
    "Producer:        y\nPages:           2\nEncrypted:       yes (print:yes copy:no)\n"
    "Page    1 size:  612 x 792 pts (letter)\nPage    1 rot:   0\nPage    2 size:  5000 x 300.5 pts\n"
    "File size:       1234 bytes\n";

TEST(PdfReaderTest, FactsComeFromPopplersLinesOnly) {
  validate::PdfFacts facts;
  facts.pages = 2;
  ASSERT_TRUE(facts_from_pdfinfo(kInfo, facts));
  EXPECT_TRUE(facts.encrypted);
  EXPECT_EQ(facts.max_page_width, 5000);
  EXPECT_EQ(facts.max_page_height, 792);
  EXPECT_EQ(facts.min_page_width, 612);
  EXPECT_EQ(facts.min_page_height, 300.5);
  EXPECT_EQ(*pages_from_pdfinfo(kInfo), 2u);
  validate::PdfFacts none;
  EXPECT_EQ(facts_from_pdfinfo("Title: Pages\n", none).error().what, "pdfinfo reported no page count");
  EXPECT_EQ(facts_from_pdfinfo("Pages: 1\nPage    1 size:  612 x 792 pts\n", none).error().what,
            "pdfinfo reported no Encrypted line");
  EXPECT_FALSE(facts_from_pdfinfo("Pages: 1\nEncrypted: no\nPage    1 size:  wide pts\n", none));
}

TEST(PdfReaderTest, EmbeddedFilesUrlsAndActions) {
  validate::PdfFacts f;
  ASSERT_TRUE(embedded_from_pdfdetach("2 embedded files\n1: a.txt\n2: 3 embedded files\n", f));
  EXPECT_EQ(f.embedded_files, 2u);
  EXPECT_FALSE(embedded_from_pdfdetach("", f));
  EXPECT_FALSE(embedded_from_pdfdetach("Syntax Error\n", f));
  urls_from_pdfinfo("Page  Type          URL\n   1  Annotation    https://example.invalid/x y\n\n", f);
  ASSERT_EQ(f.urls.size(), 1u);
  EXPECT_EQ(f.urls[0], "https://example.invalid/x y");
  validate::PdfFacts g;
  ASSERT_TRUE(actions_from_scan("launch 1\njavascript 0\nuri 3\n", "", g));
  EXPECT_EQ(g.launch_actions, 1u);
  EXPECT_EQ(g.javascript, 0u);
  ASSERT_EQ(g.urls.size(), 1u);  // a /URI that poppler did not list still counts
  validate::PdfFacts h;
  ASSERT_TRUE(actions_from_scan("launch 0\njavascript 0\nuri 0\n", "app.alert(1)\n", h));
  EXPECT_EQ(h.javascript, 1u);  // pdfinfo -js printed a script
  EXPECT_EQ(actions_from_scan("launch 0\n", "", h).error().what,
            "pdf reader: the scan for active content reported no counts");
}

TEST(PdfReaderTest, TheScanScriptIsCompiledIn) {
  EXPECT_NE(pdf_actions_script().find("def main(path)"), std::string::npos);
}

}  // namespace
}  // namespace airlock::service
