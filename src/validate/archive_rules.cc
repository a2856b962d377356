#include "validate/archive_rules.h"

#include <cstdio>

#include "validate/text.h"

namespace airlock::validate {

std::string_view kind_name(MemberKind kind) {
  switch (kind) {
    case MemberKind::kFile: return "file";
    case MemberKind::kDirectory: return "directory";
    case MemberKind::kSymlink: return "symlink";
    case MemberKind::kHardlink: return "hard link";
    case MemberKind::kDevice: return "device";
    case MemberKind::kFifo: return "fifo";
    case MemberKind::kSocket: return "socket";
    case MemberKind::kOther: return "unknown kind";
  }
  return "unknown kind";
}

Status check_member_name(std::string_view name) {
  if (name.empty()) return fail(ErrorKind::kRefused, "a member without a name");
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f)
      return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + ": a control character in its name");
  if (name.find('\\') != std::string_view::npos)
    return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + ": a backslash in its name");
  if (name.front() == '/' || (name.size() >= 2 && name[1] == ':'))
    return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + ": an absolute path");
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string_view part = name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == "..") return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + ": a \"..\" component");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return {};
}

std::string normalized_member_name(std::string_view name) {
  std::string out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string_view part = name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (!part.empty() && part != ".") {
      if (!out.empty()) out += '/';
      out += part;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

Status check_member_kind(MemberKind kind) {
  if (kind == MemberKind::kFile || kind == MemberKind::kDirectory) return {};
  return fail(ErrorKind::kRefused, std::string("a ") + std::string(kind_name(kind)) + " (only files and directories are allowed)");
}

Status ArchiveTally::admit(std::string_view name, MemberKind kind, std::optional<uint64_t> declared_size) {
  if (members_ >= bounds_.max_members)
    return fail(ErrorKind::kRefused, "more than max_members " + std::to_string(bounds_.max_members) + " members");
  if (auto s = check_member_name(name); !s) return s;
  if (auto s = check_member_kind(kind); !s)
    return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + " is " + s.error().what);
  if (!names_.insert(normalized_member_name(name)).second)
    return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + " appears twice");
  // A declared size over a bound is refused before a byte is inflated.
  if (declared_size && *declared_size > bounds_.max_member_bytes)
    return fail(ErrorKind::kRefused, "member " + in_quotes(name, 200) + " declares " + std::to_string(*declared_size) +
                                         " bytes, more than max_member_bytes " + std::to_string(bounds_.max_member_bytes));
  ++members_;
  member_bytes_ = 0;
  return {};
}

Status check_ratio(uint64_t out_bytes, uint64_t archive_bytes, const ArchiveBounds& bounds) {
  if (out_bytes <= bounds.ratio_floor_bytes) return {};
  double in = archive_bytes == 0 ? 1 : static_cast<double>(archive_bytes);
  if (static_cast<double>(out_bytes) > bounds.max_ratio * in) {
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.0f", static_cast<double>(out_bytes) / in);
    char bound[64];
    std::snprintf(bound, sizeof bound, "%g", bounds.max_ratio);
    return fail(ErrorKind::kRefused, std::to_string(out_bytes) + " bytes came out of " + std::to_string(archive_bytes) +
                                         " bytes of archive, a ratio of " + ratio + ", more than max_ratio " + bound +
                                         " (a compression bomb?)");
  }
  return {};
}

Status ArchiveTally::add_bytes(uint64_t n, uint64_t archive_bytes) {
  member_bytes_ += n;
  total_ += n;
  level_bytes_ += n;
  if (member_bytes_ > bounds_.max_member_bytes)
    return fail(ErrorKind::kRefused, "a member is over max_member_bytes " + std::to_string(bounds_.max_member_bytes));
  if (total_ > bounds_.max_total_bytes)
    return fail(ErrorKind::kRefused, "the members are over max_total_bytes " + std::to_string(bounds_.max_total_bytes));
  return check_ratio(level_bytes_, archive_bytes, bounds_);
}

ArchiveTally ArchiveTally::nested() const {
  ArchiveTally t(bounds_);
  t.members_ = members_;
  t.total_ = total_;
  return t;
}

Status ArchiveTally::adopt(const ArchiveTally& inner, uint64_t archive_bytes) {
  level_bytes_ += inner.total_ - total_;
  members_ = inner.members_;
  total_ = inner.total_;
  return check_ratio(level_bytes_, archive_bytes, bounds_);
}

}  // namespace airlock::validate
