#include "validate/archive_scan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>

#include "base/sha256.h"
#include "validate/libarchive.h"
#include "validate/text.h"
#include "validate/tar_layout.h"
#include "validate/zip_layout.h"
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

constexpr size_t kHead = 512;                     // enough for every signature below (tar's is at 257)
constexpr size_t kZipTail = 22 + 65535;           // where a ZIP's end record may start, from the end
constexpr uint64_t kMaxDepth = 3;                 // the deepest max_depth a check may ask for

// What a member is, by its first bytes, when it is an archive or a compressed
// stream: the walk reads "ZIP", "gzip" and "tar" (and refuses the others).
std::optional<std::string_view> archive_format(std::string_view head) {
  auto starts = [&](std::string_view sig) { return head.starts_with(sig); };
  using namespace std::string_view_literals;
  if (starts("PK\x03\x04"sv) || starts("PK\x05\x06"sv) || starts("PK\x07\x08"sv)) return "ZIP";
  if (starts("\x1f\x8b"sv)) return "gzip";
  if (head.size() >= 262 && head.substr(257, 5) == "ustar") return "tar";
  if (starts("BZh"sv)) return "bzip2";
  if (starts("\xfd" "7zXZ\x00"sv)) return "xz";
  if (starts("7z\xbc\xaf\x27\x1c"sv)) return "7z";
  if (starts("Rar!\x1a\x07"sv)) return "RAR";
  if (starts("\x28\xb5\x2f\xfd"sv)) return "zstd";
  if (starts("\x5d\x00\x00"sv)) return "lzma";
  if (starts("\x1f\x9d"sv)) return "compress";
  return std::nullopt;
}

bool walkable(std::string_view format) { return format == "ZIP" || format == "gzip" || format == "tar"; }

// A ZIP's end record in the last bytes of a member (after a prefix: a
// self-extracting program, or a polyglot): its comment ends the member.
bool ends_with_zip(std::string_view tail) {
  for (size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;) {
    if (tail.substr(i, 4) != std::string_view("PK\x05\x06", 4)) continue;
    size_t comment = static_cast<unsigned char>(tail[i + 20]) | static_cast<unsigned char>(tail[i + 21]) << 8;
    if (i + 22 + comment == tail.size()) return true;
  }
  return false;
}

// Where the walk is: the depth of the archive being walked, the name of the
// member that holds it ("" at the top), the relationships text kept so far.
struct Nest {
  uint64_t depth = 0;
  std::string prefix;  // "word/embeddings/book.xlsx!/" below the top
  size_t* rels_total = nullptr;
};

Status walk(struct archive* a, const ArchiveBounds& bounds, const ArchiveScanOptions& options, ArchiveScan& scan,
            const Nest& nest, ArchiveTally& tally);

// The ZIP layout check (zip_layout.h) before libarchive reads a byte; then the walk.
Status scan_into(std::string_view bytes, int fd, uint64_t size, const ArchiveBounds& bounds,
                 const ArchiveScanOptions& options, ArchiveScan& scan, const Nest& nest, ArchiveTally& tally) {
  ReadAt read = [&](uint64_t offset, size_t n) -> Result<std::string> {
    if (offset > size || n > size - offset) return fail(ErrorKind::kRefused, "a read past the end of the archive");
    if (fd < 0) return std::string(bytes.substr(offset, n));
    std::string out(n, '\0');
    for (size_t got = 0; got < n;) {
      ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return fail_errno("read the archive");
      if (r == 0) return fail(ErrorKind::kRefused, "a read past the end of the archive");
      got += static_cast<size_t>(r);
    }
    return out;
  };
  auto zip = check_zip_layout(size, read, bounds);
  if (!zip) {
    if (zip.error().kind != ErrorKind::kRefused) return std::unexpected(zip.error());
    if (scan.format.empty() && nest.depth == 0) scan.format = "ZIP";
    return std::unexpected(zip.error());
  }
  auto r = new_reader();
  if (!r) return std::unexpected(r.error());
  int rc = fd < 0 ? la().open_memory(r->get(), bytes.data(), bytes.size()) : la().open_fd(r->get(), fd, kPiece);
  if (rc != ARCHIVE_OK) return fail(ErrorKind::kRefused, "not a readable ZIP or tar archive: " + archive_error(r->get()));
  if (auto s = walk(r->get(), bounds, options, scan, nest, tally); !s) return s;
  const char* format = la().format_name(r->get());
  // libarchive found a ZIP the layout check did not: refused, never read by one view only.
  if (!*zip && format && std::string_view(format).starts_with("ZIP"))
    return fail(ErrorKind::kRefused, "a ZIP whose layout was not checked (no local header at its start)");
  // A tar, read again as a reader that knows no pax or GNU long-name headers would read it.
  if (!*zip) return check_tar_headers(size, read, bounds.max_total_bytes + (64ull << 20));
  return {};
}

