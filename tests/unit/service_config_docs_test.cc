// docs/service.md's configuration table and the keys the configuration
// parser accepts (service/config_keys.h) name the same keys, each once: a key
// the parser takes and the table lacks is one an operator cannot find, and a
// row for a key the parser refuses documents nothing.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "service/config.h"
#include "service/config_keys.h"

namespace airlock::service {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The keys of a table row's first cell: each `...` in it that is a key's
// name (lower-case letters, digits, '_'), not a flag ("(`--role`)") or an
// environment variable (`$AIRLOCK_IMAGE_DIR`); a `[tenants.NAME]` table is its
// key "tenants".
std::vector<std::string> keys_of_cell(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at)) {
    size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    std::string word = cell.substr(at + 1, end - at - 1);
    at = end + 1;
    if (word.size() > 2 && word.front() == '[' && word.back() == ']')
      word = word.substr(1, word.size() - 2);
    word = word.substr(0, word.find('.'));
    bool key = !word.empty() && std::islower(static_cast<unsigned char>(word[0]));
    for (char ch : word)
      key = key && (std::islower(static_cast<unsigned char>(ch)) ||
                    std::isdigit(static_cast<unsigned char>(ch)) || ch == '_');
    if (key) out.push_back(word);
  }
  return out;
}

// Every key of the table under "## Configuration", with how often it has a row.
std::map<std::string, int> documented_keys(const std::string& doc) {
  std::map<std::string, int> out;
  size_t start = doc.find("\n## Configuration\n");
  if (start == std::string::npos) return out;
  size_t end = doc.find("\n## ", start + 1);
  std::istringstream section(
      doc.substr(start, end == std::string::npos ? std::string::npos : end - start));
  std::string line;
  bool header = true;  // the table's own header row, "| key | default | meaning |"
  while (std::getline(section, line)) {
    if (!line.starts_with("| ")) continue;
    size_t cell_end = line.find('|', 1);
    if (cell_end == std::string::npos) continue;
    std::string cell = line.substr(1, cell_end - 1);
    if (header) {
      header = false;
      continue;
    }
    for (const auto& key : keys_of_cell(cell)) ++out[key];
  }
  return out;
}

TEST(ServiceConfigDocs, TheTableAndTheParserNameTheSameKeysEachOnce) {
  std::string doc = read_file(std::string(AIRLOCK_SOURCE_DIR) + "/docs/service.md");
  ASSERT_FALSE(doc.empty()) << "docs/service.md not found";
  auto documented = documented_keys(doc);
  ASSERT_GT(documented.size(), 20u) << "the configuration table was not found in docs/service.md";
  const auto& parsed = config_file_keys();
  for (const auto& key : parsed)
    EXPECT_TRUE(documented.contains(key))
        << "the parser accepts '" << key
        << "', docs/service.md's configuration table has no row for it";
  for (const auto& [key, rows] : documented) {
    EXPECT_TRUE(parsed.contains(key))
        << "docs/service.md documents '" << key << "', the parser refuses it";
    EXPECT_EQ(rows, 1) << "'" << key << "' has " << rows << " rows in docs/service.md";
  }
}

TEST(ServiceConfigDocs, TheKeyListIsTheOneTheParserUses) {
  // A key outside the list is refused as unknown; one in it never is.
  auto unknown = parse_config("no_such_key = 1\n");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("unknown key"), std::string::npos);
  for (const auto& key : config_file_keys()) {
    auto r = parse_config(key + " = 1\n");  // the wrong type for most: refused, but not as unknown
    if (!r) {
      EXPECT_EQ(r.error().message().find("unknown key"), std::string::npos)
          << key << ": " << r.error().message();
    }
  }
}

TEST(ServiceConfigDocs, ACellsKeysSkipFlagsAndNameTables) {
  EXPECT_EQ(keys_of_cell(" `role` (`--role`) "), std::vector<std::string>{"role"});
  EXPECT_EQ(keys_of_cell(" `[tenants.NAME]` "), std::vector<std::string>{"tenants"});
  EXPECT_EQ(keys_of_cell(" `image_dir` (`--image-dir DIR`, `$AIRLOCK_IMAGE_DIR`) "),
            std::vector<std::string>{"image_dir"});
  EXPECT_EQ(keys_of_cell(" `a_kb`, `b_kb` "), (std::vector<std::string>{"a_kb", "b_kb"}));
  EXPECT_TRUE(keys_of_cell(" key ").empty());
}

}  // namespace
}  // namespace airlock::service
