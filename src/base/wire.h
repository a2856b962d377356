// A small length-prefixed binary encoding for messages between airlock's own
// processes (pool, preloaded interpreter, job runner). The reader checks every
// bound: a short or corrupt message is an error, never an out-of-range read.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace airlock::wire {

class Writer {
 public:
  void u32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  // The Reader views `in`: a temporary string would be gone before the reads.
  explicit Reader(std::string_view in) : in_(in) {}
  explicit Reader(const char* in) : in_(in) {}
  explicit Reader(std::string&&) = delete;
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == in_.size(); }
  uint32_t u32() { uint32_t v = 0; bytes(&v, sizeof(v)); return v; }
  uint64_t u64() { uint64_t v = 0; bytes(&v, sizeof(v)); return v; }
  std::string str() {
    uint32_t n = u32();
    if (!ok_ || n > in_.size() - pos_) return fail_empty();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  void bytes(void* p, size_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      std::memset(p, 0, n);
      return;
    }
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  // A count of following items, each at least `min_item` bytes: refused when
  // the rest of the message cannot hold that many.
  uint32_t count(size_t min_item) {
    uint32_t n = u32();
    if (ok_ && min_item > 0 && n > (in_.size() - pos_) / min_item) ok_ = false;
    return ok_ ? n : 0;
  }

 private:
  std::string fail_empty() { ok_ = false; return {}; }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace airlock::wire
