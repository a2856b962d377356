#include "validate/archive_scan.h"

#include <memory>

#include "base/sha256.h"
#include "validate/libarchive.h"
#include "validate/text.h"
#include "workspace/file_type.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

constexpr size_t kPiece = 64 << 10;

// Every call below goes through the table loaded once (validate/libarchive.h);
// new_reader() is the only way to a reader, and it loads the table first.
const LibArchive& la() { return **libarchive(); }

struct ArchiveDeleter {
  void operator()(struct archive* a) const { la().read_free(a); }
};
using ArchivePtr = std::unique_ptr<struct archive, ArchiveDeleter>;

// Only the formats the check is for: ZIP (its central directory, as unzip and
// Python read it) and tar (ustar, pax, GNU), the latter optionally gzipped.
Result<ArchivePtr> new_reader() {
  auto lib = libarchive();
  if (!lib) return std::unexpected(lib.error());
  const LibArchive& l = **lib;
  ArchivePtr a(l.read_new());
  if (!a) return fail("archive_read_new failed");
  if (l.support_format_zip_seekable(a.get()) != ARCHIVE_OK || l.support_format_tar(a.get()) != ARCHIVE_OK ||
      l.support_filter_gzip(a.get()) != ARCHIVE_OK)
    return fail(std::string("libarchive setup: ") + (l.error_string(a.get()) ?: "?"));
  return a;
}

MemberKind kind_of(struct archive_entry* e) {
  if (la().entry_hardlink(e) != nullptr) return MemberKind::kHardlink;
  switch (la().entry_filetype(e)) {
    case AE_IFREG: return MemberKind::kFile;
    case AE_IFDIR: return MemberKind::kDirectory;
    case AE_IFLNK: return MemberKind::kSymlink;
    case AE_IFCHR:
    case AE_IFBLK: return MemberKind::kDevice;
    case AE_IFIFO: return MemberKind::kFifo;
    case AE_IFSOCK: return MemberKind::kSocket;
    default: return MemberKind::kOther;
  }
}

std::string archive_error(struct archive* a) {
  const char* s = la().error_string(a);
  return printable(s ? s : "unknown libarchive error", 300, false);
}

bool is_rels(std::string_view name) { return name.ends_with(".rels"); }

Result<ArchiveScan> walk(struct archive* a, const ArchiveBounds& bounds, const ArchiveScanOptions& options) {
  ArchiveScan scan;
  ArchiveTally tally(bounds);
  size_t rels_total = 0;
  std::unique_ptr<char[]> buf(new char[kPiece]);
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = la().next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (scan.format.empty() && la().format_name(a)) scan.format = la().format_name(a);
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      scan.refused = scan.members.empty() && tally.members() == 0
                         ? "not a readable ZIP or tar archive: " + archive_error(a)
                         : "after member " + std::to_string(tally.members()) + ": " + archive_error(a);
      return scan;
    }
    const char* raw = la().entry_pathname(e);
    std::string name = raw ? raw : "";
    MemberKind kind = kind_of(e);
    std::optional<uint64_t> declared;
    if (la().entry_size_is_set(e) && la().entry_size(e) >= 0)
      declared = static_cast<uint64_t>(la().entry_size(e));
    if (auto s = tally.admit(name, kind, declared); !s) {
      scan.refused = s.error().what;
      return scan;
    }
    if (la().entry_is_encrypted(e)) {
      scan.refused = "member " + in_quotes(name, 200) + " is encrypted";
      return scan;
    }
    ArchiveMember m{name, kind, 0, "", ""};
    if (kind == MemberKind::kFile) {
      Sha256 digest;
      bool keep_text = options.keep_rels && is_rels(name);
      bool keep_type = options.type_members;
      std::string held;
      for (;;) {
        la_ssize_t n = la().read_data(a, buf.get(), kPiece);
        if (n == 0) break;
        if (n < 0) {
          scan.refused = "member " + in_quotes(name, 200) + ": " + archive_error(a);
          return scan;
        }
        auto got = static_cast<uint64_t>(n);
        m.size += got;
        if (auto s = tally.add_bytes(got, static_cast<uint64_t>(la().filter_bytes(a, -1))); !s) {
          scan.refused = "member " + in_quotes(name, 200) + ": " + s.error().what;
          return scan;
        }
        std::string_view piece(buf.get(), got);
        digest.update(piece);
        if (keep_text) {
          if (held.size() + got > options.rels_bytes || rels_total + got > options.rels_total_bytes) {
            scan.refused = "member " + in_quotes(name, 200) + ": a relationships part over " +
                           std::to_string(options.rels_bytes) + " bytes (or all of them over " +
                           std::to_string(options.rels_total_bytes) + ")";
            return scan;
          }
          rels_total += got;
        }
        if (keep_type && held.size() + got > bounds.typed_member_bytes) {
          scan.refused = "member " + in_quotes(name, 200) + ": over " + std::to_string(bounds.typed_member_bytes) +
                         " bytes, too large to have its type checked";
          return scan;
        }
        if (keep_text || keep_type) held.append(piece);
      }
      m.sha256 = digest.hex_digest();
      if (keep_type) m.type = std::string(workspace::type_name(workspace::detect_type(held)));
      if (keep_text) scan.rels.emplace_back(name, std::move(held));
    }
    scan.members.push_back(std::move(m));
  }
  if (scan.format.empty() && la().format_name(a)) scan.format = la().format_name(a);
  return scan;
}

}  // namespace

