#include "workspace/content_dir.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "workspace/copy_hashing.h"

namespace airlock::workspace {

namespace {

Result<std::string> random_suffix() {
  unsigned char bytes[8];
  if (::getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes)))
    return fail_errno("getrandom");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// Unlinks a temporary file unless it was never made.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string ContentDir::path(const std::string& sha256) const {
  if (!is_sha256_hex(sha256)) return {};
  return root_ + "/sha256/" + sha256.substr(0, 2) + "/" + sha256;
}

Result<ContentDir::Stored> ContentDir::put_fd(int fd, uint64_t max_bytes,
                                              const std::string& expected_sha256) const {
  if (!expected_sha256.empty() && !is_sha256_hex(expected_sha256))
    return fail("sha256 '" + expected_sha256 + "' is not valid");
  auto suffix = random_suffix();
  if (!suffix) return std::unexpected(suffix.error());
  TempFile temp(root_ + "/tmp/" + *suffix + ".part");
  UniqueFd out(::open(temp.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400));
  if (!out) return fail_errno("create " + temp.path());

  auto copied = copy_hashing(fd, out.get(), max_bytes, /*keep=*/0);
  if (!copied) return std::unexpected(copied.error());
  if (!*copied) return fail_with("more than " + std::to_string(max_bytes) + " bytes", EFBIG);
  Stored stored;
  stored.size = (*copied)->size;
  stored.sha256 = (*copied)->sha256;
  if (!expected_sha256.empty() && stored.sha256 != expected_sha256)
    return fail("has sha256 " + stored.sha256 + ", expected " + expected_sha256);
  if (::fsync(out.get()) < 0) return fail_errno("fsync " + temp.path());
  out.reset();

  std::string dir = root_ + "/sha256/" + stored.sha256.substr(0, 2);
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) return fail_errno("create " + dir);
  stored.path = path(stored.sha256);
  // link(2) never replaces an existing file: the first writer wins, and a
  // reader never sees a partial file.
  if (::link(temp.path().c_str(), stored.path.c_str()) < 0) {
    if (errno != EEXIST) return fail_errno("store " + stored.path);
    stored.existed = true;
  }
  return stored;
}

Result<UniqueFd> ContentDir::open(const std::string& sha256) const {
  std::string p = path(sha256);
  if (p.empty()) return fail("sha256 '" + sha256 + "' is not valid");
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return fail_with("content " + sha256 + " is not stored", ENOENT);
    return fail_errno("open stored content " + p);
  }
  return fd;
}

}  // namespace airlock::workspace
