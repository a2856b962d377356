// A few threads for work that must not run on an HTTP I/O thread (copying a
// file into a session, taking a snapshot). Tasks run in the order given;
// stop() finishes the queued ones and joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace airlock::service {

class TaskPool {
 public:
  explicit TaskPool(size_t threads);
  ~TaskPool() { stop(); }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void post(std::function<void()> task);
  void stop();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace airlock::service
