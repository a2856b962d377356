// detect_type on real byte samples and on the edge cases of each rule.
#include "workspace/file_type.h"

#include <gtest/gtest.h>

#include <string>

namespace airlock::workspace {
namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// A 1x1 RGBA PNG (chunk CRCs and the zlib stream checked with Python).
const std::string kPng = from_hex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4"
    "890000000a49444154789c63000100000500010d0a2db40000000049454e44ae"
    "426082");

// A 1x1 grayscale JPEG written by libjpeg 6.2 (quality 50).
const std::string kJpeg = from_hex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300100b0c0e0c0a10"
    "0e0d0e1211101318281a181616183123251d283a333d3c3933383740485c4e40"
    "4457453738506d51575f626768673e4d71797064785c656763ffc0000b080001"
    "000101011100ffc4001f0000010501010101010100000000000000000102030405"
    "060708090a0bffc400b5100002010303020403050504040000017d010203000411"
    "05122131410613516107227114328191a1082342b1c11552d1f0243362728209"
    "0a161718191a25262728292a3435363738393a434445464748494a5354555657"
    "58595a636465666768696a737475767778797a838485868788898a9293949596"
    "9798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2"
    "d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffda0008"
    "010100003f00f40affd9");

// A one-page PDF with a binary comment line, as real writers emit.
const std::string kPdf =
    "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n"
    "1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n"
    "2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj\n"
    "3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 3 3]>> endobj\n"
    "trailer <</Root 1 0 R>>\n"
    "%%EOF\n";

TEST(FileTypeTest, NamesRoundTrip) {
  for (FileType t :
       {FileType::kText, FileType::kCsv, FileType::kTsv, FileType::kJson, FileType::kPng,
        FileType::kJpeg, FileType::kPdf, FileType::kSvg, FileType::kXml, FileType::kGitBundle, FileType::kArchive, FileType::kBinary}) {
    EXPECT_EQ(type_from_name(type_name(t)), t);
  }
  EXPECT_EQ(type_name(FileType::kJpeg), "jpeg");
  EXPECT_EQ(type_from_name("jpg"), std::nullopt);
}

TEST(FileTypeTest, DefaultSets) {
  EXPECT_FALSE(default_input_types().contains(FileType::kSvg));
  EXPECT_FALSE(default_input_types().contains(FileType::kBinary));
  EXPECT_TRUE(default_output_types().contains(FileType::kSvg));
  EXPECT_TRUE(default_output_types().contains(FileType::kPng));
  EXPECT_FALSE(default_output_types().contains(FileType::kBinary));
}

TEST(FileTypeTest, EmptyIsText) { EXPECT_EQ(detect_type(""), FileType::kText); }

TEST(FileTypeTest, Png) {
  EXPECT_EQ(detect_type(kPng), FileType::kPng);
  EXPECT_EQ(detect_type(kPng.substr(0, kPng.size() - 1)), FileType::kBinary);  // no IEND
  EXPECT_EQ(detect_type(kPng + "x"), FileType::kBinary);                       // trailing data
  std::string no_ihdr = kPng;
  no_ihdr[12] = 'X';
  EXPECT_EQ(detect_type(no_ihdr), FileType::kBinary);
}

TEST(FileTypeTest, Jpeg) {
  EXPECT_EQ(detect_type(kJpeg), FileType::kJpeg);
  EXPECT_EQ(detect_type(kJpeg.substr(0, kJpeg.size() - 2)), FileType::kBinary);
}

TEST(FileTypeTest, Pdf) {
  EXPECT_EQ(detect_type(kPdf), FileType::kPdf);
  EXPECT_EQ(detect_type(kPdf.substr(0, kPdf.size() - 6)), FileType::kBinary);  // no %%EOF
  // %%EOF far from the end does not count.
  EXPECT_EQ(detect_type(kPdf + std::string(2000, '\xFF')), FileType::kBinary);
}

TEST(FileTypeTest, PlainText) {
  EXPECT_EQ(detect_type("hello world\n"), FileType::kText);
  EXPECT_EQ(detect_type("tab\there\r\nline two\n"), FileType::kText);
  EXPECT_EQ(detect_type("gr\xC3\xBC\xC3\x9F dich \xE2\x82\xAC \xF0\x9F\x98\x80\n"),
            FileType::kText);
  EXPECT_EQ(detect_type("\xEF\xBB\xBFwith a BOM\n"), FileType::kText);
}

