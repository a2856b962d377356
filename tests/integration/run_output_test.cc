// What a job's output can do to `airlock run` and its record: drive the
// operator's terminal, break --record, blow up the record's size. Each case
// runs a hostile job through the binary and checks the safe outcome.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/base64.h"
#include "base/sha256.h"
#include "jobs/record.h"
#include "run_helpers.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

json read_json(const std::string& path) { return json::parse(read_text(path), nullptr, false); }

// A job that clears the screen, sets the title, writes the clipboard (OSC 52),
// overwrites a line with a bare CR, uses C1 controls in UTF-8 and hides the
// text after it, then prints a forged summary and fails.
TEST(RunTerminal, JobOutputCannotDriveTheOperatorsTerminal) {
  TempDir dir;
  const std::string record = dir.sub("record.json");
  const std::string script =
      "printf '\\033[2J\\033[H\\033]0;owned\\007\\033]52;c;cm0gLXJmIH4=\\007'\n"
      "printf 'outcome: failed\\routcome: ok\\n'\n"
      "printf '\\302\\2332J\\302\\235' >&2\n"
      "printf 'airlock: job x succeeded (exited with status 0)\\n\\033[8m' >&2\n"
      "exit 3\n";
  OnTerminal t = run_on_terminal({AIRLOCK_BINARY, "run", "--state-dir", dir.state(), "--record",
                                  record, "--", "sh", "-c", script});
  EXPECT_EQ(t.status, 3);
  EXPECT_EQ(t.seen.find('\x1b'), std::string::npos)
      << "an ESC byte reached the terminal: " << t.seen;
  EXPECT_EQ(t.seen.find("\xc2\x9b"), std::string::npos) << "a C1 CSI reached the terminal";
  EXPECT_EQ(t.seen.find('\r'), std::string::npos) << "a bare CR reached the terminal";
  EXPECT_NE(t.seen.find("\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07"),
            std::string::npos)
      << t.seen;
  EXPECT_NE(t.seen.find("outcome: failed\\x0doutcome: ok\n"), std::string::npos) << t.seen;
  EXPECT_NE(t.seen.find("\\u009b2J\\u009d"), std::string::npos) << t.seen;
  EXPECT_NE(t.seen.find("\\x1b[8m"), std::string::npos) << t.seen;
  // airlock's own summary still comes last and tells the truth.
  auto last = t.seen.rfind("airlock: job ");
  ASSERT_NE(last, std::string::npos) << t.seen;
  EXPECT_NE(t.seen.find(" failed (the program exited with status 3)", last), std::string::npos)
      << t.seen.substr(last);

  // The record keeps the exact bytes.
  json r = read_json(record);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(
      jobs::stream_bytes(r["stdout"]),
      "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b]52;c;cm0gLXJmIH4=\x07outcome: failed\routcome: ok\n");
  EXPECT_EQ(jobs::stream_bytes(r["stderr"]),
            "\xc2\x9b"
            "2J\xc2\x9d"
            "airlock: job x succeeded (exited with status 0)\n\x1b[8m");
}

// --json on a terminal: the same document, with nothing a terminal acts on.
TEST(RunTerminal, JsonRecordOnATerminalIsInert) {
  TempDir dir;
  OnTerminal t =
      run_on_terminal({AIRLOCK_BINARY, "run", "--json", "--state-dir", dir.state(), "--", "sh",
                       "-c", "printf '\\302\\233' ; printf '\\342\\200\\256x\\177'"});
  EXPECT_EQ(t.status, 0) << t.seen;
  for (char c : t.seen) {
    auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE((b >= 0x20 && b < 0x7f) || b == '\n') << "byte " << int(b);
  }
  json r = json::parse(t.seen, nullptr, false);
  ASSERT_TRUE(r.is_object()) << t.seen;
  EXPECT_EQ(jobs::stream_bytes(r["stdout"]), "\xc2\x9b\xe2\x80\xaex\x7f");
}

