// The raw headers of a tar (or gzipped tar), checked after libarchive has
// walked it (docs/checks.md, "archive"). libarchive, GNU tar and Python read a
// member's name and size from its pax extended header or GNU long-name header
// when there is one; a reader that knows neither (plain ustar readers) takes
// the name and size of the ustar header itself, and extracts an unknown header
// type as a file. A tar passes only when both readers would see safe members:
//  - every header's own name (prefix/name), meta headers included, obeys the
//    member-name rules (no "..", not absolute, ...);
//  - a pax "size" equals the ustar size field when that field holds one.
// Reads headers and skips data as a ustar reader does; a gzipped tar is
// inflated once more with zlib (the output discarded but for the headers),
// at most as far as the walk read.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "validate/zip_layout.h"

namespace airlock::validate {

// Refused (ErrorKind::kRefused) with the reason, or fine; other kinds are
// failed reads. `max_bytes` bounds the tar bytes it looks at.
Status check_tar_headers(uint64_t size, const ReadAt& read, uint64_t max_bytes);

}  // namespace airlock::validate
