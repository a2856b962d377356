// The walk over an archive (ZIP, tar, tar.gz) with libarchive: every member's
// header goes through ArchiveTally (archive_rules.h) before its data is read;
// data is streamed in 64 KiB pieces through SHA-256 and the size and ratio
// bounds, never inflated whole, and the walk stops at the first refusal.
// libarchive is a large C library that parses hostile bytes: the service does
// not call this in its own process but in a confined child (service/
// archive_reader.h, docs/checks.md says why). The fuzz target calls it
// directly.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "validate/archive_rules.h"

namespace airlock::validate {

struct ArchiveScanOptions {
  bool type_members = false;  // detect each file member's type (file_type.h)
  bool keep_rels = false;     // keep the text of "*.rels" members (office packages)
  size_t rels_bytes = 1 << 20;        // one .rels member
  size_t rels_total_bytes = 8 << 20;  // all of them
};

struct ArchiveScan {
  std::string format;                  // libarchive's name: "ZIP 2.0 (deflation)", "POSIX pax interchange format", ...
  std::vector<ArchiveMember> members;  // those read before a refusal, if any
  std::vector<std::pair<std::string, std::string>> rels;  // name, text
  std::optional<std::string> refused;  // the first refusal (or unreadable archive)
};

// Scans an archive held in memory (the fuzz target, tests) or open as `fd`
// (the confined child). Failures of the archive itself (not an archive, a
// corrupt member, a bound) are `refused`; an error is only for a broken call.
Result<ArchiveScan> scan_archive_memory(std::string_view bytes, const ArchiveBounds& bounds,
                                        const ArchiveScanOptions& options = {});
Result<ArchiveScan> scan_archive_fd(int fd, const ArchiveBounds& bounds, const ArchiveScanOptions& options = {});

// The child's answer on its stdout, and the parent's strict reading of it:
// the child ran hostile input, so its answer is checked for shape and bounds.
nlohmann::json scan_to_json(const ArchiveScan& scan);
Result<ArchiveScan> scan_from_json(const nlohmann::json& j, const ArchiveBounds& bounds);

nlohmann::json bounds_to_json(const ArchiveBounds& b);
Result<ArchiveBounds> bounds_from_json(const nlohmann::json& j);

}  // namespace airlock::validate
