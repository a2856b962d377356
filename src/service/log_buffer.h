// A job's live output for Server-Sent Events: every chunk the program wrote,
// in order, with its byte offset in the combined stream, kept up to a cap.
// Readers ask for what came after an offset (a reconnecting client's
// Last-Event-ID) and subscribe to what comes next, without a thread each.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <string>
#include <vector>

namespace airlock::service {

struct OutputChunk {
  uint64_t offset = 0;  // bytes before this chunk, both streams together
  bool is_stderr = false;
  std::string text;
};

class LogBuffer {
 public:
  explicit LogBuffer(uint64_t cap_bytes) : cap_(cap_bytes) {}

  void append(bool is_stderr, std::string_view text);  // beyond the cap: dropped, counted
  void finish();                                       // no more output will come

  // Chunks that end after `offset` (a chunk containing it is cut to start there).
  std::vector<OutputChunk> after(uint64_t offset) const;
  // Delivers every chunk after `offset` at once, then each new chunk as it is
  // appended, then calls `done` once when the buffer is finished. Chunk
  // listeners run under the buffer's lock: they must only queue work (never
  // block, never call back into the buffer); `done` runs without it and may
  // read the buffer. Returns an id for unsubscribe().
  using Listener = std::function<void(const OutputChunk&)>;
  uint64_t subscribe(uint64_t offset, Listener on_chunk, std::function<void()> done);
  void unsubscribe(uint64_t id);
  // Waits until there is output after `offset`, the buffer is finished, or the timeout.
  void wait_for_more(uint64_t offset, std::chrono::milliseconds timeout) const;
  bool finished() const;
  uint64_t end_offset() const;  // bytes kept so far
  bool truncated() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  uint64_t cap_;
  uint64_t kept_ = 0;
  bool truncated_ = false;
  bool finished_ = false;
  std::vector<OutputChunk> chunks_;
  struct Subscriber {
    uint64_t id;
    Listener on_chunk;
    std::function<void()> done;
  };
  std::vector<Subscriber> subscribers_;
  uint64_t next_id_ = 1;
};

}  // namespace airlock::service
