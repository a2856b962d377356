// Beside: work on a second thread, waited for by join() or the destructor.
#include "base/beside.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace airlock;

TEST(Beside, RunsTheWorkOnAnotherThreadAndJoinWaitsForIt) {
  std::atomic<bool> release{false};
  std::atomic<bool> done{false};
  std::thread::id worker;
  Beside beside([&] {
    worker = std::this_thread::get_id();
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    done = true;
  });
  // The caller goes on while the work waits: it runs beside, not before.
  EXPECT_FALSE(done);
  release = true;
  beside.join();
  EXPECT_TRUE(done);
  EXPECT_NE(worker, std::this_thread::get_id());
  beside.join();  // a second join is a no-op
}

TEST(Beside, TheDestructorWaitsForTheWork) {
  std::atomic<int> steps{0};
  {
    Beside beside([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      steps = 1;
    });
  }
  EXPECT_EQ(steps, 1);
}
