#include "workspace/copy_hashing.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/sha256.h"
#include "sys/file_io.h"

namespace airlock::workspace {
namespace {

constexpr size_t kBlock = 65536;
const char kZeros[kBlock] = {};

bool is_regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

bool all_zero(std::string_view chunk) {
  return chunk.size() == kBlock && std::memcmp(chunk.data(), kZeros, kBlock) == 0;
}

// A data extent of a regular file: [start, end).
struct Extent {
  uint64_t start = 0, end = 0;
};

// The first extent at or after `pos` that may hold data, or nullopt when only
// a hole (or nothing) follows. A filesystem without SEEK_DATA answers with
// everything up to its end as data.
Result<std::optional<Extent>> next_data(int fd, uint64_t pos) {
  off_t start = ::lseek(fd, static_cast<off_t>(pos), SEEK_DATA);
  if (start < 0) {
    if (errno == ENXIO) return std::nullopt;
    if (errno != EINVAL && errno != EOPNOTSUPP) return fail_errno("lseek SEEK_DATA");
    struct stat st {};
    if (::fstat(fd, &st) < 0) return fail_errno("fstat");
    if (static_cast<uint64_t>(st.st_size) <= pos) return std::nullopt;
    return Extent{pos, static_cast<uint64_t>(st.st_size)};
  }
  off_t end = ::lseek(fd, start, SEEK_HOLE);
  if (end < 0) return fail_errno("lseek SEEK_HOLE");
  return Extent{static_cast<uint64_t>(start), static_cast<uint64_t>(end)};
}

// Where the copied bytes go: a regular file gets holes for zeros, anything
// else (a pipe) gets the zeros written.
class Sink {
 public:
  explicit Sink(int fd) : fd_(fd), sparse_(is_regular(fd)) {}

  Status data(std::string_view chunk) {
    if (sparse_ && all_zero(chunk)) return zeros(chunk.size());
    if (skipped_ > 0) {
      if (::lseek(fd_, static_cast<off_t>(skipped_), SEEK_CUR) < 0) return fail_errno("lseek");
      skipped_ = 0;
    }
    return sys::write_all(fd_, chunk);
  }

  Status zeros(uint64_t n) {
    if (sparse_) {
      skipped_ += n;
      return {};
    }
    for (uint64_t left = n; left > 0;) {
      const size_t step = static_cast<size_t>(std::min<uint64_t>(left, kBlock));
      if (auto st = sys::write_all(fd_, std::string_view(kZeros, step)); !st) return st;
      left -= step;
    }
    return {};
  }

  // A trailing hole: the file's size still has to reach the logical end.
  Status finish() {
    if (skipped_ == 0) return {};
    off_t end = ::lseek(fd_, static_cast<off_t>(skipped_), SEEK_CUR);
    if (end < 0) return fail_errno("lseek");
    if (::ftruncate(fd_, end) < 0) return fail_errno("ftruncate");
    skipped_ = 0;
    return {};
  }

 private:
  int fd_;
  bool sparse_;
  uint64_t skipped_ = 0;  // zeros owed to the output, not yet seeked over
};

class HashingCopy {
 public:
  HashingCopy(int out, uint64_t limit, uint64_t keep) : sink_(out), limit_(limit), keep_(keep) {}

  // false: over the limit.
  Result<bool> data(std::string_view chunk) {
    if (chunk.size() > limit_ - copied_.size) return false;
    hash_.update(chunk);
    if (auto st = sink_.data(chunk); !st) return std::unexpected(st.error());
    keep_bytes(chunk);
    copied_.size += chunk.size();
    return true;
  }

  Result<bool> zeros(uint64_t n) {
    if (n > limit_ - copied_.size) return false;
    for (uint64_t left = n; left > 0;) {
      const size_t step = static_cast<size_t>(std::min<uint64_t>(left, kBlock));
      hash_.update(std::string_view(kZeros, step));
      keep_bytes(std::string_view(kZeros, step));
      left -= step;
    }
    if (auto st = sink_.zeros(n); !st) return std::unexpected(st.error());
    copied_.size += n;
    return true;
  }

  Result<std::optional<Copied>> finish() {
    if (auto st = sink_.finish(); !st) return std::unexpected(st.error());
    copied_.sha256 = hash_.hex_digest();
    return std::move(copied_);
  }

 private:
  void keep_bytes(std::string_view chunk) {
    if (copied_.content.size() >= keep_) return;
    copied_.content.append(chunk.substr(
        0, static_cast<size_t>(std::min<uint64_t>(chunk.size(), keep_ - copied_.content.size()))));
  }

