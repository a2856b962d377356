// The layout of a ZIP, checked before libarchive reads it (docs/checks.md,
// "archive"). libarchive reads a ZIP by its central directory, as unzip and
// Python do; streaming extractors (`bsdtar -xf -`, Java's ZipInputStream) read
// the local headers one after the other and never see the directory. A ZIP is
// accepted only when both views are the same archive:
//  - one end-of-central-directory record (and its ZIP64 records), ending the
//    file but for its comment; the central directory just before them;
//  - the entries, sorted by offset, tile the file from byte 0 to the central
//    directory: each local header starts where the one before ended (no
//    prefix, no gap, no overlap), names the same bytes, method and flags,
//    the same CRC and sizes (or zeros and a data descriptor that matches);
//  - a member with a data descriptor is deflated, and its deflate stream ends
//    exactly at its compressed size (where a streaming reader looks next);
//  - an Info-ZIP Unicode Path field (0x7075) names the member as its header does.
// Reads headers only, and inflates (zlib, discarding the output) only the
// members with a data descriptor, within the check's size bounds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.h"
#include "validate/archive_rules.h"

namespace airlock::validate {

// Exactly `n` bytes at `offset`; an error if the file is shorter.
using ReadAt = std::function<Result<std::string>(uint64_t offset, size_t n)>;

// false: not a ZIP (no local header at byte 0 and no end record at the end);
// true: a ZIP laid out as above; an error of kind kRefused says why the layout
// is refused ("a local header at offset 120 that the central directory does
// not name"), any other kind is a failed read.
Result<bool> check_zip_layout(uint64_t size, const ReadAt& read, const ArchiveBounds& bounds);

}  // namespace airlock::validate
