// Capture: an iterative, bounded walk of an untrusted tree that never follows
// a link, storing regular files by content. Restore: the manifest's entries in
// order (each directory's subtree follows it directly), created beneath
// directories this code made itself.
#include "workspace/snapshot_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <memory>
#include <optional>

#include "base/check.h"
#include "sys/file_io.h"
#include "sys/syscalls.h"
#include "workspace/copy_hashing.h"
#include "workspace/names.h"

namespace airlock::workspace {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirStream = std::unique_ptr<DIR, DirCloser>;

// Calls `visit(name)` for every name in the directory `dir_fd` but "." and "..".
template <class Visit>
Status each_name(int dir_fd, const std::string& what, Visit visit) {
  UniqueFd copy(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!copy) return fail_errno("dup directory fd");
  DirStream stream(::fdopendir(copy.get()));
  if (!stream) return fail_errno("list " + what);
  copy.release();  // owned by the stream now
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(stream.get());
    if (entry == nullptr) {
      if (errno != 0) return fail_errno("list " + what);
      return {};
    }
    const std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    if (auto st = visit(name); !st) return st;
  }
}

std::string join(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "/" + std::string(name);
}

std::optional<std::string> skip_reason(mode_t mode) {
  if (S_ISFIFO(mode)) return "fifo; not captured";
  if (S_ISSOCK(mode)) return "socket; not captured";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device; not captured";
  if (!S_ISDIR(mode) && !S_ISREG(mode) && !S_ISLNK(mode)) return "unknown file type; not captured";
  return std::nullopt;
}

class Capturer {
 public:
  Capturer(const ContentDir& contents, const CaptureLimits& limits, std::vector<std::string>& created)
      : contents_(contents), limits_(limits), created_(created) {}

