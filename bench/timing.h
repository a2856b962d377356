// The timing pieces the benchmarks share: milliseconds since a time point, a
// percentile, and the closed-loop load (N threads each doing one operation
// after another until a deadline).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

namespace airlock::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The p-th quantile (0..1) by rank; 0 for no values.
inline double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// `threads` threads each call `one(thread_index)` again and again until
// `seconds` have passed (an operation under way then finishes); returns the
// seconds from the start to the last thread's end, the denominator of a rate.
inline double run_for(int threads, int seconds, const std::function<void(int)>& one) {
  auto started = Clock::now();
  auto until = started + std::chrono::seconds(seconds);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      while (Clock::now() < until) one(t);
    });
  for (auto& t : pool) t.join();
  return ms_since(started) / 1000;
}

}  // namespace airlock::bench
