// Input admission: host files are checked (kind, name, size, count, type) and
// copied into the job's staging directory while hashing. All or nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <expected>
#include <set>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "sys/file_io.h"
#include "workspace/manifest.h"
#include "workspace/copy_hashing.h"
#include "workspace/names.h"

namespace airlock::workspace {
namespace {

// Files created in the staging directory; removed again unless committed.
class StagedFiles {
 public:
  explicit StagedFiles(int dirfd) : dirfd_(dirfd) {}
  ~StagedFiles() {
    for (const auto& name : names_) ::unlinkat(dirfd_, name.c_str(), 0);
  }
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  void add(const std::string& name) { names_.push_back(name); }
  void commit() { names_.clear(); }

 private:
  int dirfd_;
  std::vector<std::string> names_;
};

// An input refused for a reason that is the user's: becomes Admission::rejection.
struct Refusal {
  std::string reason;
};

// Either a refusal (the user's fault) or an Error (airlock's).
template <class T>
using Checked = Result<std::expected<T, Refusal>>;

Refusal refusal(std::string_view name, const std::string& why) {
  return Refusal{"input \"" + printable(name) + "\": " + why};
}

std::unexpected<Refusal> refuse(std::string_view name, const std::string& why) {
  return std::unexpected(refusal(name, why));
}

// A refusal is a successful check with a negative answer.
template <class T>
Checked<T> refused(Refusal r) {
  return std::expected<T, Refusal>(std::unexpect, std::move(r));
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Opens a host input without following a final symlink and without blocking;
// devices, fifos and the like are refused from lstat before any open.
std::expected<UniqueFd, Refusal> open_input(const std::string& path, const std::string& name,
                                            struct stat& st) {
  if (::lstat(path.c_str(), &st) < 0)
    return refuse(name, errno == ENOENT ? "does not exist" : std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refuse(name, "is " + kind_of(st.st_mode));
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ELOOP) return refuse(name, "is a symlink");
    return refuse(name, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat opened {};
  if (::fstat(fd.get(), &opened) < 0)
    return refuse(name, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(opened.st_mode)) return refuse(name, "is " + kind_of(opened.st_mode));
  if (opened.st_dev != st.st_dev || opened.st_ino != st.st_ino)
    return refuse(name, "changed while being opened");
  st = opened;
  return fd;
}

class Admitter {
 public:
  Admitter(int staging_fd, const InputPolicy& policy)
      : staging_fd_(staging_fd), policy_(policy), staged_(staging_fd) {}

  // Admits one path; a refusal stops admission.
  Checked<ManifestEntry> admit(const std::string& path) {
    const std::string name = basename_of(path);
    if (auto bad = check_component(name)) return reject(name, "bad name: " + *bad);
    if (!seen_.insert(name).second) return reject(name, "duplicate name");
    struct stat st {};
    auto fd = open_input(path, name, st);
    if (!fd) return refused<ManifestEntry>(fd.error());
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size > policy_.max_file_bytes)
      return reject(name, "size " + std::to_string(size) + " bytes exceeds the limit of " +
                              std::to_string(policy_.max_file_bytes));
    const uint64_t room = policy_.max_total_bytes - std::min(total_, policy_.max_total_bytes);
    if (size > room)
      return reject(name, "total input size exceeds the limit of " +
                              std::to_string(policy_.max_total_bytes) + " bytes");
    return copy_in(fd->get(), name, std::min(policy_.max_file_bytes, room));
  }

  void commit() { staged_.commit(); }

 private:
  static Checked<ManifestEntry> reject(std::string_view name, const std::string& why) {
    return refused<ManifestEntry>(refusal(name, why));
  }

  Checked<ManifestEntry> copy_in(int in, const std::string& name, uint64_t limit) {
    UniqueFd out(::openat(staging_fd_, name.c_str(),
                          O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444));
    if (!out) return fail_errno("create staged input " + printable(name));
    staged_.add(name);
    auto copied = copy_hashing(in, out.get(), limit);
    if (!copied)
      return fail_with("copy input " + printable(name) + ": " + copied.error().what, copied.error().err);
    if (!*copied) return reject(name, "grew beyond the size limit while being copied");
    const FileType type = detect_type((*copied)->content);
    if (!policy_.allowed.contains(type))
      return reject(name, "type " + std::string(type_name(type)) +
                              " is not allowed (allowed: " + describe_types(policy_.allowed) + ")");
    total_ += (*copied)->content.size();
    return ManifestEntry{.name = name,
                         .size = (*copied)->content.size(),
                         .sha256 = std::move((*copied)->sha256),
                         .type = std::string(type_name(type))};
  }

  int staging_fd_;
  const InputPolicy& policy_;
  StagedFiles staged_;
  std::set<std::string> seen_;
  uint64_t total_ = 0;
};

}  // namespace

Result<Admission> admit_inputs(const std::vector<std::string>& paths,
                               const std::string& staging_dir, const InputPolicy& policy) {
  if (paths.size() > policy.max_count)
    return Admission{.rejection = "too many inputs: " + std::to_string(paths.size()) + " (limit " +
                                  std::to_string(policy.max_count) + ")"};
  UniqueFd staging(::open(staging_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!staging) return fail_errno("open staging directory " + staging_dir);

  Admitter admitter(staging.get(), policy);
  Admission admission;
  for (const auto& path : paths) {
    auto entry = admitter.admit(path);
    if (!entry) return std::unexpected(entry.error());  // admitter removes staged files
    if (!*entry) return Admission{.rejection = entry->error().reason};
    admission.inputs.push_back(std::move(**entry));
  }
  admitter.commit();
  return admission;
}

}  // namespace airlock::workspace
