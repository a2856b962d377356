#include "validate/zip_layout.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "validate/libarchive.h"
#include "validate/text.h"

namespace airlock::validate {
namespace {

constexpr uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50;
constexpr uint32_t kEnd64 = 0x06064b50, kLocator64 = 0x07064b50, kDescriptor = 0x08074b50;
constexpr size_t kEndBytes = 22, kMaxComment = 65535;
constexpr uint64_t kMaxDirectoryBytes = 64ull << 20;
constexpr uint16_t kFlagEncrypted = 0x0001, kFlagDescriptor = 0x0008, kFlagUtf8 = 0x0800;
constexpr uint16_t kMethodDeflate = 8;
constexpr size_t kInflatePiece = 64 << 10;

std::unexpected<Error> zip_refuse(std::string why) {
  return fail(ErrorKind::kRefused, std::move(why));
}

// Little-endian fields of a header held in a string.
struct LeFields {
  std::string_view bytes;
  size_t at = 0;
  bool ok = true;
  uint64_t take(size_t n) {
    if (at + n > bytes.size()) {
      ok = false;
      at = bytes.size();
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    at += n;
    return v;
  }
  std::string_view span(size_t n) {
    if (at + n > bytes.size()) {
      ok = false;
      at = bytes.size();
      return {};
    }
    std::string_view v = bytes.substr(at, n);
    at += n;
    return v;
  }
};

uint32_t le32(std::string_view s, size_t at) {
  LeFields f{s, at};
  return static_cast<uint32_t>(f.take(4));
}

struct ZipEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
};

std::string zip_member(const std::string& name) { return "member " + in_quotes(name, 200); }

// The extra fields of a header: the ZIP64 field (0x0001) fills the fields
// that are saturated, in the order of the spec; an Info-ZIP Unicode Path field
// (0x7075) must name the member as the header does.
Status read_extra(std::string_view extra, ZipEntry& e, bool usize_full, bool csize_full,
                  bool offset_full) {
  LeFields f{extra};
  bool need = usize_full || csize_full || offset_full, found = false;
  while (f.at + 4 <= extra.size()) {
    auto id = f.take(2), len = f.take(2);
    LeFields data{f.span(len)};
    if (!f.ok) break;  // a malformed tail: only what it would have held matters
    if (id == 0x0001) {
      found = true;
      if (usize_full) e.usize = data.take(8);
      if (csize_full) e.csize = data.take(8);
      if (offset_full) e.offset = data.take(8);
      if (!data.ok)
        return zip_refuse(zip_member(e.name) + ": a ZIP64 extra field too short for its sizes");
    } else if (id == 0x7075) {
      data.take(5);  // version, CRC-32 of the header's name
      std::string_view unicode =
          data.span(data.bytes.size() - std::min(data.bytes.size(), size_t{5}));
      if (unicode != e.name)
        return zip_refuse(zip_member(e.name) + ": a Unicode Path extra field names it " +
                          in_quotes(unicode, 200) + " (readers disagree on its name)");
    }
  }
  if (need && !found)
    return zip_refuse(zip_member(e.name) + ": saturated sizes without a ZIP64 extra field");
  return {};
}

struct ZipDirectory {
  uint64_t offset = 0, size = 0, entries = 0, end = 0;  // end: where the records after it start
};

// The end record (and its ZIP64 records): exactly one candidate whose comment ends the file.
Result<std::optional<ZipDirectory>> find_directory(uint64_t size, const ReadAt& read,
                                                   bool zip_start) {
  uint64_t tail_len = std::min<uint64_t>(size, kEndBytes + kMaxComment);
  auto tail = read(size - tail_len, tail_len);
  if (!tail) return std::unexpected(tail.error());
  std::optional<uint64_t> found;
  int candidates = 0;
  for (size_t i = tail->size() >= kEndBytes ? tail->size() - kEndBytes + 1 : 0; i-- > 0;) {
    if (le32(*tail, i) != kEnd) continue;
    LeFields f{*tail, i + 20};
    if (i + kEndBytes + f.take(2) != tail->size()) continue;
    ++candidates;
    if (!found) found = size - tail_len + i;
  }
  if (candidates == 0) {
    if (zip_start)
      return zip_refuse("a ZIP without an end-of-central-directory record (truncated?)");
    return std::optional<ZipDirectory>();
  }
  if (candidates > 1)
    return zip_refuse(
        "two end-of-central-directory records (readers would disagree on which is the archive)");
  auto rec = read(*found, kEndBytes);
  if (!rec) return std::unexpected(rec.error());
  LeFields f{*rec, 4};
  uint64_t disk = f.take(2), cd_disk = f.take(2), on_disk = f.take(2), entries = f.take(2);
  uint64_t cd_size = f.take(4), cd_offset = f.take(4);
  if (disk != 0 || cd_disk != 0 || on_disk != entries)
    return zip_refuse("a multi-disk (spanned) ZIP");
  ZipDirectory d{cd_offset, cd_size, entries, *found};
  bool saturated = entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF;
  std::string locator;
  if (*found >= 20) {
    auto l = read(*found - 20, 20);
    if (!l) return std::unexpected(l.error());
    locator = *l;
  }
  if (!locator.empty() && le32(locator, 0) == kLocator64) {
    LeFields lf{locator, 4};
    uint64_t ldisk = lf.take(4), at = lf.take(8), disks = lf.take(4);
    if (ldisk != 0 || disks != 1) return zip_refuse("a multi-disk (spanned) ZIP64");
    if (at > size || size - at < 56) return zip_refuse("a ZIP64 end record outside the file");
    auto r = read(at, 56);
    if (!r) return std::unexpected(r.error());
    LeFields rf{*r};
    if (rf.take(4) != kEnd64) return zip_refuse("the ZIP64 locator points at no ZIP64 end record");
    uint64_t rec_size = rf.take(8);
    rf.take(4);  // versions
    uint64_t rdisk = rf.take(4), rcd_disk = rf.take(4), ron_disk = rf.take(8),
             rentries = rf.take(8);
    uint64_t rcd_size = rf.take(8), rcd_offset = rf.take(8);
    if (rdisk != 0 || rcd_disk != 0 || ron_disk != rentries)
      return zip_refuse("a multi-disk (spanned) ZIP64");
    if (rec_size < 44 || at + 12 + rec_size != *found - 20)
      return zip_refuse("bytes between the ZIP64 end record and its locator");
    d = {rcd_offset, rcd_size, rentries, at};
  } else if (saturated) {
    return zip_refuse("saturated end-of-central-directory fields without ZIP64 records");
  }
  if (d.offset > d.end || d.size > d.end - d.offset)
    return zip_refuse("a central directory that runs past its end record");
  if (d.end - d.offset != d.size)
    return zip_refuse(
        std::to_string(d.end - d.offset - d.size) +
        " bytes between the central directory and its end record (they may hide headers)");
  return std::optional<ZipDirectory>(d);
}

Result<std::vector<ZipEntry>> read_directory(const ZipDirectory& d, const ReadAt& read,
                                             const ArchiveBounds& bounds) {
  if (d.entries > bounds.max_members)
    return zip_refuse("more than max_members " + std::to_string(bounds.max_members) + " members");
  if (d.size > kMaxDirectoryBytes)
    return zip_refuse("a central directory over " + std::to_string(kMaxDirectoryBytes) + " bytes");
  auto cd = read(d.offset, d.size);
  if (!cd) return std::unexpected(cd.error());
  std::vector<ZipEntry> entries;
  LeFields f{*cd};
  for (uint64_t i = 0; i < d.entries; ++i) {
    if (f.take(4) != kCentral || !f.ok)
      return zip_refuse("central directory entry " + std::to_string(i + 1) + " of " +
                        std::to_string(d.entries) + " is malformed");
    f.take(4);  // versions
    ZipEntry e;
    e.flags = static_cast<uint16_t>(f.take(2));
    e.method = static_cast<uint16_t>(f.take(2));
    f.take(4);  // time, date
    e.crc = static_cast<uint32_t>(f.take(4));
    e.csize = f.take(4);
    e.usize = f.take(4);
    uint64_t nlen = f.take(2), xlen = f.take(2), clen = f.take(2), disk = f.take(2);
    f.take(6);  // attributes
    e.offset = f.take(4);
    e.name = std::string(f.span(nlen));
    std::string_view extra = f.span(xlen);
    f.span(clen);
    if (!f.ok)
      return zip_refuse("central directory entry " + std::to_string(i + 1) +
                        " runs past the directory");
    if (disk != 0 && disk != 0xFFFF) return zip_refuse("a multi-disk (spanned) ZIP");
    if (auto s = read_extra(extra, e, e.usize == 0xFFFFFFFF, e.csize == 0xFFFFFFFF,
                            e.offset == 0xFFFFFFFF);
        !s)
      return std::unexpected(s.error());
    entries.push_back(std::move(e));
  }
  if (f.at != cd->size())
    return zip_refuse(std::to_string(cd->size() - f.at) +
                      " bytes in the central directory after its " + std::to_string(d.entries) +
                      " entries");
  return entries;
}

// How many of `csize` bytes at `offset` the deflate stream uses; nullopt when
// its output passes `max_out` first (the walk refuses such a member anyway).
Result<std::optional<uint64_t>> deflate_length(const ReadAt& read, uint64_t offset, uint64_t csize,
                                               uint64_t max_out, const std::string& name) {
  auto lib = zlib();
  if (!lib) return std::unexpected(lib.error());
  const Zlib& z = **lib;
  z_stream zs{};
  if (z.inflate_init2(&zs, -MAX_WBITS, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK)
    return fail("inflateInit2 failed");
  struct End {
    const Zlib& z;
    z_stream& zs;
    ~End() { z.inflate_end(&zs); }
  } end{z, zs};
  std::unique_ptr<unsigned char[]> out(new unsigned char[kInflatePiece]);
  std::string in;
  uint64_t fed = 0, produced = 0;
  auto no_end = [&] {
    return zip_refuse(zip_member(name) +
                      ": its deflate data does not end within its compressed size");
  };
  for (;;) {
    if (zs.avail_in == 0 && fed < csize) {
      auto piece =
          read(offset + fed, static_cast<size_t>(std::min<uint64_t>(kInflatePiece, csize - fed)));
      if (!piece) return std::unexpected(piece.error());
      in = std::move(*piece);
      fed += in.size();
      zs.next_in = reinterpret_cast<unsigned char*>(in.data());
      zs.avail_in = static_cast<unsigned>(in.size());
    }
    zs.next_out = out.get();
    zs.avail_out = kInflatePiece;
    int rc = z.inflate(&zs, Z_NO_FLUSH);
    produced += kInflatePiece - zs.avail_out;
    if (rc == Z_STREAM_END) return std::optional<uint64_t>(fed - zs.avail_in);
    bool drained = zs.avail_in == 0 && fed == csize;
    if (rc == Z_BUF_ERROR) {
      if (drained) return no_end();
      continue;
    }
    if (rc != Z_OK) return zip_refuse(zip_member(name) + ": its deflate data is corrupt");
    if (produced > max_out) return std::optional<uint64_t>();
    if (drained && zs.avail_out != 0) return no_end();
  }
}

// The bytes of a data descriptor at `at`, ending exactly at `next`, matching the entry.
bool descriptor_matches(std::string_view d, const ZipEntry& e) {
  for (bool sig : {true, false})
    for (size_t width : {size_t{4}, size_t{8}}) {
      if (d.size() != (sig ? 4u : 0u) + 4 + 2 * width) continue;
      LeFields f{d};
      if (sig && f.take(4) != kDescriptor) continue;
      if (f.take(4) == e.crc && f.take(width) == e.csize && f.take(width) == e.usize) return true;
    }
  return false;
}

}  // namespace

Result<bool> check_zip_layout(uint64_t size, const ReadAt& read, const ArchiveBounds& bounds) {
  auto head = read(0, static_cast<size_t>(std::min<uint64_t>(size, 4)));
  if (!head) return std::unexpected(head.error());
  bool zip_start = head->size() == 4 && (le32(*head, 0) == kLocal || le32(*head, 0) == kEnd);
  auto dir = find_directory(size, read, zip_start);
  if (!dir) return std::unexpected(dir.error());
  if (!*dir) return false;
  auto entries = read_directory(**dir, read, bounds);
  if (!entries) return std::unexpected(entries.error());
  std::vector<const ZipEntry*> order;
  for (const auto& e : *entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](const ZipEntry* a, const ZipEntry* b) { return a->offset < b->offset; });
  uint64_t expected = 0, inflated = 0;
  bool stop_inflating = false;
  for (size_t i = 0; i < order.size(); ++i) {
    const ZipEntry& e = *order[i];
    if (e.offset > expected)
      return zip_refuse(std::to_string(e.offset - expected) + " bytes at offset " +
                        std::to_string(expected) + " that no central directory entry covers (" +
                        (expected == 0 ? "before the first member" : "between members") +
                        "; they may hide local headers)");
    if (e.offset < expected)
      return zip_refuse(zip_member(e.name) + " overlaps the member before it");
    auto local = read(e.offset, 30);
    if (!local)
      return zip_refuse(zip_member(e.name) + ": its local header is past the end of the file");
    LeFields f{*local};
    if (f.take(4) != kLocal)
      return zip_refuse(zip_member(e.name) + ": no local header at offset " +
                        std::to_string(e.offset));
    f.take(2);  // version
    ZipEntry l;
    l.flags = static_cast<uint16_t>(f.take(2));
    l.method = static_cast<uint16_t>(f.take(2));
    f.take(4);
    l.crc = static_cast<uint32_t>(f.take(4));
    l.csize = f.take(4);
    l.usize = f.take(4);
    uint64_t nlen = f.take(2), xlen = f.take(2);
    auto rest = read(e.offset + 30, nlen + xlen);
    if (!rest)
      return zip_refuse(zip_member(e.name) + ": its local header is past the end of the file");
    l.name = rest->substr(0, nlen);
    if (l.name != e.name)
      return zip_refuse("the local header at offset " + std::to_string(e.offset) + " names " +
                        in_quotes(l.name, 200) + ", the central directory " +
                        in_quotes(e.name, 200));
    // A local ZIP64 field holds both sizes when either is saturated.
    bool local64 = l.usize == 0xFFFFFFFF || l.csize == 0xFFFFFFFF;
    if (auto s = read_extra(std::string_view(*rest).substr(nlen), l, local64, local64, false); !s)
      return std::unexpected(s.error());
    constexpr uint16_t kCompared = kFlagEncrypted | kFlagDescriptor | kFlagUtf8;
    if (l.method != e.method || (l.flags & kCompared) != (e.flags & kCompared))
      return zip_refuse(zip_member(e.name) +
                        ": its local header and the central directory differ in method or flags");
    bool descriptor = e.flags & kFlagDescriptor;
    auto same_or_zero = [&](uint64_t a, uint64_t b) { return a == b || (descriptor && a == 0); };
    if (!same_or_zero(l.crc, e.crc) || !same_or_zero(l.csize, e.csize) ||
        !same_or_zero(l.usize, e.usize))
      return zip_refuse(zip_member(e.name) +
                        ": its local header and the central directory differ in CRC or sizes");
    uint64_t data = e.offset + 30 + nlen + xlen;
    if (data > size || size - data < e.csize)
      return zip_refuse(zip_member(e.name) + ": its data runs past the end of the file");
    uint64_t next = i + 1 < order.size() ? order[i + 1]->offset : (*dir)->offset;
    uint64_t end = data + e.csize;
    if (descriptor) {
      // A streaming reader finds such a member's end by inflating it: the stream must end at its
      // compressed size.
      if (e.method != kMethodDeflate)
        return zip_refuse(zip_member(e.name) +
                          ": a data descriptor on a member that is not deflated (a streaming "
                          "reader cannot find its end)");
      if (!stop_inflating && !(e.flags & kFlagEncrypted)) {
        auto used = deflate_length(read, data, e.csize, bounds.max_member_bytes, e.name);
        if (!used) return std::unexpected(used.error());
        if (!*used)
          stop_inflating = true;  // over max_member_bytes: the walk refuses it
        else if (**used != e.csize)
          return zip_refuse(
              zip_member(e.name) + ": its deflate data ends " + std::to_string(e.csize - **used) +
              " bytes before its compressed size (bytes a streaming reader would read as headers)");
        inflated += e.usize;
        if (inflated > bounds.max_total_bytes) stop_inflating = true;  // the walk refuses the total
      }
      if (next < end || next - end > 24)
        return zip_refuse(zip_member(e.name) + ": no data descriptor where the member ends");
      auto d = read(end, next - end);
      if (!d) return std::unexpected(d.error());
      if (!descriptor_matches(*d, e))
        return zip_refuse(zip_member(e.name) +
                          ": its data descriptor does not match the central directory");
      end = next;
    }
    expected = end;
  }
  if ((*dir)->offset > expected)
    return zip_refuse(std::to_string((*dir)->offset - expected) + " bytes at offset " +
                      std::to_string(expected) +
                      " that no central directory entry covers (after the last member; they may "
                      "hide local headers)");
  if ((*dir)->offset < expected)
    return zip_refuse("the central directory overlaps the last member");
  return true;
}

}  // namespace airlock::validate
