// Workspace snapshot manifests: canonical form, digest, strict parsing.
#include <gtest/gtest.h>

#include "base/sha256.h"
#include "workspace/snapshot_manifest.h"

namespace airlock::workspace {
namespace {

const std::string kSha = std::string(64, 'a');

std::vector<SnapshotEntry> sample() {
  return {
      {.path = "src/main.py", .kind = SnapshotKind::kFile, .mode = 0644, .size = 3, .sha256 = kSha},
      {.path = "src", .kind = SnapshotKind::kDir, .mode = 0755},
      {.path = "src-old", .kind = SnapshotKind::kDir, .mode = 0700},
      {.path = "link", .kind = SnapshotKind::kSymlink, .target = "/etc/passwd"},
      {.path = "run.sh", .kind = SnapshotKind::kFile, .mode = 0755, .size = 10, .sha256 = kSha},
  };
}

TEST(SnapshotManifest, CanonicalJsonIsSortedCompactAndStable) {
  auto m = SnapshotManifest::from_entries(sample());
  ASSERT_TRUE(m) << m.error().what;
  const std::string expected =
      R"({"entries":[)"
      R"({"kind":"symlink","path":"link","target":"/etc/passwd"},)"
      R"({"kind":"file","mode":"0755","path":"run.sh","sha256":")" + kSha + R"(","size":10},)"
      R"({"kind":"dir","mode":"0755","path":"src"},)"
      R"({"kind":"file","mode":"0644","path":"src/main.py","sha256":")" + kSha + R"(","size":3},)"
      R"({"kind":"dir","mode":"0700","path":"src-old"}],"version":1})";
  EXPECT_EQ(m->to_json(), expected);
  EXPECT_EQ(m->digest(), "sha256:" + Sha256::of(expected));
  EXPECT_EQ(m->total_bytes(), 13u);
  EXPECT_EQ(m->contents(), std::vector<std::string>{kSha});

  // Any input order, and a round trip through the text, give the same digest.
  auto reversed = sample();
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(SnapshotManifest::from_entries(reversed)->digest(), m->digest());
  auto parsed = SnapshotManifest::from_json(expected);
  ASSERT_TRUE(parsed) << parsed.error().what;
  EXPECT_EQ(parsed->digest(), m->digest());
  // Whitespace and key order in the input do not matter: the digest is of the canonical form.
  auto spaced = SnapshotManifest::from_json(
      R"({ "version": 1, "entries": [ {"path": "d", "mode": "0755", "kind": "dir"} ] })");
  ASSERT_TRUE(spaced) << spaced.error().what;
  EXPECT_EQ(spaced->to_json(), R"({"entries":[{"kind":"dir","mode":"0755","path":"d"}],"version":1})");
  EXPECT_EQ(SnapshotManifest().to_json(), R"({"entries":[],"version":1})");
}

TEST(SnapshotManifest, ADirectorysSubtreeFollowsIt) {
  EXPECT_TRUE(snapshot_path_less("a", "a/b"));
  EXPECT_TRUE(snapshot_path_less("a/b", "a-c"));
  EXPECT_TRUE(snapshot_path_less("a/z/z", "a-c"));
  EXPECT_FALSE(snapshot_path_less("a", "a"));
}

std::string parse_error(const std::string& entries, const std::string& version = "1") {
  auto m = SnapshotManifest::from_json(R"({"version":)" + version + R"(,"entries":[)" + entries + "]}");
  return m ? std::string("parsed") : m.error().what;
}

TEST(SnapshotManifest, StrictParsingNamesTheProblem) {
  const std::string f = R"({"kind":"file","mode":"0644","path":"a","sha256":")" + kSha + R"(","size":1})";
  EXPECT_EQ(parse_error(f), "parsed");
  EXPECT_EQ(SnapshotManifest::from_json("{").error().what, "manifest is not valid JSON");
  EXPECT_EQ(SnapshotManifest::from_json("[]").error().what, "manifest is not a JSON object");
  EXPECT_EQ(parse_error("", "2"), "manifest version is not 1");
  EXPECT_NE(SnapshotManifest::from_json(R"({"version":1,"entries":[],"x":1})").error().what.find(
                "unknown field \"x\""),
            std::string::npos);
  struct Case {
    std::string entry, error;
  };
  const std::vector<Case> cases = {
      {R"({"kind":"dir","mode":"0755","path":"../etc"})", "entry 0 (\"../etc\"): path:"},
      {R"({"kind":"dir","mode":"0755","path":"/etc"})", "entry 0 (\"/etc\"): path:"},
      {R"({"kind":"dir","mode":"0755","path":"a//b"})", "path:"},
      {R"({"kind":"dir","mode":"0755","path":"a/.."})", "path:"},
      {R"({"kind":"dir","mode":"755","path":"a"})", "mode is not a string of 4 octal digits"},
      {R"({"kind":"dir","mode":"4755","path":"a"})", "mode is not a string of 4 octal digits"},
      {R"({"kind":"dir","mode":493,"path":"a"})", "mode is not a string of 4 octal digits"},
      {R"({"kind":"fifo","path":"a"})", "kind \"fifo\" is not dir, file or symlink"},
      {R"({"kind":"dir","mode":"0755","path":"a","size":1})", "unknown field \"size\""},
      {R"({"kind":"dir","path":"a"})", "missing \"mode\""},
      {R"({"kind":"file","mode":"0644","path":"a","sha256":"abc","size":1})",
       "sha256 is not 64 lower-case hex"},
      {R"({"kind":"file","mode":"0644","path":"a","sha256":")" + kSha + R"(","size":-1})",
       "size is not a whole number"},
      {R"({"kind":"file","mode":"0644","path":"a","sha256":")" + kSha + R"(","size":1.5})",
       "size is not a whole number"},
      {R"({"kind":"symlink","path":"l","target":"a\nb"})", "target: holds a byte that is not printable"},
      {R"({"kind":"symlink","path":"l","target":""})", "target: empty"},
      {R"({"kind":"symlink","path":"l","target":"x","mode":"0777"})", "unknown field \"mode\""},
      {R"({"kind":"file","mode":"0644","path":"d/a","sha256":")" + kSha + R"(","size":1})",
       "its directory \"d\" is not a dir entry before it"},
      {f + "," + f, "entry 1 (\"a\"): listed twice"},
      {R"({"kind":"dir","mode":"0755","path":"b"},{"kind":"dir","mode":"0755","path":"a"})",
       "entry 1 (\"a\"): out of order"},
      {f + R"(,{"kind":"dir","mode":"0755","path":"a/b"})", "its directory \"a\" is not a dir entry"},
      {"7", "entry 0: not an object"},
  };
  for (const auto& c : cases) {
    std::string error = parse_error(c.entry);
    EXPECT_NE(error.find(c.error), std::string::npos) << c.entry << " -> " << error;
  }
}

TEST(SnapshotManifest, FromEntriesRefusesWhatFromJsonRefuses) {
  auto bad = sample();
  bad.push_back({.path = "src/../x", .kind = SnapshotKind::kDir, .mode = 0755});
  EXPECT_FALSE(SnapshotManifest::from_entries(bad));
  auto setuid = sample();
  setuid[1].mode = 04755;
  EXPECT_NE(SnapshotManifest::from_entries(setuid).error().what.find("bits beyond 0777"), std::string::npos);
}

}  // namespace
}  // namespace airlock::workspace