  Result<Capture> run(int root_dir_fd) {
    auto root = sys::open_beneath(root_dir_fd, ".", O_RDONLY | O_DIRECTORY);
    if (!root) return fail_with("open the workspace root", root.error().err);
    Frame frame{.dir = std::move(*root)};
    if (auto st = list(frame); !st) return std::unexpected(st.error());
    stack_.push_back(std::move(frame));
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      if (top.next == top.names.size()) {
        stack_.pop_back();
        continue;
      }
      const std::string name = top.names[top.next++];
      auto child = visit(top, name);  // may not push: `top` would dangle
      if (!child) return std::unexpected(child.error());
      if (*child) stack_.push_back(std::move(**child));
    }
    auto manifest = SnapshotManifest::from_entries(std::move(entries_));
    AIRLOCK_CHECK(manifest.has_value());  // every entry was checked as it was made
    return Capture{std::move(*manifest), std::move(skipped_)};
  }

 private:
  struct Frame {
    UniqueFd dir;
    std::string rel;  // "" for the root, else "a/b" (checked components)
    size_t level = 0;
    std::vector<std::string> names;
    size_t next = 0;
  };

  Status list(Frame& frame) {
    auto st = each_name(frame.dir.get(), "workspace directory", [&](std::string_view name) -> Status {
      if (++seen_ > limits_.max_entries)
        return fail("the workspace has more than " + std::to_string(limits_.max_entries) +
                    " entries (limit)");
      frame.names.emplace_back(name);
      return {};
    });
    if (!st) return st;
    std::sort(frame.names.begin(), frame.names.end());
    return {};
  }

  Result<std::optional<Frame>> visit(const Frame& parent, const std::string& name) {
    const std::string rel = join(parent.rel, name);
    if (auto bad = check_workspace_component(name)) {
      skip(rel, "bad name: " + *bad);
      return std::nullopt;
    }
    const size_t level = parent.level + 1;
    if (level > limits_.max_depth)
      return fail("workspace path \"" + printable(rel) + "\" is deeper than " +
                  std::to_string(limits_.max_depth) + " levels (limit)");
    if (auto bad = check_workspace_path(rel))
      return fail("workspace path \"" + printable(rel) + "\": " + *bad);
    struct stat st{};
    if (::fstatat(parent.dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (errno == ENOENT) {
        skip(rel, "removed while being captured");
        return std::nullopt;
      }
      return fail_errno("stat workspace path \"" + printable(rel) + "\"");
    }
    if (auto why = skip_reason(st.st_mode)) {
      skip(rel, *why);
      return std::nullopt;
    }
    if (S_ISLNK(st.st_mode)) {
      if (auto st2 = record_symlink(parent, name, rel); !st2) return std::unexpected(st2.error());
      return std::nullopt;
    }
    if (S_ISREG(st.st_mode)) {
      if (auto st2 = store_file(parent, name, rel, st); !st2) return std::unexpected(st2.error());
      return std::nullopt;
    }
    auto dir = sys::open_beneath(parent.dir.get(), name, O_RDONLY | O_DIRECTORY);
    if (!dir) return fail_with("open workspace directory \"" + printable(rel) + "\"", dir.error().err);
    struct stat opened{};
    if (::fstat(dir->get(), &opened) < 0) return fail_errno("stat workspace directory");
    if (!S_ISDIR(opened.st_mode) || !sys::same_inode(st, opened))
      return fail("workspace directory \"" + printable(rel) + "\" changed while being captured");
    entries_.push_back({.path = rel, .kind = SnapshotKind::kDir, .mode = opened.st_mode & 0777u});
    Frame frame{.dir = std::move(*dir), .rel = rel, .level = level};
    if (auto listed = list(frame); !listed) return std::unexpected(listed.error());
    return frame;
  }

  // The target is read as text and never resolved.
  Status record_symlink(const Frame& parent, const std::string& name, const std::string& rel) {
    char buf[PATH_MAX + 1];
    ssize_t n = ::readlinkat(parent.dir.get(), name.c_str(), buf, sizeof(buf));
    if (n < 0) return fail_errno("read symlink \"" + printable(rel) + "\"");
    std::string target(buf, static_cast<size_t>(n));
    if (auto bad = check_symlink_target(target)) {
      skip(rel, "symlink target " + *bad + "; not captured");
      return {};
    }
    entries_.push_back({.path = rel, .kind = SnapshotKind::kSymlink, .target = std::move(target)});
    return {};
  }

  Status store_file(const Frame& parent, const std::string& name, const std::string& rel,
                    const struct stat& seen) {
    const uint64_t room = limits_.max_bytes - std::min(total_, limits_.max_bytes);
    if (static_cast<uint64_t>(seen.st_size) > room) return over_size(rel);
    auto file = sys::open_beneath(parent.dir.get(), name, O_RDONLY | O_NONBLOCK);
    if (!file) return fail_with("open workspace file \"" + printable(rel) + "\"", file.error().err);
    struct stat opened{};
    if (::fstat(file->get(), &opened) < 0) return fail_errno("stat workspace file");
    if (!S_ISREG(opened.st_mode) || !sys::same_inode(seen, opened))
      return fail("workspace file \"" + printable(rel) + "\" changed while being captured");
    if (static_cast<uint64_t>(opened.st_size) > room) return over_size(rel);
    auto stored = contents_.put_fd(file->get(), room);
    if (!stored) {
      if (stored.error().err == EFBIG) return over_size(rel);  // grew while being read
      return fail_with("store workspace file \"" + printable(rel) + "\": " + stored.error().what,
                       stored.error().err);
    }
    if (!stored->existed) created_.push_back(stored->sha256);
    total_ += stored->size;
    entries_.push_back({.path = rel,
                        .kind = SnapshotKind::kFile,
                        .mode = opened.st_mode & 0777u,
                        .size = stored->size,
                        .sha256 = stored->sha256});
    return {};
  }

  Status over_size(const std::string& rel) {
    return fail("the workspace holds more than " + std::to_string(limits_.max_bytes) +
                " bytes of files (limit), reached at \"" + printable(rel) + "\"");
  }

  void skip(const std::string& rel, std::string reason) {
    skipped_.push_back({printable(rel), std::move(reason)});
  }

  const ContentDir& contents_;
  const CaptureLimits& limits_;
  std::vector<std::string>& created_;
  std::vector<Frame> stack_;
  std::vector<SnapshotEntry> entries_;
  std::vector<SkippedEntry> skipped_;
  size_t seen_ = 0;
  uint64_t total_ = 0;
};

Status require_empty(int dir_fd) {
  return each_name(dir_fd, "restore destination", [](std::string_view name) -> Status {
    return fail("the restore destination is not empty (it holds \"" + printable(name) + "\")");
  });
}