// --record inside --output-dir: the job writes a directory where the record
// goes. The output is refused with the reason, the record is written.
TEST(RunRecord, OutputAtTheRecordsPathIsRefusedAndTheRecordWritten) {
  TempDir dir;
  const std::string out = dir.sub("out");
  Ran ran = run_airlock({"run", "--state-dir", dir.state(), "--output-dir", out, "--record",
                         out + "/record.json", "--", "sh", "-c",
                         "mkdir /output/record.json && echo a > /output/record.json/x.csv"});
  json r = read_json(out + "/record.json");
  ASSERT_TRUE(r.is_object()) << ran.err;
  EXPECT_EQ(r["outcome"], "output_rejected") << ran.err;
  EXPECT_NE(ran.status, 0);
  ASSERT_EQ(r["outputs"].size(), 1u) << r["outputs"].dump();
  EXPECT_EQ(r["outputs"][0]["name"], "record.json");
  EXPECT_EQ(r["outputs"][0]["verdict"], "rejected");
  EXPECT_EQ(r["outputs"][0]["reason"], "collides with the path of the job record (record.json)");
}

TEST(RunRecord, FileWhereTheRecordsDirectoryMustBeIsRefused) {
  TempDir dir;
  const std::string out = dir.sub("out");
  Ran ran = run_airlock({"run", "--state-dir", dir.state(), "--output-dir", out + "/./", "--record",
                         out + "/runs/1/record.json", "--", "sh", "-c",
                         "echo a > /output/runs; echo b > /output/t.csv"});
  json r = read_json(out + "/runs/1/record.json");
  ASSERT_TRUE(r.is_object()) << ran.err;
  EXPECT_EQ(r["outcome"], "output_rejected");
  bool refused = false;
  for (const auto& o : r["outputs"])
    if (o["name"] == "runs")
      refused =
          o["reason"] == "stands where the job record's directory must be (runs/1/record.json)";
  EXPECT_TRUE(refused) << r["outputs"].dump();
}

TEST(RunRecord, RecordThatIsTheOutputDirectoryIsAUsageError) {
  TempDir dir;
  Ran ran = run_airlock({"run", "--state-dir", dir.state(), "--output-dir", dir.sub("out"),
                         "--record", dir.sub("out/.."), "--", "true"});
  EXPECT_EQ(ran.status, 125);
  EXPECT_NE(ran.err.find("cannot be the output directory or contain it"), std::string::npos)
      << ran.err;
}

// However the record cannot be written, airlock says so and does not exit 0.
TEST(RunRecord, UnwritableRecordIsAnErrorNotSuccess) {
  TempDir dir;
  const std::string record = dir.sub("record.json");
  ASSERT_EQ(::mkdir(record.c_str(), 0755), 0);  // "Is a directory"
  Ran ran = run_airlock({"run", "--state-dir", dir.state(), "--record", record, "--", "true"});
  EXPECT_EQ(ran.status, 125) << ran.err;
  EXPECT_NE(ran.err.find("cannot write the record to " + record), std::string::npos) << ran.err;
}

// The record is bounded by the stream cap whatever the job prints, and gives
// back exactly the captured bytes: 2 MiB of random bytes, and 2 MiB of \x01
// (six bytes each as a JSON escape).
TEST(RunRecord, RecordSizeIsBoundedByTheCapAndDecodesExactly) {
  constexpr size_t kCap = 2 << 20;
  for (const char* source :
       {"head -c 3000000 /dev/urandom", "head -c 3000000 /dev/zero | tr '\\000' '\\001'"}) {
    TempDir dir;
    const std::string record = dir.sub("record.json");
    const std::string script = std::string(source) + " > /tmp/s; cat /tmp/s; head -c " +
                               std::to_string(kCap) + " /tmp/s | sha256sum >&2";
    Ran ran = run_airlock({"run", "--state-dir", dir.state(), "--stdout-cap", "2M", "--record",
                           record, "--", "sh", "-c", script});
    EXPECT_EQ(ran.status, 0) << ran.err;
    struct stat st {};
    ASSERT_EQ(::stat(record.c_str(), &st), 0);
    EXPECT_LE(static_cast<size_t>(st.st_size),
              base64_size(kCap) + jobs::kStreamTextSlack + (64 << 10))
        << source;
    json r = read_json(record);
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(r["stdout"]["encoding"], "base64");
    EXPECT_EQ(r["stdout"]["bytes"], 3000000);
    EXPECT_EQ(r["stdout"]["truncated"], true);
    auto bytes = jobs::stream_bytes(r["stdout"]);
    ASSERT_TRUE(bytes.has_value());
    EXPECT_EQ(bytes->size(), kCap);
    std::string err = jobs::stream_bytes(r["stderr"]).value_or("");
    EXPECT_EQ(err.substr(0, 64), Sha256::of(*bytes)) << source;
  }
}

}  // namespace
}  // namespace airlock::testing
