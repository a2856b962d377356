// What a job prints is shown inert on a terminal: every sequence a terminal
// would act on comes out as a visible escape.
#include "base/terminal_text.h"

#include <gtest/gtest.h>

namespace airlock {
namespace {

TEST(TerminalText, PlainTextNewlinesAndTabsPassUnchanged) {
  EXPECT_EQ(terminal_safe("rows 3\n\tnorth,10\r\n"), "rows 3\n\tnorth,10\r\n");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(TerminalText, EscapeAndCsiSequencesAreShownNotActedOn) {
  // Clear the screen and home the cursor; hide what follows (SGR 8).
  EXPECT_EQ(terminal_safe("\x1b[2J\x1b[H\x1b[8m"), "\\x1b[2J\\x1b[H\\x1b[8m");
  EXPECT_EQ(terminal_safe("a\x07"
                          "b\x08"
                          "c\x7f"),
            "a\\x07b\\x08c\\x7f");
  EXPECT_EQ(terminal_safe(std::string("nul\0x", 5)), "nul\\x00x");
}

TEST(TerminalText, OscTitleAndClipboardWritesAreShownNotActedOn) {
  // OSC 0 sets the window title; OSC 52 writes the operator's clipboard.
  EXPECT_EQ(terminal_safe("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(terminal_safe("\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x1b\\"),
            "\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x1b\\");
}

TEST(TerminalText, C1ControlsInUtf8AreEscaped) {
  // U+009B is a CSI on its own, U+009D an OSC: no ESC byte needed.
  EXPECT_EQ(terminal_safe("\xc2\x9b"
                          "2J"),
            "\\u009b2J");
  EXPECT_EQ(terminal_safe("\xc2\x9d"
                          "52;c;eA==\xc2\x9c"),
            "\\u009d52;c;eA==\\u009c");
  EXPECT_EQ(terminal_safe("\xc2\x80\xc2\x9f\xc2\xa0"), "\\u0080\\u009f\xc2\xa0");  // U+00A0 is text
}

TEST(TerminalText, BareCarriageReturnCannotOverwriteALine) {
  // "failed" overwritten by "succeeded" on a terminal, unless CR is shown.
  EXPECT_EQ(terminal_safe("outcome: failed\routcome: succeeded\n"),
            "outcome: failed\\x0doutcome: succeeded\n");
  EXPECT_EQ(terminal_safe("end\r"), "end\\x0d");
}

TEST(TerminalText, BidiControlsThatReorderALineAreEscaped) {
  EXPECT_EQ(terminal_safe("x\xe2\x80\xae"
                          "deliaf"),
            "x\\u202edeliaf");
  EXPECT_EQ(terminal_safe("\xe2\x81\xa6"
                          "a\xe2\x81\xa9"),
            "\\u2066a\\u2069");
}

TEST(TerminalText, InvalidUtf8IsShownByteByByte) {
  EXPECT_EQ(terminal_safe("\x9b"
                          "2J"),
            "\\x9b2J");                                         // a raw 8-bit CSI
  EXPECT_EQ(terminal_safe("\xc0\x9b"), "\\xc0\\x9b");           // overlong form of ESC-like
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminal_safe("\xe2\x82"), "\\xe2\\x82");  // cut short
}

TEST(TerminalText, OneLineFormEscapesNewlinesAndTabsToo) {
  // A name inside a message cannot start a forged line of its own.
  EXPECT_EQ(terminal_safe("x.csv\nairlock: job j1 succeeded\t", Newlines::kEscape),
            "x.csv\\x0aairlock: job j1 succeeded\\x09");
  EXPECT_EQ(terminal_safe("a\r\nb", Newlines::kEscape), "a\\x0d\\x0ab");
}

TEST(TerminalText, QuotedTextIsOneInertLine) {
  // A data request's why that would print a line like airlock's own.
  EXPECT_EQ(quoted_text("the export\nairlock: exec x1 ended: ok"), "the export\\x0aairlock: exec x1 ended: ok");
  EXPECT_EQ(quoted_text("\x1b]0;t\x07\r\t\xc2\x9b"), "\\x1b]0;t\\x07\\x0d\\x09\\u009b");
  EXPECT_EQ(quoted_text("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(TerminalText, NoOutputOfAnyByteContainsAControlByte) {
  std::string every;
  for (int b = 0; b < 256; ++b) every += static_cast<char>(b);
  for (int b = 0x80; b < 0xA0; ++b) every += "\xc2" + std::string(1, static_cast<char>(b));
  for (char c : terminal_safe(every, Newlines::kEscape)) {
    auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b >= 0x20 && b < 0x7F) << "byte " << int(b);  // ASCII in, so ASCII out
  }
}

TEST(TerminalStream, SequencesSplitBetweenPiecesAreJudgedWhole) {
  TerminalStream s;
  // U+009B split after its lead byte: neither half may pass raw.
  EXPECT_EQ(s.feed("a\xc2"), "a");
  EXPECT_EQ(s.feed("\x9b"
                   "2J"),
            "\\u009b2J");
  // A CR LF split in two is a line end; a CR followed by text is not.
  EXPECT_EQ(s.feed("x\r"), "x");
  EXPECT_EQ(s.feed("\ny\r"), "\r\ny");
  EXPECT_EQ(s.feed("z"), "\\x0dz");
  // A valid character split in three.
  EXPECT_EQ(s.feed("\xf0\x9f"), "");
  EXPECT_EQ(s.feed("\x98"), "");
  EXPECT_EQ(s.feed("\x80!"), "\xf0\x9f\x98\x80!");
}

TEST(TerminalStream, AnUnfinishedTailIsEscapedWhenTheStreamEnds) {
  TerminalStream s;
  EXPECT_EQ(s.feed("ok\xe2\x82"), "ok");
  EXPECT_EQ(s.finish(), "\\xe2\\x82");
  EXPECT_EQ(s.feed("last\r"), "last");
  EXPECT_EQ(s.finish(), "\\x0d");
  EXPECT_EQ(s.finish(), "");
}

TEST(TerminalStream, ALeadByteFollowedByTextIsNotHeldBack) {
  TerminalStream s;
  EXPECT_EQ(s.feed("\xc2"
                   "a"),
            "\\xc2a");
  EXPECT_EQ(s.feed("\xc2"), "");
  EXPECT_EQ(s.feed("\x1b"), "\\xc2\\x1b");
}

}  // namespace
}  // namespace airlock