Status walk(struct archive* a, const ArchiveBounds& bounds, const ArchiveScanOptions& options, ArchiveScan& scan,
            const Nest& nest, ArchiveTally& tally) {
  std::unique_ptr<char[]> buf(new char[kPiece]);
  uint64_t listed = 0;
  auto refused = [&](std::string why) { return fail(ErrorKind::kRefused, std::move(why)); };
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = la().next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (nest.depth == 0 && scan.format.empty() && la().format_name(a)) scan.format = la().format_name(a);
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      return refused(listed == 0 && tally.members() == 0
                         ? "not a readable ZIP or tar archive: " + archive_error(a)
                         : "after member " + std::to_string(tally.members()) + ": " + archive_error(a));
    const char* raw = la().entry_pathname(e);
    std::string name = raw ? raw : "";
    MemberKind kind = kind_of(e);
    std::optional<uint64_t> declared;
    if (la().entry_size_is_set(e) && la().entry_size(e) >= 0)
      declared = static_cast<uint64_t>(la().entry_size(e));
    if (auto s = tally.admit(name, kind, declared); !s) return s;
    if (la().entry_is_encrypted(e)) return refused("member " + in_quotes(name, 200) + " is encrypted");
    ArchiveMember m{nest.prefix + name, kind, 0, "", ""};
    std::string quoted = in_quotes(name, 200);
    if (kind == MemberKind::kFile) {
      Sha256 digest;
      bool keep_text = options.keep_rels && is_rels(name);
      bool keep_type = options.type_members;
      bool may_nest = nest.depth < bounds.max_depth;
      std::string held, head, tail;
      std::optional<std::string_view> format;
      bool hold_nested = false;
      for (;;) {
        la_ssize_t n = la().read_data(a, buf.get(), kPiece);
        if (n == 0) break;
        if (n < 0) return refused("member " + quoted + ": " + archive_error(a));
        auto got = static_cast<uint64_t>(n);
        m.size += got;
        if (auto s = tally.add_bytes(got, static_cast<uint64_t>(la().filter_bytes(a, -1))); !s)
          return refused("member " + quoted + ": " + s.error().what);
        std::string_view piece(buf.get(), got);
        digest.update(piece);
        if (head.size() < kHead) {
          head.append(piece.substr(0, kHead - head.size()));
          format = archive_format(head);
          hold_nested = may_nest && (head.size() < kHead || (format && walkable(*format)));
        }
        tail.append(piece);
        if (tail.size() > 2 * kZipTail) tail.erase(0, tail.size() - kZipTail);
        if (keep_text) {
          if (held.size() + got > options.rels_bytes || *nest.rels_total + got > options.rels_total_bytes)
            return refused("member " + quoted + ": a relationships part over " + std::to_string(options.rels_bytes) +
                           " bytes (or all of them over " + std::to_string(options.rels_total_bytes) + ")");
          *nest.rels_total += got;
        }
        if (keep_type && held.size() + got > bounds.typed_member_bytes)
          return refused("member " + quoted + ": over " + std::to_string(bounds.typed_member_bytes) +
                         " bytes, too large to have its type checked");
        if (hold_nested && held.size() + got > bounds.typed_member_bytes && format && walkable(*format))
          return refused("member " + quoted + ": a nested " + std::string(*format) + " archive over " +
                         std::to_string(bounds.typed_member_bytes) + " bytes, too large to be walked");
        if (keep_text || keep_type || hold_nested) held.append(piece);
      }
      m.sha256 = digest.hex_digest();
      if (tail.size() > kZipTail) tail.erase(0, tail.size() - kZipTail);
      bool zip_at_end = !format && ends_with_zip(tail);
      if (format || zip_at_end) {
        std::string what = zip_at_end ? "ends with a ZIP directory after other data (a self-extracting or polyglot file)"
                           : *format == "ZIP"  ? "is a ZIP archive"
                           : *format == "tar"  ? "is a tar archive"
                                               : "is a " + std::string(*format) + " stream";
        if (nest.depth >= bounds.max_depth)
          return refused("member " + quoted + " " + what + ": nested archives are refused (max_depth " +
                         std::to_string(bounds.max_depth) + ")");
        if (zip_at_end || !walkable(*format))
          return refused("member " + quoted + " " + what + ", which the check does not read inside");
      }
      if (keep_type) m.type = std::string(workspace::type_name(workspace::detect_type(held)));
      if (keep_text) scan.rels.emplace_back(nest.prefix + name, held);
      scan.members.push_back(std::move(m));
      ++listed;
      if (format) {
        // The nested archive, walked within the same bounds; its members listed as "outer!/inner".
        ArchiveTally inner = tally.nested();
        Nest deeper{nest.depth + 1, nest.prefix + name + "!/", nest.rels_total};
        auto s = scan_into(held, -1, held.size(), bounds, options, scan, deeper, inner);
        if (!s) {
          if (s.error().kind != ErrorKind::kRefused) return s;
          return refused("in nested archive " + quoted + ": " + s.error().what);
        }
        if (auto t = tally.adopt(inner, static_cast<uint64_t>(la().filter_bytes(a, -1))); !t)
          return refused("after nested archive " + quoted + ": " + t.error().what);
      }
      continue;
    }
    scan.members.push_back(std::move(m));
    ++listed;
  }
  if (nest.depth == 0 && scan.format.empty() && la().format_name(a)) scan.format = la().format_name(a);
  return {};
}

