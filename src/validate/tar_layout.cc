#include "validate/tar_layout.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "validate/archive_rules.h"
#include "validate/libarchive.h"
#include "validate/text.h"

namespace airlock::validate {
namespace {

constexpr size_t kBlock = 512;
constexpr size_t kTarPiece = 64 << 10;
constexpr uint64_t kMaxPaxBytes = 1 << 20;

std::unexpected<Error> tar_refuse(std::string why) {
  return fail(ErrorKind::kRefused, std::move(why));
}

// The tar's bytes in order: the file itself, or what inflates from it (gzip,
// members one after the other as gzip -d reads them).
class TarStream {
 public:
  TarStream(uint64_t size, const ReadAt& read) : size_(size), read_(read) {}
  ~TarStream() {
    if (z_) z_->inflate_end(&zs_);
  }
  TarStream(const TarStream&) = delete;
  TarStream& operator=(const TarStream&) = delete;

  Status open() {
    auto head = read_(0, static_cast<size_t>(std::min<uint64_t>(size_, 2)));
    if (!head) return std::unexpected(head.error());
    if (*head != "\x1f\x8b") return {};
    auto lib = zlib();
    if (!lib) return std::unexpected(lib.error());
    if ((*lib)->inflate_init2(&zs_, 16 + MAX_WBITS, ZLIB_VERSION,
                              static_cast<int>(sizeof(z_stream))) != Z_OK)
      return fail("inflateInit2 failed");
    z_ = *lib;
    return {};
  }

  // The next piece of the compressed file as inflate's input (at_ < size_).
  Status refill() {
    auto piece = read_(at_, static_cast<size_t>(std::min<uint64_t>(kTarPiece, size_ - at_)));
    if (!piece) return std::unexpected(piece.error());
    in_ = std::move(*piece);
    at_ += in_.size();
    zs_.next_in = reinterpret_cast<unsigned char*>(in_.data());
    zs_.avail_in = static_cast<unsigned>(in_.size());
    return {};
  }

  // Up to `n` bytes into `out`; fewer only at the end.
  Result<size_t> take(char* out, size_t n) {
    if (!z_) {
      size_t got = static_cast<size_t>(std::min<uint64_t>(n, size_ - std::min(size_, at_)));
      if (got == 0) return size_t{0};
      auto bytes = read_(at_, got);
      if (!bytes) return std::unexpected(bytes.error());
      std::memcpy(out, bytes->data(), got);
      at_ += got;
      return got;
    }
    zs_.next_out = reinterpret_cast<unsigned char*>(out);
    zs_.avail_out = static_cast<unsigned>(n);
    while (zs_.avail_out > 0 && !ended_) {
      if (zs_.avail_in == 0) {
        if (at_ >= size_) break;
        if (auto st = refill(); !st) return std::unexpected(st.error());
      }
      int rc = z_->inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another gzip member may follow; anything else ends the stream.
        if (zs_.avail_in == 0 && at_ < size_)
          if (auto st = refill(); !st) return std::unexpected(st.error());
        if (zs_.avail_in >= 2 && zs_.next_in[0] == 0x1f && zs_.next_in[1] == 0x8b) {
          unsigned char* next = zs_.next_in;
          unsigned avail = zs_.avail_in;
          unsigned char* out_at = zs_.next_out;
          unsigned out_left = zs_.avail_out;
          z_->inflate_end(&zs_);
          zs_ = z_stream{};
          if (z_->inflate_init2(&zs_, 16 + MAX_WBITS, ZLIB_VERSION,
                                static_cast<int>(sizeof(z_stream))) != Z_OK)
            return fail("inflateInit2 failed");
          zs_.next_in = next;
          zs_.avail_in = avail;
          zs_.next_out = out_at;
          zs_.avail_out = out_left;
          continue;
        }
        ended_ = true;
        break;
      }
      if (rc == Z_BUF_ERROR) {
        if (zs_.avail_in == 0 && at_ < size_) continue;  // more input
        break;                                           // the input ends inside the stream
      }
      if (rc != Z_OK) return tar_refuse("the gzip stream is corrupt");
    }
    return n - zs_.avail_out;
  }

 private:
  uint64_t size_, at_ = 0;
  const ReadAt& read_;
  const Zlib* z_ = nullptr;
  z_stream zs_{};
  std::string in_;
  bool ended_ = false;
};

std::string field(const char* block, size_t at, size_t len) {
  const char* p = block + at;
  return std::string(p, strnlen(p, len));
}

// An octal size field (spaces and NULs around it), or nullopt for a base-256 one or garbage.
std::optional<uint64_t> octal(const char* block, size_t at, size_t len) {
  std::string_view f(block + at, len);
  if (!f.empty() && (static_cast<unsigned char>(f[0]) & 0x80)) return std::nullopt;
  uint64_t v = 0;
  bool digits = false;
  for (char c : f) {
    if (c >= '0' && c <= '7') {
      if (v > (UINT64_MAX >> 3)) return std::nullopt;
      v = v * 8 + static_cast<uint64_t>(c - '0');
      digits = true;
    } else if (c == ' ' || c == '\0') {
      if (digits) break;
    } else {
      return std::nullopt;
    }
  }
  return v;
}

// A base-256 size field (GNU), as a ustar reader that knows it reads it.
uint64_t base256(const char* block, size_t at, size_t len) {
  uint64_t v = static_cast<unsigned char>(block[at]) & 0x7f;
  for (size_t i = 1; i < len; ++i) v = (v << 8) | static_cast<unsigned char>(block[at + i]);
  return v;
}

bool checksum_ok(const char* block) {
  auto want = octal(block, 148, 8);
  if (!want) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i)
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(block[i]);
  return sum == *want;
}

