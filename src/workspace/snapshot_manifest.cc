#include "workspace/snapshot_manifest.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "workspace/content_dir.h"
#include "workspace/names.h"

namespace airlock::workspace {
namespace {

constexpr int kVersion = 1;
constexpr size_t kMaxTargetBytes = 4095;
constexpr uint64_t kMaxFileBytes = 1ull << 40;  // keeps every sum of sizes far from overflow

std::string octal_mode(uint32_t mode) {
  std::string out = "0000";
  for (int i = 3; i >= 1; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>('0' + (mode & 7));
    mode >>= 3;
  }
  return out;
}

std::optional<uint32_t> parse_mode(const std::string& text) {
  if (text.size() != 4 || text[0] != '0') return std::nullopt;
  uint32_t mode = 0;
  for (size_t i = 1; i < 4; ++i) {
    if (text[i] < '0' || text[i] > '7') return std::nullopt;
    mode = mode * 8 + static_cast<uint32_t>(text[i] - '0');
  }
  return mode;
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string describe(size_t index, const std::string& path) {
  return "entry " + std::to_string(index) + (path.empty() ? "" : " (\"" + printable(path) + "\")");
}

// Checks one entry's fields (not its place among the others).
std::optional<std::string> check_entry(const SnapshotEntry& e) {
  if (auto bad = check_workspace_path(e.path)) return "path: " + *bad;
  if (e.mode & ~0777u) return "mode " + std::to_string(e.mode) + " has bits beyond 0777";
  switch (e.kind) {
    case SnapshotKind::kDir:
      if (e.size || !e.sha256.empty() || !e.target.empty()) return "a dir has only path and mode";
      break;
    case SnapshotKind::kFile:
      if (!is_sha256_hex(e.sha256)) return "sha256 is not 64 lower-case hex characters";
      if (e.size > kMaxFileBytes) return "size is over " + std::to_string(kMaxFileBytes) + " bytes";
      if (!e.target.empty()) return "a file has no target";
      break;
    case SnapshotKind::kSymlink:
      if (auto bad = check_symlink_target(e.target)) return "target: " + *bad;
      if (e.mode || e.size || !e.sha256.empty()) return "a symlink has only path and target";
      break;
  }
  return std::nullopt;
}

// Fails unless every key of `object` is in `allowed` and every key in
// `required` is present.
std::optional<std::string> check_keys(const nlohmann::json& object,
                                      std::initializer_list<const char*> required) {
  for (const char* key : required)
    if (!object.contains(key)) return std::string("missing \"") + key + "\"";
  for (const auto& [key, value] : object.items()) {
    (void)value;
    if (std::find_if(required.begin(), required.end(), [&](const char* k) { return key == k; }) ==
        required.end())
      return "unknown field \"" + printable(key) + "\"";
  }
  return std::nullopt;
}

Result<SnapshotEntry> parse_entry(const nlohmann::json& j, size_t index) {
  if (!j.is_object()) return fail(describe(index, "") + ": not an object");
  SnapshotEntry e;
  auto path = j.find("path");
  if (path == j.end() || !path->is_string())
    return fail(describe(index, "") + ": \"path\" is missing or not a string");
  e.path = path->get<std::string>();
  const std::string where = describe(index, e.path);
  auto kind = j.find("kind");
  if (kind == j.end() || !kind->is_string())
    return fail(where + ": \"kind\" is missing or not a string");
  const std::string kind_text = kind->get<std::string>();
  std::optional<std::string> bad;
  if (kind_text == "dir") {
    e.kind = SnapshotKind::kDir;
    bad = check_keys(j, {"path", "kind", "mode"});
  } else if (kind_text == "file") {
    e.kind = SnapshotKind::kFile;
    bad = check_keys(j, {"path", "kind", "mode", "size", "sha256"});
  } else if (kind_text == "symlink") {
    e.kind = SnapshotKind::kSymlink;
    bad = check_keys(j, {"path", "kind", "target"});
  } else {
    return fail(where + ": kind \"" + printable(kind_text) + "\" is not dir, file or symlink");
  }
  if (bad) return fail(where + ": " + *bad);
  if (j.contains("mode")) {
    const auto& m = j["mode"];
    auto mode = m.is_string() ? parse_mode(m.get<std::string>()) : std::nullopt;
    if (!mode) return fail(where + ": mode is not a string of 4 octal digits like \"0644\"");
    e.mode = *mode;
  }
  if (j.contains("size")) {
    if (!j["size"].is_number_unsigned()) return fail(where + ": size is not a whole number >= 0");
    e.size = j["size"].get<uint64_t>();
  }
  if (j.contains("sha256")) {
    if (!j["sha256"].is_string()) return fail(where + ": sha256 is not a string");
    e.sha256 = j["sha256"].get<std::string>();
  }
  if (j.contains("target")) {
    if (!j["target"].is_string()) return fail(where + ": target is not a string");
    e.target = j["target"].get<std::string>();
  }
  if (auto why = check_entry(e)) return fail(where + ": " + *why);
  return e;
}

// Checks sorted entries against each other: no duplicates, parents listed.
Status check_tree(const std::vector<SnapshotEntry>& entries) {
  std::set<std::string> dirs;
  for (size_t i = 0; i < entries.size(); ++i) {
    const SnapshotEntry& e = entries[i];
    if (i > 0 && !snapshot_path_less(entries[i - 1].path, e.path))
      return fail(describe(i, e.path) + (entries[i - 1].path == e.path
                                             ? ": listed twice"
                                             : ": out of order (entries are sorted by path)"));
    std::string parent = parent_of(e.path);
    if (!parent.empty() && !dirs.contains(parent))
      return fail(describe(i, e.path) + ": its directory \"" + printable(parent) +
                  "\" is not a dir entry before it");
    if (e.kind == SnapshotKind::kDir) dirs.insert(e.path);
  }
  return {};
}

}  // namespace

std::string_view to_string(SnapshotKind kind) {
  switch (kind) {
    case SnapshotKind::kDir: return "dir";
    case SnapshotKind::kFile: return "file";
    case SnapshotKind::kSymlink: return "symlink";
  }
  return "?";
}

bool snapshot_path_less(std::string_view a, std::string_view b) {
  // '/' sorts before every byte a name may hold, so "a/b" < "a-c".
  auto key = [](char c) { return c == '/' ? 0 : static_cast<unsigned char>(c); };
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [&](char x, char y) { return key(x) < key(y); });
}

std::optional<std::string> check_symlink_target(std::string_view target) {
  if (target.empty()) return "empty";
  if (target.size() > kMaxTargetBytes)
    return "longer than " + std::to_string(kMaxTargetBytes) + " bytes";
  for (char c : target)
    if (c < 0x20 || c > 0x7e) return "holds a byte that is not printable ASCII";
  return std::nullopt;
}

Result<SnapshotManifest> SnapshotManifest::from_entries(std::vector<SnapshotEntry> entries) {
  if (entries.size() > kMaxEntries)
    return fail("more than " + std::to_string(kMaxEntries) + " entries");
  for (size_t i = 0; i < entries.size(); ++i)
    if (auto why = check_entry(entries[i])) return fail(describe(i, entries[i].path) + ": " + *why);
  std::sort(entries.begin(), entries.end(), [](const SnapshotEntry& a, const SnapshotEntry& b) {
    return snapshot_path_less(a.path, b.path);
  });
  if (auto st = check_tree(entries); !st) return std::unexpected(st.error());
  return SnapshotManifest(std::move(entries));
}

Result<SnapshotManifest> SnapshotManifest::from_json(std::string_view text) {
  if (text.size() > kMaxJsonBytes)
    return fail("manifest is larger than " + std::to_string(kMaxJsonBytes) + " bytes");
  auto j = parse_json_or_discarded(text);
  if (j.is_discarded()) return fail("manifest is not valid JSON");
  if (!j.is_object()) return fail("manifest is not a JSON object");
  if (auto bad = check_keys(j, {"version", "entries"})) return fail("manifest: " + *bad);
  if (!j["version"].is_number_unsigned() || j["version"].get<uint64_t>() != kVersion)
    return fail("manifest version is not " + std::to_string(kVersion));
  const auto& list = j["entries"];
  if (!list.is_array()) return fail("manifest entries are not an array");
  if (list.size() > kMaxEntries)
    return fail("manifest has more than " + std::to_string(kMaxEntries) + " entries");
  std::vector<SnapshotEntry> entries;
  entries.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    auto e = parse_entry(list[i], i);
    if (!e) return std::unexpected(e.error());
    entries.push_back(std::move(*e));
  }
  if (auto st = check_tree(entries); !st) return fail("manifest " + st.error().what);
  return SnapshotManifest(std::move(entries));
}

