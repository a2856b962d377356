#include "service/log_buffer.h"

namespace airlock::service {

void LogBuffer::append(bool is_stderr, std::string_view text) {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    size_t room = kept_ < cap_ ? static_cast<size_t>(cap_ - kept_) : 0;
    if (text.size() > room) {
      truncated_ = true;
      text = text.substr(0, room);
    }
    if (text.empty()) return;
    chunks_.push_back({kept_, is_stderr, std::string(text)});
    kept_ += text.size();
    for (auto& s : subscribers_) s.on_chunk(chunks_.back());
  }
  changed_.notify_all();
}

void LogBuffer::finish() {
  std::vector<Subscriber> finished;
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    finished_ = true;
    finished.swap(subscribers_);
  }
  changed_.notify_all();
  // Outside the lock: a done callback may read the buffer (no chunk can follow).
  for (auto& s : finished) s.done();
}

uint64_t LogBuffer::subscribe(uint64_t offset, Listener on_chunk, std::function<void()> done) {
  std::unique_lock lock(mu_);
  for (const auto& c : chunks_) {
    uint64_t end = c.offset + c.text.size();
    if (end <= offset) continue;
    if (c.offset >= offset) on_chunk(c);
    else on_chunk({offset, c.is_stderr, c.text.substr(static_cast<size_t>(offset - c.offset))});
  }
  if (finished_) {
    lock.unlock();
    done();
    return 0;
  }
  uint64_t id = next_id_++;
  subscribers_.push_back({id, std::move(on_chunk), std::move(done)});
  return id;
}

void LogBuffer::unsubscribe(uint64_t id) {
  std::lock_guard lock(mu_);
  std::erase_if(subscribers_, [id](const Subscriber& s) { return s.id == id; });
}

std::vector<OutputChunk> LogBuffer::after(uint64_t offset) const {
  std::lock_guard lock(mu_);
  std::vector<OutputChunk> out;
  for (const auto& c : chunks_) {
    uint64_t end = c.offset + c.text.size();
    if (end <= offset) continue;
    if (c.offset >= offset) {
      out.push_back(c);
    } else {
      out.push_back({offset, c.is_stderr, c.text.substr(static_cast<size_t>(offset - c.offset))});
    }
  }
  return out;
}

void LogBuffer::wait_for_more(uint64_t offset, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, timeout, [&] { return finished_ || kept_ > offset; });
}

bool LogBuffer::finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

uint64_t LogBuffer::end_offset() const {
  std::lock_guard lock(mu_);
  return kept_;
}

bool LogBuffer::truncated() const {
  std::lock_guard lock(mu_);
  return truncated_;
}

}  // namespace airlock::service
