// Which files of an image stay uncompressed: mkfs.erofs's --compress-hints
// file. Chosen when every sandbox had a superblock of its own, whose first
// exec read the loader and libc through an empty page cache (decompressing
// lz4hc for every job: most of a cold start's extra time on an image,
// docs/performance.md). Sandboxes now share one mount per image
// (sandbox/shared_image.h), so this helps the first job after a mount only;
// kept because it costs ~1% of an image and keeps that first start cheap.
// Kept plain: the loader, libc and libm, ld.so.cache, the shells and the
// Python interpreter with the libraries it needs; the rest stays lz4hc.
// The text is fixed (no build-time input), so builds stay reproducible.
#pragma once

#include <string>
#include <vector>

namespace airlock::images {

// POSIX extended regular expressions, matched by mkfs.erofs against each
// file's path in the tree (with or without a leading '/').
const std::vector<std::string>& uncompressed_patterns();

// The --compress-hints file: "0 PATTERN" per line (a physical cluster size of
// 0 tells mkfs.erofs not to compress the file; erofs-utils 1.5 and later).
std::string erofs_compress_hints();

}  // namespace airlock::images