std::string SnapshotManifest::to_json() const {
  // nlohmann::json keeps object keys sorted: the output is canonical.
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries_) {
    nlohmann::json j{{"path", e.path}, {"kind", to_string(e.kind)}};
    switch (e.kind) {
      case SnapshotKind::kDir:
        j["mode"] = octal_mode(e.mode);
        break;
      case SnapshotKind::kFile:
        j["mode"] = octal_mode(e.mode);
        j["size"] = e.size;
        j["sha256"] = e.sha256;
        break;
      case SnapshotKind::kSymlink:
        j["target"] = e.target;
        break;
    }
    list.push_back(std::move(j));
  }
  return nlohmann::json{{"version", kVersion}, {"entries", std::move(list)}}.dump();
}

std::string SnapshotManifest::digest() const { return "sha256:" + Sha256::of(to_json()); }

uint64_t SnapshotManifest::total_bytes() const {
  uint64_t total = 0;
  for (const auto& e : entries_) total += e.size;
  return total;
}

std::vector<std::string> SnapshotManifest::contents() const {
  std::set<std::string> out;
  for (const auto& e : entries_)
    if (e.kind == SnapshotKind::kFile) out.insert(e.sha256);
  return {out.begin(), out.end()};
}

}  // namespace airlock::workspace
