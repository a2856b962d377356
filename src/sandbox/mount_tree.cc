#include "sandbox/mount_tree.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/syscalls.h"

namespace airlock::sandbox {
namespace {

Step make_dir(const char* path) {
  if (::mkdir(path, 0755) < 0 && errno != EEXIST) return step_failed("create a directory in the sandbox root");
  return {};
}

Step make_file(const char* path, mode_t mode) {
  int fd = ::open(path, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return step_failed("create a file in the sandbox root");
  ::close(fd);
  return {};
}

Step write_entry(const FileEntry& f) {
  int fd = ::open(f.path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, f.mode);
  if (fd < 0) return step_failed("write a file of the synthetic /etc");
  const char* p = f.content.data();
  size_t left = f.content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto failed = step_failed("write a file of the synthetic /etc");
      ::close(fd);
      return failed;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::close(fd);
  return {};
}

Step bind(const BindMount& b) {
  AIRLOCK_TRY_STEP(b.is_file ? make_file(b.target.c_str(), 0444) : make_dir(b.target.c_str()));
  unsigned long flags = MS_BIND | (b.recursive ? MS_REC : 0);
  AIRLOCK_STEP("bind a host path into the sandbox",
               ::mount(b.source.c_str(), b.target.c_str(), nullptr, flags, nullptr));
  return {};
}

}  // namespace

Step build_root(const SandboxSpec& spec) {
  AIRLOCK_STEP("make all mounts private", ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr));
  AIRLOCK_STEP("mount the root tmpfs",
               ::mount("tmpfs", spec.root_mountpoint.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                       spec.root_tmpfs_options.c_str()));
  AIRLOCK_STEP("enter the new root", ::chdir(spec.root_mountpoint.c_str()));
  for (const auto& d : spec.dirs) AIRLOCK_TRY_STEP(make_dir(d.c_str()));
  for (const auto& f : spec.files) AIRLOCK_TRY_STEP(write_entry(f));
  for (const auto& s : spec.symlinks)
    AIRLOCK_STEP("create a symlink in the sandbox root", ::symlink(s.link_target.c_str(), s.path.c_str()));
  for (const auto& b : spec.binds) AIRLOCK_TRY_STEP(bind(b));
  for (const auto& a : spec.attach) {
    AIRLOCK_TRY_STEP(a.is_file ? make_file(a.target.c_str(), 0444) : make_dir(a.target.c_str()));
    AIRLOCK_STEP("attach a host-made mount", ::move_mount(a.fd, "", AT_FDCWD, a.target.c_str(),
                                                MOVE_MOUNT_F_EMPTY_PATH));
  }
  return {};
}

Step pivot_into_root() {
  // pivot_root(".", ".") stacks the old root on top of the new one; detaching
  // it leaves only the new tree (as in pivot_root(2), NOTES).
  if (auto st = sys::pivot_root(".", "."); !st) {
    errno = st.error().err;
    return step_failed("pivot_root into the sandbox root");
  }
  AIRLOCK_STEP("detach the host root", ::umount2(".", MNT_DETACH));
  AIRLOCK_STEP("chdir /", ::chdir("/"));
  return {};
}

Step mount_proc(const SandboxSpec& spec) {
  // Runs before pivot_root (cwd = new root, paths relative): the kernel lets a
  // user namespace mount proc only while a fully visible proc is still in its
  // mount namespace.
  AIRLOCK_STEP("mount /proc", ::mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr));
  for (const auto& f : spec.proc_mask_files) {
    if (::mount("dev/null", f.c_str() + 1, nullptr, MS_BIND, nullptr) < 0 && errno != ENOENT)
      return step_failed("mask a /proc file");
  }
  for (const auto& d : spec.proc_mask_dirs) {
    if (::mount("tmpfs", d.c_str() + 1, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=0,mode=0555") < 0 &&
        errno != ENOENT)
      return step_failed("mask a /proc directory");
  }
  for (const auto& r : spec.proc_readonly) {
    if (::mount(r.c_str() + 1, r.c_str() + 1, nullptr, MS_BIND | MS_REC, nullptr) < 0) {
      if (errno == ENOENT) continue;
      return step_failed("bind a /proc path read-only");
    }
  }
  return {};
}

Step seal_readonly(const SandboxSpec& spec) {
  constexpr unsigned long long kAll = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
  auto set = [](const char* path, unsigned flags, unsigned long long on,
                unsigned long long off) -> Step {
    if (auto st = sys::mount_setattr(AT_FDCWD, path, flags, on, off); !st) {
      errno = st.error().err;
      return step_failed("set mount attributes");
    }
    return {};
  };
  AIRLOCK_TRY_STEP(set("/", AT_RECURSIVE, kAll, 0));
  for (const auto& b : spec.binds) {
    // Device nodes keep working only where nodev is not set.
    unsigned long long extra = (b.noexec ? MOUNT_ATTR_NOEXEC : 0) |
                               (b.target.rfind("dev/", 0) == 0 ? 0 : MOUNT_ATTR_NODEV);
    if (extra) AIRLOCK_TRY_STEP(set(b.target.c_str(), AT_RECURSIVE, extra, 0));
  }
  for (const auto& a : spec.attach) {
    if (a.writable) AIRLOCK_TRY_STEP(set(a.target.c_str(), 0, 0, MOUNT_ATTR_RDONLY));
  }
  return {};
}

}  // namespace airlock::sandbox
