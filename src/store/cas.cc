#include "store/cas.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "store/secrets.h"
#include "sys/file_io.h"

namespace airlock::store {

namespace {

Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) < 0 && errno != EEXIST) return fail_errno("create " + path);
  return {};
}

// Unlinks a temporary file unless released.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

Status ContentStore::create_dirs() const {
  for (const auto& d : {root_, root_ + "/sha256", root_ + "/tmp"})
    if (auto st = make_dir(d); !st) return st;
  return {};
}

std::string ContentStore::path(const std::string& sha256) const {
  if (!is_sha256_hex(sha256)) return {};
  return root_ + "/sha256/" + sha256.substr(0, 2) + "/" + sha256;
}

Result<ContentStore::Put> ContentStore::put(const std::string& source,
                                            const std::string& expected_sha256) const {
  std::string final_path = path(expected_sha256);
  if (final_path.empty()) return fail("artifact sha256 '" + expected_sha256 + "' is not valid");

  UniqueFd in(::open(source.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!in) return fail_errno("open artifact " + source);
  struct stat st{};
  if (::fstat(in.get(), &st) < 0) return fail_errno("stat artifact " + source);
  if (!S_ISREG(st.st_mode)) return fail("artifact " + source + " is not a regular file");

  auto suffix = random_hex(8);
  if (!suffix) return std::unexpected(suffix.error());
  TempFile temp(root_ + "/tmp/" + *suffix + ".part");
  UniqueFd out(::open(temp.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400));
  if (!out) return fail_errno("create " + temp.path());

  Sha256 hash;
  char buf[64 * 1024];
  while (true) {
    ssize_t n = ::read(in.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read artifact " + source);
    }
    if (n == 0) break;
    std::string_view chunk(buf, static_cast<size_t>(n));
    hash.update(chunk);
    if (auto w = sys::write_all(out.get(), chunk); !w) return std::unexpected(w.error());
  }
  std::string actual = hash.hex_digest();
  if (actual != expected_sha256)
    return fail("artifact " + source + " has sha256 " + actual + ", expected " + expected_sha256);
  if (::fsync(out.get()) < 0) return fail_errno("fsync " + temp.path());
  out.reset();

  if (auto st2 = make_dir(root_ + "/sha256/" + expected_sha256.substr(0, 2)); !st2)
    return std::unexpected(st2.error());
  // link(2) never replaces an existing file: the first writer wins, and a
  // reader never sees a partial file.
  if (::link(temp.path().c_str(), final_path.c_str()) < 0) {
    if (errno == EEXIST) return Put{final_path, true};
    return fail_errno("store artifact " + final_path);
  }
  return Put{final_path, false};
}

Status ContentStore::remove(const std::string& sha256) const {
  std::string p = path(sha256);
  if (p.empty()) return fail("artifact sha256 '" + sha256 + "' is not valid");
  if (::unlink(p.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + p);
  return {};
}

}  // namespace airlock::store
