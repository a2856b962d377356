// libarchive, loaded with dlopen the first time an archive is read: only the
// confined `airlock inspect-archive` child (service/archive_reader.h), the
// tests and the fuzz target ever read one. Linked at build time, libarchive
// brought 13 shared libraries (ICU, libxml2, nettle, the compressors and a
// shared libstdc++) into every airlock process: about 5 ms of loading and
// relocation at each `airlock run` (docs/performance.md, "The binary's own
// start"). Only libarchive's headers are needed to build.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include "base/result.h"

namespace airlock::validate {

// The libarchive functions the archive check calls, resolved once from
// libarchive.so.13.
struct LibArchive {
  decltype(&::archive_read_new) read_new;
  decltype(&::archive_read_free) read_free;
  decltype(&::archive_read_support_format_zip_seekable) support_format_zip_seekable;
  decltype(&::archive_read_support_format_tar) support_format_tar;
  decltype(&::archive_read_support_filter_gzip) support_filter_gzip;
  decltype(&::archive_read_open_memory) open_memory;
  decltype(&::archive_read_open_fd) open_fd;
  decltype(&::archive_read_next_header) next_header;
  decltype(&::archive_read_data) read_data;
  decltype(&::archive_error_string) error_string;
  decltype(&::archive_format_name) format_name;
  decltype(&::archive_filter_bytes) filter_bytes;
  decltype(&::archive_entry_pathname) entry_pathname;
  decltype(&::archive_entry_hardlink) entry_hardlink;
  decltype(&::archive_entry_filetype) entry_filetype;
  decltype(&::archive_entry_size) entry_size;
  decltype(&::archive_entry_size_is_set) entry_size_is_set;
  decltype(&::archive_entry_is_encrypted) entry_is_encrypted;
};

// Loads libarchive.so.13 on the first call (thread-safe); the same table or
// the same error afterwards. The confined child calls it before it gives up
// open(2).
Result<const LibArchive*> libarchive();

// zlib's inflate, which the ZIP layout check (zip_layout.h) runs over members
// with a data descriptor: libz.so.1, which libarchive.so.13 loads anyway,
// resolved on the same first call as libarchive().
struct Zlib {
  decltype(&::inflateInit2_) inflate_init2;
  decltype(&::inflate) inflate;
  decltype(&::inflateEnd) inflate_end;
};
Result<const Zlib*> zlib();

}  // namespace airlock::validate
