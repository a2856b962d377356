// What an archive check refuses (docs/checks.md, "archive"): the decisions on
// member names, kinds, counts, sizes and compression ratio, as pure functions.
// The walk over a real archive (libarchive, in a confined child process) is
// archive_scan.h; it asks these rules before and while it reads each member,
// and stops at the first refusal.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::validate {

struct ArchiveBounds {
  uint64_t max_members = 1000;
  uint64_t max_member_bytes = 64ull << 20;   // one member, uncompressed
  uint64_t max_total_bytes = 256ull << 20;   // all members, uncompressed
  double max_ratio = 100;                    // uncompressed bytes / archive bytes read
  uint64_t ratio_floor_bytes = 1 << 20;      // the ratio is judged past this much output
  // With types: each member is typed on its content (workspace/file_type.h),
  // which is held whole for that, up to this size.
  uint64_t typed_member_bytes = 16 << 20;
  // How deep archives may nest: a member that is itself an archive (ZIP, tar,
  // gzip, and the compressed formats the walk does not read) is refused at
  // this depth; above it, it is held whole (at most typed_member_bytes) and
  // walked with the same rules, its members and bytes counted in the bounds.
  uint64_t max_depth = 0;
};

enum class MemberKind { kFile, kDirectory, kSymlink, kHardlink, kDevice, kFifo, kSocket, kOther };
std::string_view kind_name(MemberKind kind);

struct ArchiveMember {
  std::string name;
  MemberKind kind = MemberKind::kFile;
  uint64_t size = 0;
  std::string sha256;  // hex, files only
  std::string type;    // file_type name when the check names member types
};

// A member name the check accepts: not empty, no NUL or control character, not
// absolute (`/x`, `C:\x`, `\\host`), no backslash, no `..` component. The
// error says which rule it broke.
Status check_member_name(std::string_view name);

// The name members are compared by for duplicates: "./a//b/" is "a/b".
std::string normalized_member_name(std::string_view name);

// Only files and directories are members an application can take out.
Status check_member_kind(MemberKind kind);

// Counts what has been admitted so far and answers at each step.
class ArchiveTally {
 public:
  explicit ArchiveTally(const ArchiveBounds& bounds) : bounds_(bounds) {}
  // A new member's header: its name, kind and declared size.
  Status admit(std::string_view name, MemberKind kind, std::optional<uint64_t> declared_size);
  // `n` more bytes of the current member were read out, after `archive_bytes`
  // bytes of the archive itself were consumed.
  Status add_bytes(uint64_t n, uint64_t archive_bytes);
  // The tally of a nested archive's walk: the same bounds, counting on from
  // this one's members and bytes (its names and ratio are its own).
  ArchiveTally nested() const;
  // After that walk: its members and bytes are this archive's too, and the
  // ratio is judged again on everything that came out so far.
  Status adopt(const ArchiveTally& inner, uint64_t archive_bytes);
  uint64_t members() const { return members_; }
  uint64_t total_bytes() const { return total_; }

 private:
  const ArchiveBounds& bounds_;
  std::set<std::string> names_;
  uint64_t members_ = 0, member_bytes_ = 0, total_ = 0;
  uint64_t level_bytes_ = 0;  // what came out of this archive and the archives in it, for the ratio
};

// The ratio rule alone: refused when more than ratio_floor_bytes came out and
// out > max_ratio * in.
Status check_ratio(uint64_t out_bytes, uint64_t archive_bytes, const ArchiveBounds& bounds);

}  // namespace airlock::validate