TEST(FileTypeTest, InvalidUtf8IsBinary) {
  EXPECT_EQ(detect_type("caf\xE9\n"), FileType::kBinary);         // Latin-1
  EXPECT_EQ(detect_type("\xC0\xAF"), FileType::kBinary);          // overlong '/'
  EXPECT_EQ(detect_type("\xE0\x80\xAF"), FileType::kBinary);      // overlong, 3 bytes
  EXPECT_EQ(detect_type("\xF0\x80\x80\xAF"), FileType::kBinary);  // overlong, 4 bytes
  EXPECT_EQ(detect_type("\xED\xA0\x80"), FileType::kBinary);      // surrogate U+D800
  EXPECT_EQ(detect_type("\xF4\x90\x80\x80"), FileType::kBinary);  // above U+10FFFF
  EXPECT_EQ(detect_type("abc\xE2\x82"), FileType::kBinary);       // truncated
  EXPECT_EQ(detect_type("\x80"), FileType::kBinary);              // lone continuation
}

TEST(FileTypeTest, ControlCharactersAreBinary) {
  EXPECT_EQ(detect_type(std::string("a\0b", 3)), FileType::kBinary);
  EXPECT_EQ(detect_type("bell\a\n"), FileType::kBinary);
  EXPECT_EQ(detect_type("esc \x1B[31m red\n"), FileType::kBinary);
}

TEST(FileTypeTest, Csv) {
  EXPECT_EQ(detect_type("a,b,c\n1,2,3\n"), FileType::kCsv);
  EXPECT_EQ(detect_type("a,b\r\n1,2\r\n"), FileType::kCsv);
  EXPECT_EQ(detect_type("name,city\n\"Smith, J\",\"Paris, FR\"\n"), FileType::kCsv);
  EXPECT_EQ(detect_type("q,note\n1,\"she said \"\"hi\"\"\"\n"), FileType::kCsv);
  EXPECT_EQ(detect_type("id,text\n1,\"two\nlines\"\n2,x\n"), FileType::kCsv);
  EXPECT_EQ(detect_type("a,b\n\n1,2\n\n"), FileType::kCsv);  // blank lines ignored
  EXPECT_EQ(detect_type("a,b"), FileType::kCsv);             // one line
}

TEST(FileTypeTest, InconsistentCsvIsText) {
  EXPECT_EQ(detect_type("a,b,c\n1,2\n"), FileType::kText);
  EXPECT_EQ(detect_type("a,\"b\n"), FileType::kText);          // unterminated quote
  EXPECT_EQ(detect_type("a,\"b\"c\n1,2\n"), FileType::kText);  // text after closing quote
  EXPECT_EQ(detect_type("one\ntwo\n"), FileType::kText);       // one field per line
}

TEST(FileTypeTest, Tsv) {
  EXPECT_EQ(detect_type("a\tb\n1\t2\n"), FileType::kTsv);
  EXPECT_EQ(detect_type("a\tb\n1\t2\t3\n"), FileType::kText);
}

TEST(FileTypeTest, Json) {
  EXPECT_EQ(detect_type("{\"a\": [1, 2, {\"b\": null}]}"), FileType::kJson);
  EXPECT_EQ(detect_type(" [1,2]\n"), FileType::kJson);
  EXPECT_EQ(detect_type("\xEF\xBB\xBF{}"), FileType::kJson);
  EXPECT_EQ(detect_type("42"), FileType::kText);  // a scalar is not enough
  EXPECT_EQ(detect_type("\"str\""), FileType::kText);
  EXPECT_EQ(detect_type("{\"a\": }"), FileType::kText);  // does not parse
  EXPECT_EQ(detect_type("{\"a\":1} {}"), FileType::kText);
  // Deep nesting must not recurse on the stack.
  EXPECT_EQ(detect_type(std::string(100000, '[') + std::string(100000, ']')), FileType::kJson);
}

