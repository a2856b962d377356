#include "workspace/live_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"
#include "sys/syscalls.h"
#include "workspace/copy_hashing.h"
#include "workspace/file_type.h"
#include "workspace/names.h"

namespace airlock::workspace {
namespace {

std::unexpected<FileError> error(const std::string& code, const std::string& message) {
  return std::unexpected(FileError{code, message});
}

std::unexpected<FileError> errno_error(const std::string& path, const std::string& what) {
  int e = errno;
  if (e == ENOENT) return error("not_found", "\"" + printable(path) + "\" does not exist");
  if (e == ELOOP || e == EXDEV) return error("bad_path", "\"" + printable(path) + "\" passes through a symlink or mount");
  if (e == ENOTDIR) return error("not_a_directory", "a part of \"" + printable(path) + "\" is not a directory");
  if (e == ENOSPC || e == EDQUOT) return error("too_large", "the workspace is full");
  return error("internal", what + " \"" + printable(path) + "\": " + std::strerror(e));
}

std::optional<FileError> check_path(const std::string& path) {
  if (auto why = check_workspace_path(path)) return FileError{"bad_path", "path \"" + printable(path) + "\": " + *why};
  return std::nullopt;
}

// Opens (making if `create`) each directory of `dirs` in turn beneath `root_fd`.
FileResult<UniqueFd> open_dirs(int root_fd, const std::string& dirs, bool create, uid_t uid, gid_t gid) {
  UniqueFd dir(::openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return errno_error(".", "open the workspace");
  size_t start = 0;
  while (start < dirs.size()) {
    size_t slash = dirs.find('/', start);
    std::string part = dirs.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? dirs.size() : slash + 1;
    auto next = sys::open_beneath(dir.get(), part, O_RDONLY | O_DIRECTORY);
    if (!next && next.error().err == ENOENT && create) {
      if (::mkdirat(dir.get(), part.c_str(), 0755) < 0 && errno != EEXIST) return errno_error(dirs, "make");
      next = sys::open_beneath(dir.get(), part, O_RDONLY | O_DIRECTORY);
      if (next && ::fchown(next->get(), uid, gid) < 0) return errno_error(dirs, "chown");
    }
    if (!next) {
      // O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR: name it as what it is.
      struct stat st {};
      bool is_link = ::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      errno = is_link ? ELOOP : next.error().err;
      return errno_error(dirs, "open");
    }
    dir = std::move(*next);
  }
  return dir;
}

std::pair<std::string, std::string> split(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

}  // namespace

FileResult<std::string> put_file(int root_fd, const std::string& path, int source_fd, uid_t uid, gid_t gid) {
  if (auto e = check_path(path)) return std::unexpected(*e);
  auto [dirs, name] = split(path);
  auto dir = open_dirs(root_fd, dirs, true, uid, gid);
  if (!dir) return std::unexpected(dir.error());
  std::string temp = ".airlock-upload-" + std::to_string(std::random_device{}());
  UniqueFd out(::openat(dir->get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out) return errno_error(path, "create");
  auto cleanup = [&] { ::unlinkat(dir->get(), temp.c_str(), 0); };
  if (::lseek(source_fd, 0, SEEK_SET) < 0) {
    cleanup();
    return errno_error(path, "rewind the upload for");
  }
  auto copied = copy_hashing(source_fd, out.get(), UINT64_MAX, /*keep=*/0);
  if (!copied || !*copied) {
    cleanup();
    if (!copied && (copied.error().err == ENOSPC || copied.error().err == EDQUOT))
      return error("too_large", "the workspace is full");
    return error("internal", "write \"" + printable(path) + "\": " + (copied ? "changed while copied" : copied.error().message()));
  }
  if (::fchown(out.get(), uid, gid) < 0 || ::fchmod(out.get(), 0644) < 0) {
    cleanup();
    return errno_error(path, "chown");
  }
  if (::renameat(dir->get(), temp.c_str(), dir->get(), name.c_str()) < 0) {
    int e = errno;
    cleanup();
    if (e == EISDIR || e == ENOTEMPTY || e == EEXIST) return error("not_a_file", "\"" + printable(path) + "\" is a directory");
    errno = e;
    return errno_error(path, "rename into place");
  }
  return (*copied)->sha256;
}

FileResult<Listing> list_dir(int root_fd, const std::string& path, size_t max_entries) {
  if (!path.empty())
    if (auto e = check_path(path)) return std::unexpected(*e);
  auto dir = open_dirs(root_fd, path, false, 0, 0);
  if (!dir) return std::unexpected(dir.error());
  DIR* d = ::fdopendir(::dup(dir->get()));
  if (!d) return errno_error(path, "list");
  Listing out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (out.entries.size() >= max_entries) {
      out.truncated = true;
      break;
    }
    struct stat st {};
    if (::fstatat(dir->get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;  // removed meanwhile
    out.entries.push_back({printable(n), kind_of(st.st_mode), static_cast<uint64_t>(st.st_size),
                           static_cast<int64_t>(st.st_mtime)});
  }
  ::closedir(d);
  std::sort(out.entries.begin(), out.entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

FileResult<Downloaded> read_checked(int root_fd, const std::string& path, const OutputPolicy& policy,
                                    const std::string& copy_dir) {
  if (auto e = check_path(path)) return std::unexpected(*e);
  auto [dirs, name] = split(path);
  auto dir = open_dirs(root_fd, dirs, false, 0, 0);
  if (!dir) return std::unexpected(dir.error());
  // O_NONBLOCK: a fifo planted under the name must not hang the download.
  auto file = sys::open_beneath(dir->get(), name, O_RDONLY | O_NONBLOCK);
  if (!file) {
    errno = file.error().err;
    return errno_error(path, "open");
  }
  struct stat st {};
  if (::fstat(file->get(), &st) < 0) return errno_error(path, "stat");
  if (!S_ISREG(st.st_mode)) return error("not_a_file", "\"" + printable(path) + "\" is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > policy.max_file_bytes)
    return error("too_large", "\"" + printable(path) + "\": " + std::to_string(st.st_size) +
                                  " bytes, more than the output limit of " + std::to_string(policy.max_file_bytes));
  UniqueFd copy(::open(copy_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!copy) return error("internal", "make a copy in " + copy_dir + ": " + std::strerror(errno));
  auto copied = copy_hashing(file->get(), copy.get(), policy.max_file_bytes, /*keep=*/0);
  if (!copied) return error("internal", "copy \"" + printable(path) + "\": " + copied.error().message());
  if (!*copied) return error("too_large", "\"" + printable(path) + "\" grew over the output limit while read");
  FileType type = FileType::kText;
  if ((*copied)->size > 0) {
    void* map = ::mmap(nullptr, (*copied)->size, PROT_READ, MAP_PRIVATE, copy.get(), 0);
    if (map == MAP_FAILED) return error("internal", std::string("map the copy: ") + std::strerror(errno));
    type = detect_type(std::string_view(static_cast<const char*>(map), (*copied)->size));
    ::munmap(map, (*copied)->size);
  }
  if (!policy.allowed.count(type))
    return error("type_not_allowed", "\"" + printable(path) + "\": type " + std::string(type_name(type)) +
                                         " is not allowed out (allowed: " + describe_types(policy.allowed) + ")");
  if (::lseek(copy.get(), 0, SEEK_SET) < 0) return error("internal", std::string("rewind the copy: ") + std::strerror(errno));
  Downloaded d;
  d.copy = std::move(copy);
  d.size = (*copied)->size;
  d.sha256 = std::move((*copied)->sha256);
  d.type = std::string(type_name(type));
  return d;
}

FileResult<void> remove_path(int root_fd, const std::string& path) {
  if (auto e = check_path(path)) return std::unexpected(*e);
  auto [dirs, name] = split(path);
  auto dir = open_dirs(root_fd, dirs, false, 0, 0);
  if (!dir) return std::unexpected(dir.error());
  struct stat st {};
  if (::fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return errno_error(path, "stat");
  if (S_ISDIR(st.st_mode)) {
    auto sub = sys::open_beneath(dir->get(), name, O_RDONLY | O_DIRECTORY);
    if (!sub) {
      errno = sub.error().err;
      return errno_error(path, "open");
    }
    if (auto st2 = sys::empty_dir(sub->get(), 256); !st2) return error("internal", "remove \"" + printable(path) + "\": " + st2.error().message());
    if (::unlinkat(dir->get(), name.c_str(), AT_REMOVEDIR) < 0) return errno_error(path, "remove");
    return {};
  }
  if (::unlinkat(dir->get(), name.c_str(), 0) < 0) return errno_error(path, "remove");
  return {};
}

}  // namespace airlock::workspace
