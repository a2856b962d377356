#include "egress/scrub.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace airlock::egress {
namespace {

constexpr uint64_t kBase = 1099511628211ull;  // odd: the rolling hash wraps mod 2^64

uint64_t hash_of(std::string_view piece) {
  uint64_t h = 0;
  for (unsigned char c : piece) h = h * kBase + c;
  return h;
}

uint64_t power(uint64_t base, size_t n) {
  uint64_t p = 1;
  while (n-- > 0) p *= base;
  return p;
}

// "Bearer abc" -> "abc"; a value without an auth scheme is its own token.
std::string_view token_of(std::string_view value) {
  auto space = value.find(' ');
  if (space == std::string_view::npos || space == 0) return value;
  std::string_view scheme = value.substr(0, space);
  bool is_scheme = std::all_of(scheme.begin(), scheme.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
  });
  if (!is_scheme) return value;
  std::string_view token = value.substr(space);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return token.empty() ? value : token;
}

}  // namespace

Scrubber::Scrubber(std::string_view secret) {
  if (secret.empty()) return;
  exact_.emplace_back(secret);
  std::string_view token = token_of(secret);
  if (token.size() < kMinFragment) {
    if (token != secret) exact_.emplace_back(token);
    return;
  }
  token_ = std::string(token);
  for (size_t at = 0; at + kMinFragment <= token_.size(); ++at)
    windows_.push_back(
        {hash_of(std::string_view(token_).substr(at, kMinFragment)), static_cast<uint32_t>(at)});
  std::sort(windows_.begin(), windows_.end(),
            [](const Window& a, const Window& b) { return a.hash < b.hash; });
  for (const Window& w : windows_) filter_[w.hash >> 58] |= uint64_t{1} << ((w.hash >> 52) & 63);
}

bool Scrubber::is_window(std::string_view piece, uint64_t hash) const {
  if ((filter_[hash >> 58] & (uint64_t{1} << ((hash >> 52) & 63))) == 0) return false;
  auto it = std::lower_bound(windows_.begin(), windows_.end(), hash,
                             [](const Window& w, uint64_t h) { return w.hash < h; });
  for (; it != windows_.end() && it->hash == hash; ++it)
    if (token_.compare(it->at, kMinFragment, piece) == 0) return true;
  return false;
}

// Sets mask[i] for every byte of `text` inside a match. Matches are found in
// the bytes as they came, so overlapping pieces all count.
void Scrubber::mark(std::string& mask, std::string_view text) const {
  for (const auto& needle : exact_)
    for (size_t at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + 1))
      std::fill_n(mask.begin() + static_cast<long>(at), needle.size(), '\1');
  if (windows_.empty() || text.size() < kMinFragment) return;
  static const uint64_t top = power(kBase, kMinFragment - 1);
  uint64_t h = hash_of(text.substr(0, kMinFragment));
  for (size_t at = 0;; ++at) {
    if (is_window(text.substr(at, kMinFragment), h))
      std::fill_n(mask.begin() + static_cast<long>(at), kMinFragment, '\1');
    if (at + kMinFragment >= text.size()) break;
    h = (h - static_cast<unsigned char>(text[at]) * top) * kBase +
        static_cast<unsigned char>(text[at + kMinFragment]);
  }
}

// The longest tail of `text` that could be the start of a match.
size_t Scrubber::held_back(std::string_view text) const {
  size_t keep = 0;
  for (const auto& needle : exact_)
    for (size_t k = std::min(needle.size() - 1, text.size()); k > keep; --k)
      if (text.substr(text.size() - k) == std::string_view(needle).substr(0, k)) {
        keep = k;
        break;
      }
  if (!windows_.empty())
    for (size_t k = std::min(kMinFragment - 1, text.size()); k > keep; --k) {
      size_t at = token_.find(text.substr(text.size() - k));
      if (at != std::string::npos && at + kMinFragment <= token_.size()) {
        keep = k;
        break;
      }
    }
  return keep;
}

std::string Scrubber::feed(std::string_view data) {
  pending_.append(data);
  if (exact_.empty()) return std::exchange(pending_, {});
  mask_.resize(pending_.size(), '\0');
  mark(mask_, pending_);
  size_t ready = pending_.size() - held_back(pending_);
  std::string out = pending_.substr(0, ready);
  for (size_t i = 0; i < ready; ++i)
    if (mask_[i]) out[i] = '*';
  pending_.erase(0, ready);
  mask_.erase(0, ready);
  return out;
}

std::string Scrubber::finish() {
  std::string out = std::exchange(pending_, {});
  for (size_t i = 0; i < out.size(); ++i)
    if (mask_[i]) out[i] = '*';
  mask_.clear();
  return out;
}

std::string Scrubber::scrub_all(std::string_view text) const {
  std::string out(text);
  if (exact_.empty()) return out;
  std::string mask(text.size(), '\0');
  mark(mask, text);
  for (size_t i = 0; i < out.size(); ++i)
    if (mask[i]) out[i] = '*';
  return out;
}

}  // namespace airlock::egress
