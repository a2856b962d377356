// Output collection: an iterative, bounded walk of the job's /output that
// never follows a link and never reads anything but a single-link regular
// file. Accepted files are copied, hashed and typed; everything else is
// recorded with the reason it was refused.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "sys/file_io.h"
#include "sys/syscalls.h"
#include "workspace/manifest.h"
#include "workspace/copy_hashing.h"
#include "workspace/names.h"

namespace airlock::workspace {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirStream = std::unique_ptr<DIR, DirCloser>;

// One directory being walked: its fd beneath the output root, the matching
// directory under dest_dir, and its sorted (bounded) listing.
struct Frame {
  UniqueFd dir;
  UniqueFd dest;
  std::string name;  // own name in the parent; empty for the root
  std::string rel;   // "" for the root, else "a/b/" (validated components)
  size_t level = 0;  // 0 for the root
  std::vector<std::string> names;
  size_t next = 0;
};

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "symlink; not followed";
  if (S_ISFIFO(mode)) return "fifo; not a regular file";
  if (S_ISSOCK(mode)) return "socket; not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device; not a regular file";
  return "not a regular file";
}

class Collector {
 public:
  explicit Collector(const OutputPolicy& policy) : policy_(policy) {}

  Result<Collection> run(int output_root_fd, const std::string& dest_dir) {
    auto root = sys::open_beneath(output_root_fd, ".", O_RDONLY | O_DIRECTORY);
    if (!root) return fail_with("open output root", root.error().err);
    UniqueFd dest(::open(dest_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dest) return fail_errno("open collection directory " + dest_dir);
    Frame frame{.dir = std::move(*root), .dest = std::move(dest)};
    if (auto st = list(frame); !st) return std::unexpected(st.error());
    stack_.push_back(std::move(frame));

    while (!stack_.empty()) {
      Frame& top = stack_.back();
      if (top.next == top.names.size()) {
        pop();
        continue;
      }
      const std::string name = top.names[top.next++];
      auto child = visit(top, name);  // may not push: `top` would dangle
      if (!child) return std::unexpected(child.error());
      if (*child) stack_.push_back(std::move(**child));
    }
    return std::move(out_);
  }

 private:
  // Reads the names in `frame.dir`, at most as many as the count budget
  // allows, sorted so the manifest does not depend on directory order.
  Status list(Frame& frame) {
    if (count_hit_) return {};
    UniqueFd copy(::fcntl(frame.dir.get(), F_DUPFD_CLOEXEC, 0));
    if (!copy) return fail_errno("dup output directory fd");
    DirStream stream(::fdopendir(copy.get()));
    if (!stream) return fail_errno("list output directory " + printable(frame.rel));
    copy.release();  // now owned by the stream
    for (;;) {
      errno = 0;
      const dirent* entry = ::readdir(stream.get());
      if (entry == nullptr) {
        if (errno != 0) return fail_errno("list output directory " + printable(frame.rel));
        break;
      }
      const std::string_view name(entry->d_name);
      if (name == "." || name == "..") continue;
      if (seen_ == policy_.max_count) {
        hit_count_limit(frame);
        break;
      }
      ++seen_;
      frame.names.emplace_back(name);
    }
    std::sort(frame.names.begin(), frame.names.end());
    return {};
  }

  // Examines one entry of `parent`; returns the frame to descend into, if any.
  Result<std::optional<Frame>> visit(const Frame& parent, const std::string& name) {
    const std::string rel = parent.rel + name;
    if (auto bad = check_component(name)) {
      refuse(rel, "bad name: " + *bad);
      return std::nullopt;
    }
    struct stat st {};
    if (::fstatat(parent.dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) {
      refuse(rel, std::string("cannot stat: ") + std::strerror(errno));
      return std::nullopt;
    }
    if (auto why = reserved_problem(rel, S_ISDIR(st.st_mode))) {
      refuse(rel, *why);
      return std::nullopt;
    }
    if (S_ISDIR(st.st_mode)) return enter_directory(parent, name, st);
    if (S_ISREG(st.st_mode)) {
      if (auto done = collect_file(parent, name, st); !done) return std::unexpected(done.error());
      return std::nullopt;
    }
    refuse(rel, kind_of(st.st_mode));
    return std::nullopt;
  }

  Result<std::optional<Frame>> enter_directory(const Frame& parent, const std::string& name,
                                               const struct stat& seen) {
    const std::string rel = parent.rel + name;
    const size_t level = parent.level + 1;
    if (level > policy_.max_depth) {
      refuse(rel, "directory deeper than " + std::to_string(policy_.max_depth) +
                      " levels; its contents were not collected");
      note_limit("output_depth");
      return std::nullopt;
    }
    auto dir = sys::open_beneath(parent.dir.get(), name, O_RDONLY | O_DIRECTORY);
    if (!dir) {
      refuse(rel, "cannot open directory: " + dir.error().message());
      return std::nullopt;
    }
    struct stat opened {};
    if (::fstat(dir->get(), &opened) < 0) return fail_errno("stat output directory");
    if (!S_ISDIR(opened.st_mode) || !sys::same_inode(seen, opened)) {
      refuse(rel, "changed while being collected");
      return std::nullopt;
    }
    if (::mkdirat(parent.dest.get(), name.c_str(), 0755) < 0)
      return fail_errno("create collected directory " + rel);
    UniqueFd dest(
        ::openat(parent.dest.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dest) return fail_errno("open collected directory " + rel);
    Frame frame{.dir = std::move(*dir),
                .dest = std::move(dest),
                .name = name,
                .rel = rel + "/",
                .level = level};
    if (auto st = list(frame); !st) return std::unexpected(st.error());
    return frame;
  }

  // Refuses by lstat (links, size) before opening; re-checks on the opened fd.
  Status collect_file(const Frame& parent, const std::string& name, const struct stat& seen) {
    const std::string rel = parent.rel + name;
    if (auto why = size_problem(seen)) {
      refuse(rel, *why, static_cast<uint64_t>(seen.st_size));
      return {};
    }
    auto file = sys::open_beneath(parent.dir.get(), name, O_RDONLY | O_NONBLOCK);
    if (!file) {
      refuse(rel, "cannot open: " + file.error().message());
      return {};
    }
    struct stat opened {};
    if (::fstat(file->get(), &opened) < 0) return fail_errno("stat output file");
    if (!S_ISREG(opened.st_mode) || !sys::same_inode(seen, opened)) {
      refuse(rel, "changed while being collected");
      return {};
    }
    if (auto why = size_problem(opened)) {
      refuse(rel, *why, static_cast<uint64_t>(opened.st_size));
      return {};
    }
    return copy_out(parent, name, file->get());
  }

  // Why `rel` may not be an output: it is the record's path or a temporary
  // name it is written through (sys::write_file_atomic: PATH.tmp.PID), or a
  // file where the record's directory must be. (Nothing beneath the record's
  // path is reached: the entry itself is refused first.)
  std::optional<std::string> reserved_problem(const std::string& rel, bool is_dir) const {
    for (const auto& r : policy_.reserved) {
      if (rel == r || rel.starts_with(r + ".tmp."))
        return "collides with the path of the job record (" + r + ")";
      if (!is_dir && r.starts_with(rel + "/"))
        return "stands where the job record's directory must be (" + r + ")";
    }
    return std::nullopt;
  }

  // Why a regular file cannot be taken, judged from its metadata alone.
  std::optional<std::string> size_problem(const struct stat& st) {
    if (st.st_nlink != 1)
      return "hard link (" + std::to_string(st.st_nlink) + " links); not collected";
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size > policy_.max_file_bytes) {
      note_limit("output_size");
      return "size " + std::to_string(size) + " bytes exceeds the limit of " +
             std::to_string(policy_.max_file_bytes);
    }
    if (size > room()) {
      note_limit("output_size");
      return "total output size would exceed the limit of " +
             std::to_string(policy_.max_total_bytes) + " bytes";
    }
    return std::nullopt;
  }

  Status copy_out(const Frame& parent, const std::string& name, int in) {
    const std::string rel = parent.rel + name;
    UniqueFd out(::openat(parent.dest.get(), name.c_str(),
                          O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!out) return fail_errno("create collected file " + rel);
    auto copied = copy_hashing(in, out.get(), std::min(policy_.max_file_bytes, room()));
    if (!copied) {
      ::unlinkat(parent.dest.get(), name.c_str(), 0);
      return fail_with("copy output file " + rel + ": " + copied.error().what, copied.error().err);
    }
    if (!*copied) {
      ::unlinkat(parent.dest.get(), name.c_str(), 0);
      refuse(rel, "grew beyond the size limit while being collected");
      return {};
    }
    Copied& data = **copied;
    const FileType type = detect_type(data.content);
    ManifestEntry entry{.name = rel,
                        .size = data.content.size(),
                        .sha256 = std::move(data.sha256),
                        .type = std::string(type_name(type))};
    if (!policy_.allowed.contains(type)) {
      ::unlinkat(parent.dest.get(), name.c_str(), 0);
      entry.accepted = false;
      entry.reason =
          "type " + entry.type + " is not allowed (allowed: " + describe_types(policy_.allowed) + ")";
      out_.any_rejected = true;
    } else {
      total_ += data.content.size();
    }
    out_.outputs.push_back(std::move(entry));
    return {};
  }

  // Leaves a directory; its copy is removed again if nothing was accepted in it.
  void pop() {
    Frame done = std::move(stack_.back());
    stack_.pop_back();
    if (!stack_.empty()) ::unlinkat(stack_.back().dest.get(), done.name.c_str(), AT_REMOVEDIR);
  }

  void hit_count_limit(const Frame& frame) {
    count_hit_ = true;
    const std::string dir = frame.rel.empty() ? "." : frame.rel.substr(0, frame.rel.size() - 1);
    refuse(dir, "more than " + std::to_string(policy_.max_count) +
                    " entries in the output; the rest were not collected");
    note_limit("output_count");
  }

  void refuse(const std::string& rel, std::string reason, uint64_t size = 0) {
    out_.outputs.push_back(ManifestEntry{
        .name = printable(rel), .size = size, .accepted = false, .reason = std::move(reason)});
    out_.any_rejected = true;
  }

  void note_limit(const std::string& limit) {
    auto& hits = out_.limits_hit;
    if (std::find(hits.begin(), hits.end(), limit) == hits.end()) hits.push_back(limit);
  }

  uint64_t room() const {
    return policy_.max_total_bytes - std::min(total_, policy_.max_total_bytes);
  }

  const OutputPolicy& policy_;
  Collection out_;
  std::vector<Frame> stack_;
  size_t seen_ = 0;
  uint64_t total_ = 0;
  bool count_hit_ = false;
};

}  // namespace

Result<Collection> collect_outputs(int output_root_fd, const std::string& dest_dir,
                                   const OutputPolicy& policy) {
  return Collector(policy).run(output_root_fd, dest_dir);
}

}  // namespace airlock::workspace