struct Pax {
  std::optional<uint64_t> size;
  bool path = false;
};

// "LEN key=value\n" records; only path and size matter here.
Result<Pax> parse_pax(std::string_view data) {
  Pax pax;
  while (!data.empty()) {
    size_t space = data.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 20)
      return tar_refuse("a malformed pax header");
    uint64_t len = 0;
    for (char c : data.substr(0, space)) {
      if (c < '0' || c > '9') return tar_refuse("a malformed pax header");
      len = len * 10 + static_cast<uint64_t>(c - '0');
    }
    if (len <= space + 1 || len > data.size() || data[len - 1] != '\n')
      return tar_refuse("a malformed pax header");
    std::string_view record = data.substr(space + 1, len - space - 2);
    size_t eq = record.find('=');
    if (eq == std::string_view::npos) return tar_refuse("a malformed pax header");
    std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key == "path") pax.path = true;
    if (key == "size") {
      uint64_t v = 0;
      if (value.empty() || value.size() > 19) return tar_refuse("a pax size that is not a number");
      for (char c : value) {
        if (c < '0' || c > '9') return tar_refuse("a pax size that is not a number");
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      pax.size = v;
    }
    data.remove_prefix(len);
  }
  return pax;
}

Status skip(TarStream& s, uint64_t n) {
  char scratch[kTarPiece];
  while (n > 0) {
    auto got = s.take(scratch, static_cast<size_t>(std::min<uint64_t>(n, sizeof scratch)));
    if (!got) return std::unexpected(got.error());
    if (*got == 0) return {};
    n -= *got;
  }
  return {};
}

}  // namespace

Status check_tar_headers(uint64_t size, const ReadAt& read, uint64_t max_bytes) {
  TarStream s(size, read);
  if (auto o = s.open(); !o) return o;
  char block[kBlock];
  uint64_t consumed = 0;
  Pax pending;
  bool long_name = false;
  while (consumed < max_bytes) {
    auto got = s.take(block, kBlock);
    if (!got) return std::unexpected(got.error());
    if (*got < kBlock) return {};  // the end (or truncated: the walk judged that)
    consumed += kBlock;
    if (std::all_of(block, block + kBlock, [](char c) { return c == 0; })) return {};
    if (!checksum_ok(block)) return {};  // no reader takes it as a header
    std::string name = field(block, 0, 100);
    bool posix = std::memcmp(block + 257, "ustar\0", 6) == 0;
    std::string prefix = posix ? field(block, 345, 155) : "";
    std::string full = prefix.empty() ? name : prefix + "/" + name;
    char type = block[156];
    auto octal_size = octal(block, 124, 12);
    uint64_t data = octal_size ? *octal_size : base256(block, 124, 12);
    std::string where = "the tar header at offset " + std::to_string(consumed - kBlock);
    if (!(full.empty() && (pending.path || long_name))) {
      if (auto ok = check_member_name(full); !ok)
        return tar_refuse(where + " names " + in_quotes(full, 200) + " (" + ok.error().what +
                          "), which a reader that ignores pax and GNU long-name headers would use");
    }
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      if (data > kMaxPaxBytes)
        return tar_refuse(where + ": an extended header over " + std::to_string(kMaxPaxBytes) +
                          " bytes");
      std::string text(static_cast<size_t>(data), '\0');
      auto read_data = s.take(text.data(), text.size());
      if (!read_data) return std::unexpected(read_data.error());
      if (*read_data < text.size()) return {};
      consumed += data;
      if (type == 'x' || type == 'g') {
        auto pax = parse_pax(text);
        if (!pax) return std::unexpected(pax.error());
        if (type == 'g' && (pax->size || pax->path))
          return tar_refuse(where + ": a global pax header that sets a path or a size");
        if (type == 'x') pending = *pax;
      }
      if (type == 'L') long_name = true;
      if (auto k = skip(s, (kBlock - data % kBlock) % kBlock); !k) return k;
      consumed += (kBlock - data % kBlock) % kBlock;
      continue;
    }
    if (pending.size && octal_size && *pending.size != *octal_size)
      return tar_refuse(where + " (" + in_quotes(full, 200) + "): its pax size " +
                        std::to_string(*pending.size) + " and its ustar size " +
                        std::to_string(*octal_size) +
                        " differ (readers would split the archive differently)");
    pending = Pax{};
    long_name = false;
    uint64_t padded = data + (kBlock - data % kBlock) % kBlock;
    if (auto k = skip(s, padded); !k) return k;
    consumed += padded;
  }
  return {};
}

}  // namespace airlock::validate
