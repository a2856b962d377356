// Pure: which failures of the store a caller tries again, and how long it
// waits between tries (docs/store.md "When the store fails"). A refusal
// (kInvalid, kRefused, kNotFound) gives the same answer every time; a failure
// of the store itself (kInternal: a full disk, an I/O error; kUnavailable:
// the connection lost, the server restarting) may pass later.
#pragma once

#include <chrono>
#include <thread>

#include "base/result.h"

namespace airlock::service {

bool store_may_pass_later(const Error& e);

// The wait before try number `attempt` (1, 2, ...): 50 ms, doubling, at most 1 s.
std::chrono::milliseconds store_retry_wait(int attempt);

// Calls `call` (a store call returning a Result or Status) until it passes,
// fails with a refusal, or `give_up()` (asked after each failure: the service
// stops) is true; returns its last answer.
template <class Call, class GiveUp>
auto until_the_store_answers(Call call, GiveUp give_up) -> decltype(call()) {
  for (int attempt = 1;; ++attempt) {
    auto r = call();
    if (r || !store_may_pass_later(r.error()) || give_up()) return r;
    std::this_thread::sleep_for(store_retry_wait(attempt));
  }
}

}  // namespace airlock::service
