// read_xml, the bounded XML reader: well-formed documents and their events,
// and hostile ones (entity bombs, external entities, deep nesting,
// truncation, bad encodings), each refused with its reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "validate/xml.h"

namespace airlock::validate {
namespace {

std::string error_of(std::string_view doc, const XmlLimits& limits = {}) {
  auto r = read_xml(doc, {}, limits);
  return r ? "(well-formed)" : r.error().what;
}

TEST(XmlTest, WellFormedDocumentsAndEvents) {
  std::vector<std::string> seen;
  XmlEvents events{
      .start =
          [&](const XmlStart& e) {
            std::string line = std::to_string(e.depth) + "<" + std::string(e.name);
            for (const auto& a : e.attributes) line += " " + std::string(a.name) + "=" + a.value;
            seen.push_back(line);
            return Status{};
          },
      .end =
          [&](std::string_view name, size_t depth) {
            seen.push_back(std::to_string(depth) + "/" + std::string(name));
            return Status{};
          },
  };
  std::string doc =
      "\xEF\xBB\xBF<?xml version='1.0' encoding=\"utf-8\" standalone='yes'?>\n"
      "<!-- a comment --><?style sheet?>\n"
      "<r a=\"x &amp; &#x41;&#66;\tz\" b='&quot;&apos;&lt;&gt;'>text<![CDATA[<not markup> & ]]>"
      "<e/><ns:f\n k = \"v\" >\xC3\xA9</ns:f ></r>\n<!-- after -->\n";
  ASSERT_TRUE(read_xml(doc, events)) << read_xml(doc, events).error().what;
  std::vector<std::string> expected = {"1<r a=x & AB z b=\"'<>", "2<e", "2/e", "2<ns:f k=v", "2/ns:f", "1/r"};
  seen.clear();
  ASSERT_TRUE(read_xml(doc, events));
  EXPECT_EQ(seen, expected);
}

// The "billion laughs": ten entities each ten times the one before. The
// DOCTYPE is refused before any entity is declared, let alone expanded.
TEST(XmlTest, BillionLaughsIsRefusedAtTheDoctype) {
  std::string doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n";
  for (int i = 1; i <= 9; ++i) {
    doc += " <!ENTITY lol" + std::to_string(i) + " \"";
    for (int k = 0; k < 10; ++k) doc += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
    doc += "\">\n";
  }
  doc += "]>\n<lolz>&lol9;</lolz>\n";
  EXPECT_EQ(error_of(doc), "byte 22: a DOCTYPE is refused (no DTD or entity declarations)");
}

TEST(XmlTest, ExternalEntitiesAndUndefinedEntitiesAreRefused) {
  EXPECT_EQ(error_of("<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>"),
            "byte 0: a DOCTYPE is refused (no DTD or entity declarations)");
  EXPECT_EQ(error_of("<r><!ENTITY x \"y\"></r>"),
            "byte 3: an ENTITY declaration is refused (no DTD or entity declarations)");
  EXPECT_EQ(error_of("<r>&x;</r>"),
            "byte 3: undefined entity &x; (only &amp; &lt; &gt; &quot; &apos; and character references: there is no DTD)");
  EXPECT_EQ(error_of("<r a=\"&lol9;\"/>"),
            "byte 6: undefined entity &lol9; (only &amp; &lt; &gt; &quot; &apos; and character references: there is no DTD)");
  EXPECT_EQ(error_of("<r>& </r>"), "byte 3: '&' that does not start a reference");
  EXPECT_EQ(error_of("<r>&#0;</r>"), "byte 3: a character reference to a character XML does not allow");
  EXPECT_EQ(error_of("<r>&#x110000;</r>"), "byte 3: a character reference beyond U+10FFFF");
}

// Nesting is bounded and never recursive: a million levels are refused at
// the limit, without using the stack.
TEST(XmlTest, DeepNestingStopsAtTheLimit) {
  std::string deep;
  for (int i = 0; i < 1'000'000; ++i) deep += "<a>";
  EXPECT_EQ(error_of(deep), "byte 768: elements nested deeper than 256");
  std::string ok;
  for (int i = 0; i < 256; ++i) ok += "<a>";
  for (int i = 0; i < 256; ++i) ok += "</a>";
  EXPECT_EQ(error_of(ok), "(well-formed)");
  EXPECT_EQ(error_of("<a><a><a></a></a></a>", {.max_depth = 2}), "byte 6: elements nested deeper than 2");
}

TEST(XmlTest, SizeAndAttributeCountAreBounded) {
  EXPECT_EQ(error_of("<a>" + std::string(100, 'x') + "</a>", {.max_bytes = 64}),
            "a document of 107 bytes, more than the 64 bytes read");
  std::string many = "<a";
  for (int i = 0; i < 300; ++i) many += " a" + std::to_string(i) + "=\"\"";
  many += "/>";
  EXPECT_EQ(error_of(many), "byte 1948: more than 256 attributes on one element");
  EXPECT_EQ(error_of("<a x=\"1\" x=\"2\"/>"), "byte 14: attribute \"x\" appears twice on <a>");
}

TEST(XmlTest, TruncatedDocumentsAreRefused) {
  std::string doc = "<?xml version=\"1.0\"?><r a=\"1\"><b>text<!-- c --><![CDATA[x]]></b></r>";
  for (size_t n = 0; n < doc.size(); ++n) {
    auto r = read_xml(doc.substr(0, n));
    EXPECT_FALSE(r) << "prefix of " << n << " bytes was accepted";
  }
  EXPECT_EQ(error_of(doc), "(well-formed)");
  EXPECT_EQ(error_of("<r><b>"), "byte 6: truncated: element <b> is not closed");
  EXPECT_EQ(error_of("<r a=\"1"), "byte 7: truncated: an attribute value is not closed");
  EXPECT_EQ(error_of(""), "byte 0: no root element");
}

TEST(XmlTest, EncodingsOtherThanUtf8AreRefused) {
  EXPECT_EQ(error_of("<r>\xE9</r>"), "byte 3: not valid UTF-8");
  EXPECT_EQ(error_of("<r>\xC0\xAF</r>"), "byte 3: not valid UTF-8");  // overlong '/'
  EXPECT_EQ(error_of(std::string("<r>\0</r>", 8)), "byte 3: a character XML does not allow (U+0000)");
  EXPECT_EQ(error_of("<r>\x1B</r>"), "byte 3: a character XML does not allow (U+001B)");
  EXPECT_EQ(error_of("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r/>"),
            "byte 29: encoding \"ISO-8859-1\" is not supported (UTF-8 only)");
  EXPECT_EQ(error_of(std::string("\xFF\xFE<\0r\0/\0>\0", 10)), "byte 0: not valid UTF-8");  // UTF-16
}

TEST(XmlTest, MalformedStructureIsRefused) {
  EXPECT_EQ(error_of("<a></b>"), "byte 6: end tag </b> does not match <a>");
  EXPECT_EQ(error_of("<a/><b/>"), "byte 4: a second root element");
  EXPECT_EQ(error_of("<a/>x"), "byte 4: text after the root element");
  EXPECT_EQ(error_of("x<a/>"), "byte 0: text before the root element");
  EXPECT_EQ(error_of("<a b=1/>"), "byte 5: a quoted attribute value expected");
  EXPECT_EQ(error_of("<a b=\"<\"/>"), "byte 6: '<' inside an attribute value");
  EXPECT_EQ(error_of("<a>]]></a>"), "byte 3: ']]>' in character data");
  EXPECT_EQ(error_of("<a><!-- x -- y --></a>"), "byte 3: '--' inside a comment");
  EXPECT_EQ(error_of("<a/><?xml version=\"1.0\"?>"), "byte 9: an XML declaration that is not at the start");
  EXPECT_EQ(error_of("<a b=\"1\"c=\"2\"/>"), "byte 8: a space is expected before an attribute");
  EXPECT_EQ(error_of("<1a/>"), "byte 1: a name was expected");
}

// An event handler can stop the walk; its error comes back unchanged.
TEST(XmlTest, EventsCanStopTheWalk) {
  XmlEvents events{.start = [](const XmlStart& e) -> Status {
    if (e.name == "stop") return fail("stopped at <stop>");
    return {};
  }};
  auto r = read_xml("<a><b/><stop/><c/></a>", events);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what, "stopped at <stop>");
}

}  // namespace
}  // namespace airlock::validate