// XML is text that the bounded reader accepts; anything it refuses stays text,
// so a hostile document is never given the xml type.
TEST(FileTypeTest, Xml) {
  EXPECT_EQ(detect_type("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites><testsuite name=\"a\" "
                        "tests=\"1\"><testcase name=\"t\"/></testsuite></testsuites>\n"),
            FileType::kXml);
  EXPECT_EQ(detect_type("<a/>"), FileType::kXml);
  EXPECT_EQ(detect_type("<a>"), FileType::kText);                    // truncated
  EXPECT_EQ(detect_type("<a></b>"), FileType::kText);                // mismatched
  EXPECT_EQ(detect_type("<!DOCTYPE a><a/>"), FileType::kText);       // DOCTYPE refused
  EXPECT_EQ(detect_type("<a>&lol9;</a>"), FileType::kText);          // undefined entity
  EXPECT_EQ(detect_type(std::string(300, '<').replace(1, 299, std::string(299, 'a'))), FileType::kText);
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<a>";
  for (int i = 0; i < 300; ++i) deep += "</a>";
  EXPECT_EQ(detect_type(deep), FileType::kText);                     // deeper than 256
  EXPECT_EQ(detect_type("x,y\n<a/>,2\n"), FileType::kCsv);          // not markup first
  EXPECT_TRUE(default_input_types().contains(FileType::kXml));
  EXPECT_TRUE(default_output_types().contains(FileType::kXml));
}

// A git bundle is admitted by its header and pack signature; git reads it in
// the sandbox. Anything that only looks like one is binary.
TEST(FileTypeTest, GitBundle) {
  const std::string id(40, 'a');
  const std::string pack("PACK\0\0\0\x02\0\0\0\x03rest", 16);
  EXPECT_EQ(detect_type("# v2 git bundle\n" + id + " refs/heads/main\n\n" + pack), FileType::kGitBundle);
  EXPECT_EQ(detect_type("# v3 git bundle\n@object-format=sha1\n-" + id + " base\n" + id + " HEAD\n\n" + pack),
            FileType::kGitBundle);
  EXPECT_EQ(detect_type("# v2 git bundle\n" + id + " refs/heads/main\n\nPACK"), FileType::kText);  // no pack after the header
  EXPECT_EQ(detect_type("# v2 git bundle\nnot-hex refs/heads/main\n\n" + pack), FileType::kBinary);
  EXPECT_EQ(detect_type("# v2 git bundle\n@object-format=sha1\n" + id + " x\n\n" + pack), FileType::kBinary);
  EXPECT_EQ(detect_type("# v2 git bundle\n" + id + " refs/heads/main\n"), FileType::kText);
  EXPECT_TRUE(default_input_types().contains(FileType::kGitBundle));
  EXPECT_FALSE(default_output_types().contains(FileType::kGitBundle));
}

TEST(FileTypeTest, Svg) {
  EXPECT_EQ(detect_type("<svg xmlns=\"http://www.w3.org/2000/svg\"/>"), FileType::kSvg);
  EXPECT_EQ(detect_type("\xEF\xBB\xBF\n<?xml version=\"1.0\"?>\n<!-- made by hand -->\n"
                        "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\"\n"
                        "  \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
                        "<svg width=\"1\" height=\"1\"></svg>\n"),
            FileType::kSvg);
  EXPECT_EQ(detect_type("<html><svg></svg></html>"), FileType::kXml);  // well-formed, not an svg root
  EXPECT_EQ(detect_type("<svgfoo/>"), FileType::kXml);
  // An internal DTD subset (entity definitions) is not accepted as SVG.
  EXPECT_EQ(detect_type("<!DOCTYPE svg [<!ENTITY a \"b\">]><svg>&a;</svg>"), FileType::kText);
}

}  // namespace
}  // namespace airlock::workspace

namespace airlock::workspace {
namespace {

// Archives are typed by signature only, in no default set: the archive and office checks look inside.
TEST(FileTypeArchiveTest, ZipGzipAndTarBySignature) {
  EXPECT_EQ(detect_type(std::string("PK\x03\x04", 4) + "rest"), FileType::kArchive);
  EXPECT_EQ(detect_type(std::string("PK\x05\x06", 4) + std::string(18, '\0')), FileType::kArchive);  // empty ZIP
  EXPECT_EQ(detect_type("\x1f\x8b\x08 gzip"), FileType::kArchive);
  std::string tar(512, '\0');
  tar.replace(257, 5, "ustar");
  EXPECT_EQ(detect_type(tar), FileType::kArchive);
  EXPECT_EQ(detect_type(tar.substr(0, 300)), FileType::kBinary);  // too short for a tar header
  EXPECT_EQ(detect_type("PK is text"), FileType::kText);
  EXPECT_FALSE(default_output_types().contains(FileType::kArchive));
  EXPECT_FALSE(default_input_types().contains(FileType::kArchive));
  EXPECT_EQ(type_from_name("archive"), FileType::kArchive);
}

}  // namespace
}  // namespace airlock::workspace
