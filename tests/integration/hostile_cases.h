// The hostile suite's cases as data (tests/hostile/README.md): parsing a
// case's header, checking a job record against its verdict, and checking the
// host for what a job left behind. Used by the suite through `airlock run`
// (hostile_test.cc) and through the API (service_hostile_test.cc).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::testing::hostile {

std::filesystem::path cases_dir();  // tests/hostile/cases
std::filesystem::path data_dir();   // tests/hostile/data

// HOSTILE_PROFILE=compute: every case runs under that profile. A case whose
// verdict differs there says so with "<profile>-<key>" headers (e.g.
// "compute-expect-stdout"), which then replace the plain key.
std::string profile_name();

struct Case {
  std::string file;  // e.g. read_etc_shadow.py
  std::string test_name;
  std::map<std::string, std::vector<std::string>> header;

  // Under a profile, "<profile>-<key>" replaces "<key>"; a case that has
  // "<profile>-expect-outcome" gives its whole verdict there, so its plain
  // expect-* keys do not apply under that profile.
  std::vector<std::string> all(const std::string& key) const {
    const std::string p = profile_name();
    auto it = header.find(p + "-" + key);
    if (!p.empty() && it == header.end() && key.starts_with("expect-") && header.count(p + "-expect-outcome"))
      return {};
    if (p.empty() || it == header.end()) it = header.find(key);
    return it == header.end() ? std::vector<std::string>{} : it->second;
  }
  std::optional<std::string> one(const std::string& key) const {
    auto values = all(key);
    if (values.empty()) return std::nullopt;
    return values.back();
  }
};

void PrintTo(const Case& c, std::ostream* os);

std::vector<std::string> split_words(const std::string& s);
std::vector<std::string> split_alternatives(const std::string& s);
std::string lower(std::string s);
// Header: the leading comment lines; "# key: value" (key of [a-z-]), other
// comment lines are prose. A "#!" line is skipped.
Case parse_case(const std::filesystem::path& path);
std::vector<Case> load_cases();  // every .py and .sh case, by file name

std::string read_file(const std::filesystem::path& p);
std::string text_of(const nlohmann::json& record, const char* stream);  // a stream's exact bytes

// The record against the case's expect-* headers (outcome, reason, stdout,
// stderr, limits, signal, exit code, truncation, output verdicts).
void expect_verdict(const Case& c, const nlohmann::json& record, const std::string& context);

// Mount lines of this process's mount table that name airlock.
std::vector<std::string> airlock_mounts();
// No process of the job's host uid, no mount of it (or new since
// `mounts_before`), no cgroup named after its record id is left.
void expect_nothing_left(const nlohmann::json& record, const std::vector<std::string>& mounts_before,
                         const std::string& context);

}  // namespace airlock::testing::hostile