Result<ArchiveScan> scan_archive_memory(std::string_view bytes, const ArchiveBounds& bounds,
                                        const ArchiveScanOptions& options) {
  auto a = new_reader();
  if (!a) return std::unexpected(a.error());
  if (la().open_memory(a->get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    return ArchiveScan{.refused = "not a readable ZIP or tar archive: " + archive_error(a->get())};
  return walk(a->get(), bounds, options);
}

Result<ArchiveScan> scan_archive_fd(int fd, const ArchiveBounds& bounds, const ArchiveScanOptions& options) {
  auto a = new_reader();
  if (!a) return std::unexpected(a.error());
  if (la().open_fd(a->get(), fd, kPiece) != ARCHIVE_OK)
    return ArchiveScan{.refused = "not a readable ZIP or tar archive: " + archive_error(a->get())};
  return walk(a->get(), bounds, options);
}

json scan_to_json(const ArchiveScan& scan) {
  json members = json::array();
  for (const auto& m : scan.members) {
    json o = {{"name", m.name}, {"kind", kind_name(m.kind)}, {"size", m.size}};
    if (!m.sha256.empty()) o["sha256"] = m.sha256;
    if (!m.type.empty()) o["type"] = m.type;
    members.push_back(std::move(o));
  }
  json rels = json::array();
  for (const auto& [name, text] : scan.rels) rels.push_back({{"name", name}, {"text", text}});
  json j = {{"format", scan.format}, {"members", members}, {"rels", rels}};
  if (scan.refused) j["refused"] = *scan.refused;
  return j;
}

namespace {

std::optional<MemberKind> kind_from_name(std::string_view s) {
  for (MemberKind k : {MemberKind::kFile, MemberKind::kDirectory, MemberKind::kSymlink, MemberKind::kHardlink,
                       MemberKind::kDevice, MemberKind::kFifo, MemberKind::kSocket, MemberKind::kOther})
    if (kind_name(k) == s) return k;
  return std::nullopt;
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

Result<ArchiveScan> scan_from_json(const json& j, const ArchiveBounds& bounds) {
  auto bad = [](const std::string& why) { return fail("the archive reader's answer is malformed: " + why); };
  if (!j.is_object() || !j.contains("members") || !j["members"].is_array() || !j.value("format", json()).is_string())
    return bad("not an object with format and members");
  ArchiveScan scan;
  scan.format = j["format"].get<std::string>();
  if (j["members"].size() > bounds.max_members) return bad("more members than max_members");
  for (const auto& o : j["members"]) {
    if (!o.is_object() || !o.value("name", json()).is_string() || !o.value("kind", json()).is_string() ||
        !o.value("size", json()).is_number_unsigned())
      return bad("a member without name, kind and size");
    auto kind = kind_from_name(o["kind"].get<std::string>());
    if (!kind) return bad("a member of an unknown kind");
    ArchiveMember m{o["name"].get<std::string>(), *kind, o["size"].get<uint64_t>(), "", ""};
    if (o.contains("sha256")) {
      if (!o["sha256"].is_string() || !is_hex64(o["sha256"].get<std::string>())) return bad("a malformed sha256");
      m.sha256 = o["sha256"].get<std::string>();
    }
    if (o.contains("type")) {
      if (!o["type"].is_string() || !workspace::type_from_name(o["type"].get<std::string>())) return bad("an unknown type");
      m.type = o["type"].get<std::string>();
    }
    scan.members.push_back(std::move(m));
  }
  if (j.contains("rels")) {
    if (!j["rels"].is_array()) return bad("rels is not an array");
    for (const auto& r : j["rels"]) {
      if (!r.is_object() || !r.value("name", json()).is_string() || !r.value("text", json()).is_string())
        return bad("a rels entry without name and text");
      scan.rels.emplace_back(r["name"].get<std::string>(), r["text"].get<std::string>());
    }
  }
  if (j.contains("refused")) {
    if (!j["refused"].is_string()) return bad("refused is not a string");
    scan.refused = j["refused"].get<std::string>();
  }
  return scan;
}

json bounds_to_json(const ArchiveBounds& b) {
  return {{"max_members", b.max_members},         {"max_member_bytes", b.max_member_bytes},
          {"max_total_bytes", b.max_total_bytes}, {"max_ratio", b.max_ratio},
          {"ratio_floor_bytes", b.ratio_floor_bytes}, {"typed_member_bytes", b.typed_member_bytes}};
}

Result<ArchiveBounds> bounds_from_json(const json& j) {
  if (!j.is_object()) return fail("archive bounds: not an object");
  ArchiveBounds b;
  for (auto [key, slot] : {std::pair{"max_members", &b.max_members}, std::pair{"max_member_bytes", &b.max_member_bytes},
                           std::pair{"max_total_bytes", &b.max_total_bytes},
                           std::pair{"ratio_floor_bytes", &b.ratio_floor_bytes},
                           std::pair{"typed_member_bytes", &b.typed_member_bytes}}) {
    if (!j.value(key, json()).is_number_unsigned()) return fail(std::string("archive bounds: ") + key);
    *slot = j[key].get<uint64_t>();
  }
  if (!j.value("max_ratio", json()).is_number() || !(j["max_ratio"].get<double>() > 0))
    return fail("archive bounds: max_ratio");
  b.max_ratio = j["max_ratio"].get<double>();
  return b;
}

}  // namespace airlock::validate
