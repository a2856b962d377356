// Work done on a second thread while the caller goes on: started by the
// constructor, waited for by join() or the destructor. When no thread can be
// made, the work runs at once on the caller's thread: the same work, only not
// side by side.
#pragma once

#include <functional>
#include <system_error>
#include <thread>
#include <utility>

namespace airlock {

class Beside {
 public:
  explicit Beside(std::function<void()> work) {
    try {
      thread_ = std::thread(work);
    } catch (const std::system_error&) {
      work();
    }
  }
  Beside(const Beside&) = delete;
  Beside& operator=(const Beside&) = delete;
  ~Beside() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace airlock