  Sink sink_;
  uint64_t limit_, keep_;
  Copied copied_;
  Sha256 hash_;
};

Result<std::optional<Copied>> copy_stream(int in, HashingCopy& copy) {
  char buf[kBlock];
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read");
    }
    if (n == 0) return copy.finish();
    auto ok = copy.data(std::string_view(buf, static_cast<size_t>(n)));
    if (!ok) return std::unexpected(ok.error());
    if (!*ok) return std::nullopt;
  }
}

// A regular file from `pos`: its data extents are read, its holes counted as zeros.
Result<std::optional<Copied>> copy_regular(int in, uint64_t pos, HashingCopy& copy) {
  char buf[kBlock];
  for (;;) {
    auto extent = next_data(in, pos);
    if (!extent) return std::unexpected(extent.error());
    uint64_t data_end = 0;
    if (*extent) {
      if ((*extent)->start > pos) {
        auto ok = copy.zeros((*extent)->start - pos);
        if (!ok) return std::unexpected(ok.error());
        if (!*ok) return std::nullopt;
        pos = (*extent)->start;
      }
      data_end = (*extent)->end;
    }
    while (pos < data_end) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(data_end - pos, sizeof(buf)));
      ssize_t n = ::pread(in, buf, want, static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail_errno("read");
      }
      if (n == 0) break;  // shrank while being read
      auto ok = copy.data(std::string_view(buf, static_cast<size_t>(n)));
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) return std::nullopt;
      pos += static_cast<uint64_t>(n);
    }
    if (*extent && pos >= data_end) continue;
    // No more data: what is left up to the file's size is a trailing hole.
    struct stat st {};
    if (::fstat(in, &st) < 0) return fail_errno("fstat");
    if (static_cast<uint64_t>(st.st_size) > pos) {
      auto ok = copy.zeros(static_cast<uint64_t>(st.st_size) - pos);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) return std::nullopt;
      pos = static_cast<uint64_t>(st.st_size);
    }
    if (::lseek(in, static_cast<off_t>(pos), SEEK_SET) < 0) return fail_errno("lseek");
    return copy.finish();
  }
}

}  // namespace

Result<std::optional<Copied>> copy_hashing(int in, int out, uint64_t limit, uint64_t keep) {
  HashingCopy copy(out, limit, keep);
  if (is_regular(in)) {
    off_t pos = ::lseek(in, 0, SEEK_CUR);
    if (pos >= 0) return copy_regular(in, static_cast<uint64_t>(pos), copy);
  }
  return copy_stream(in, copy);
}

Status copy_keeping_holes(int in, int out, uint64_t size) {
  uint64_t pos = 0;
  bool by_hand = false;  // copy_file_range refused (another filesystem type)
  char buf[kBlock];
  while (pos < size) {
    auto extent = next_data(in, pos);
    if (!extent) return std::unexpected(extent.error());
    if (!*extent) break;
    pos = std::min((*extent)->start, size);
    const uint64_t end = std::min((*extent)->end, size);
    while (pos < end) {
      ssize_t n;
      if (!by_hand) {
        loff_t from = static_cast<loff_t>(pos), to = static_cast<loff_t>(pos);
        n = ::copy_file_range(in, &from, out, &to,
                              static_cast<size_t>(std::min<uint64_t>(end - pos, 1u << 30)), 0);
        if (n < 0 &&
            (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) {
          by_hand = true;
          continue;
        }
      } else {
        n = ::pread(in, buf, static_cast<size_t>(std::min<uint64_t>(end - pos, sizeof(buf))),
                    static_cast<off_t>(pos));
        if (n > 0) {
          for (ssize_t done = 0; done < n;) {
            ssize_t w = ::pwrite(out, buf + done, static_cast<size_t>(n - done),
                                 static_cast<off_t>(pos) + done);
            if (w < 0) {
              if (errno == EINTR) continue;
              return fail_errno("write");
            }
            done += w;
          }
        }
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail_errno(by_hand ? "read" : "copy_file_range");
      }
      if (n == 0)
        return fail("stored content ended after " + std::to_string(pos) + " of " +
                    std::to_string(size) + " bytes");
      pos += static_cast<uint64_t>(n);
    }
  }
  struct stat st {};
  if (::fstat(in, &st) < 0) return fail_errno("fstat");
  if (static_cast<uint64_t>(st.st_size) < size)
    return fail("stored content ended after " + std::to_string(st.st_size) + " of " +
                std::to_string(size) + " bytes");
  if (::ftruncate(out, static_cast<off_t>(size)) < 0) return fail_errno("ftruncate");
  return {};
}

}  // namespace airlock::workspace
