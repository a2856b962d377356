#include "validate/libarchive.h"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <type_traits>

namespace airlock::validate {

namespace {

std::once_flag once;
LibArchive la;
Zlib z;
std::string error;

void load_all() {
  void* h = ::dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    error = std::string("load libarchive.so.13 (install libarchive13): ") + ::dlerror();
    return;
  }
  bool ok = true;
  auto load = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
    if (!fn) ok = false;
  };
  load(la.read_new, "archive_read_new");
  load(la.read_free, "archive_read_free");
  load(la.support_format_zip_seekable, "archive_read_support_format_zip_seekable");
  load(la.support_format_tar, "archive_read_support_format_tar");
  load(la.support_filter_gzip, "archive_read_support_filter_gzip");
  load(la.open_memory, "archive_read_open_memory");
  load(la.open_fd, "archive_read_open_fd");
  load(la.next_header, "archive_read_next_header");
  load(la.read_data, "archive_read_data");
  load(la.error_string, "archive_error_string");
  load(la.format_name, "archive_format_name");
  load(la.filter_bytes, "archive_filter_bytes");
  load(la.entry_pathname, "archive_entry_pathname");
  load(la.entry_hardlink, "archive_entry_hardlink");
  load(la.entry_filetype, "archive_entry_filetype");
  load(la.entry_size, "archive_entry_size");
  load(la.entry_size_is_set, "archive_entry_size_is_set");
  load(la.entry_is_encrypted, "archive_entry_is_encrypted");
  if (!ok) {
    error = "libarchive.so.13 lacks a function airlock uses";  // the handle stays open: harmless
    return;
  }
  void* zh = ::dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!zh) {
    error = std::string("load libz.so.1 (install zlib1g): ") + ::dlerror();
    return;
  }
  auto zload = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(zh, name));
    if (!fn) ok = false;
  };
  zload(z.inflate_init2, "inflateInit2_");
  zload(z.inflate, "inflate");
  zload(z.inflate_end, "inflateEnd");
  if (!ok) error = "libz.so.1 lacks a function airlock uses";
}

}  // namespace

Result<const LibArchive*> libarchive() {
  std::call_once(once, load_all);
  if (!error.empty()) return fail(error);
  return &la;
}

Result<const Zlib*> zlib() {
  std::call_once(once, load_all);
  if (!error.empty()) return fail(error);
  return &z;
}

}  // namespace airlock::validate