class Restorer {
 public:
  Restorer(const ContentDir& contents, uid_t owner, gid_t group)
      : contents_(contents), owner_(owner), group_(group) {}

  Status run(const SnapshotManifest& manifest, int dest_root_dir_fd) {
    if (auto st = require_empty(dest_root_dir_fd); !st) return st;
    for (const SnapshotEntry& e : manifest.entries()) {
      // Entries come in snapshot_path_less order, so the parent is on the
      // stack: close the directories this entry is not beneath.
      const auto slash = e.path.rfind('/');
      const std::string parent = slash == std::string::npos ? "" : e.path.substr(0, slash);
      const std::string name = slash == std::string::npos ? e.path : e.path.substr(slash + 1);
      while (!stack_.empty() && stack_.back().path != parent) stack_.pop_back();
      AIRLOCK_CHECK(!stack_.empty() || parent.empty());  // the manifest's order was checked
      const int dir = stack_.empty() ? dest_root_dir_fd : stack_.back().fd.get();
      Status st;
      switch (e.kind) {
        case SnapshotKind::kDir: st = make_dir(dir, name, e); break;
        case SnapshotKind::kFile: st = make_file(dir, name, e); break;
        case SnapshotKind::kSymlink: st = make_symlink(dir, name, e); break;
      }
      if (!st) return st;
    }
    return {};
  }

 private:
  struct Level {
    std::string path;
    UniqueFd fd;
  };

  Status make_dir(int parent, const std::string& name, const SnapshotEntry& e) {
    if (::mkdirat(parent, name.c_str(), 0700) < 0)
      return fail_errno("restore directory \"" + e.path + "\"");
    auto dir = sys::open_beneath(parent, name, O_RDONLY | O_DIRECTORY);
    if (!dir) return fail_with("open restored directory \"" + e.path + "\"", dir.error().err);
    if (::fchown(dir->get(), owner_, group_) < 0 || ::fchmod(dir->get(), e.mode) < 0)
      return fail_errno("set owner and mode of \"" + e.path + "\"");
    stack_.push_back({e.path, std::move(*dir)});
    return {};
  }

  Status make_file(int parent, const std::string& name, const SnapshotEntry& e) {
    auto in = contents_.open(e.sha256);
    if (!in) return fail_with("restore \"" + e.path + "\": " + in.error().what, in.error().err);
    struct stat st{};
    if (::fstat(in->get(), &st) < 0) return fail_errno("stat stored content " + e.sha256);
    if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != e.size)
      return fail("restore \"" + e.path + "\": stored content " + e.sha256 + " has " +
                  std::to_string(st.st_size) + " bytes, the manifest says " + std::to_string(e.size));
    UniqueFd out(::openat(parent, name.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return fail_errno("create restored file \"" + e.path + "\"");
    if (auto copied = copy_keeping_holes(in->get(), out.get(), e.size); !copied)
      return fail_with("restore \"" + e.path + "\": " + copied.error().what, copied.error().err);
    if (::fchown(out.get(), owner_, group_) < 0 || ::fchmod(out.get(), e.mode) < 0)
      return fail_errno("set owner and mode of \"" + e.path + "\"");
    return {};
  }

  Status make_symlink(int parent, const std::string& name, const SnapshotEntry& e) {
    if (::symlinkat(e.target.c_str(), parent, name.c_str()) < 0)
      return fail_errno("restore symlink \"" + e.path + "\"");
    if (::fchownat(parent, name.c_str(), owner_, group_, AT_SYMLINK_NOFOLLOW) < 0)
      return fail_errno("set owner of symlink \"" + e.path + "\"");
    return {};
  }

  const ContentDir& contents_;
  uid_t owner_;
  gid_t group_;
  std::vector<Level> stack_;
};

}  // namespace

Result<Capture> capture_tree(int root_dir_fd, const ContentDir& contents,
                             const CaptureLimits& limits, std::vector<std::string>& created) {
  return Capturer(contents, limits, created).run(root_dir_fd);
}

Status restore_tree(const SnapshotManifest& manifest, const ContentDir& contents,
                    int dest_root_dir_fd, uid_t owner, gid_t group) {
  return Restorer(contents, owner, group).run(manifest, dest_root_dir_fd);
}

}  // namespace airlock::workspace