Result<ArchiveScan> scan_top(std::string_view bytes, int fd, uint64_t size, const ArchiveBounds& bounds,
                             const ArchiveScanOptions& options) {
  if (auto lib = libarchive(); !lib) return std::unexpected(lib.error());
  if (bounds.max_depth > kMaxDepth) return fail("archive bounds: max_depth over " + std::to_string(kMaxDepth));
  ArchiveScan scan;
  ArchiveTally tally(bounds);
  size_t rels_total = 0;
  Nest top{0, "", &rels_total};
  auto s = scan_into(bytes, fd, size, bounds, options, scan, top, tally);
  if (!s) {
    if (s.error().kind != ErrorKind::kRefused) return std::unexpected(s.error());
    scan.refused = s.error().what;
  }
  return scan;
}

}  // namespace

Result<ArchiveScan> scan_archive_memory(std::string_view bytes, const ArchiveBounds& bounds,
                                        const ArchiveScanOptions& options) {
  return scan_top(bytes, -1, bytes.size(), bounds, options);
}

Result<ArchiveScan> scan_archive_fd(int fd, const ArchiveBounds& bounds, const ArchiveScanOptions& options) {
  struct stat st{};
  if (::fstat(fd, &st) < 0) return fail_errno("fstat the archive");
  return scan_top({}, fd, static_cast<uint64_t>(st.st_size), bounds, options);
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
          {"ratio_floor_bytes", b.ratio_floor_bytes}, {"typed_member_bytes", b.typed_member_bytes},
          {"max_depth", b.max_depth}};
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
  if (j.contains("max_depth")) {  // optional: 0, no nesting
    if (!j["max_depth"].is_number_unsigned()) return fail("archive bounds: max_depth");
    b.max_depth = j["max_depth"].get<uint64_t>();
  }
  if (!j.value("max_ratio", json()).is_number() || !(j["max_ratio"].get<double>() > 0))
    return fail("archive bounds: max_ratio");
  b.max_ratio = j["max_ratio"].get<double>();
  return b;
}

}  // namespace airlock::validate
