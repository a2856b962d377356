#include "jobs/outputs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "base/unique_fd.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

// Whether the directory open as `dir_fd` has no entry but "." and "..". Read
// through an open of its own: a dup would share (and move) dir_fd's offset.
Result<bool> is_empty_dir(int dir_fd) {
  UniqueFd copy(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!copy) return fail_errno("read the job's /output");
  DIR* dir = ::fdopendir(copy.get());
  if (dir == nullptr) return fail_errno("read the job's /output");
  (void)copy.release();  // closedir closes it
  bool empty = true;
  int err = 0;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(dir);
    if (e == nullptr) {
      err = errno;
      break;
    }
    std::string_view name = e->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  if (err != 0) return fail_with("read the job's /output", err);
  return empty;
}

}  // namespace

Result<std::optional<std::string>> path_inside(const std::string& dir, const std::string& path) {
  auto under = [](const std::string& parent, const std::string& child) {
    return child.size() > parent.size() && child.starts_with(parent) &&
           (parent.ends_with('/') || child[parent.size()] == '/');
  };
  if (path == dir || under(path, dir))
    return fail("the record (" + path + ") cannot be the output directory or contain it (" + dir + ")");
  if (!under(dir, path)) return std::nullopt;
  return path.substr(dir.size() + (dir.ends_with('/') ? 0 : 1));
}

Result<workspace::Collection> collect_job_outputs(int output_mount_fd, const std::string& dest_dir,
                                                  const workspace::OutputPolicy& policy) {
  UniqueFd root(::openat(output_mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return fail_errno("open the job's /output");
  // Most jobs leave /output empty: nothing to copy, and no directory is made
  // for it (an ext4 mkdir and its removal, a few hundred microseconds).
  auto empty = is_empty_dir(root.get());
  if (!empty) return std::unexpected(empty.error());
  if (*empty) return workspace::Collection{};
  if (::mkdir(dest_dir.c_str(), 0700) < 0) return fail_errno("create " + dest_dir);
  return workspace::collect_outputs(root.get(), dest_dir, policy);
}

Status publish_outputs(const std::string& collected_dir,
                       const std::vector<workspace::ManifestEntry>& outputs,
                       const std::string& output_dir) {
  if (auto st = sys::make_dirs(output_dir); !st) return st;
  for (const auto& e : outputs) {
    if (!e.accepted) continue;
    std::string dest = output_dir + "/" + e.name;
    if (auto slash = dest.rfind('/'); slash != std::string::npos)
      if (auto st = sys::make_dirs(dest.substr(0, slash)); !st) return st;
    auto data = sys::read_file(collected_dir + "/" + e.name, e.size + 1);
    if (!data) return std::unexpected(data.error());
    if (auto st = sys::write_file_atomic(dest, *data, 0644); !st) return st;
  }
  return {};
}

}  // namespace airlock::jobs
