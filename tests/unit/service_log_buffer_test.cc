#include "service/log_buffer.h"

#include <gtest/gtest.h>

#include <thread>

using airlock::service::LogBuffer;
using airlock::service::OutputChunk;

TEST(LogBuffer, ReplaysFromAnyOffsetAcrossStreams) {
  LogBuffer b(1024);
  b.append(false, "hello ");
  b.append(true, "oops\n");
  b.append(false, "world\n");
  auto all = b.after(0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].offset, 6u);
  EXPECT_TRUE(all[1].is_stderr);
  auto mid = b.after(8);  // inside the stderr chunk
  ASSERT_EQ(mid.size(), 2u);
  EXPECT_EQ(mid[0].offset, 8u);
  EXPECT_EQ(mid[0].text, "ps\n");
  EXPECT_TRUE(b.after(b.end_offset()).empty());
}

TEST(LogBuffer, CapsAndCounts) {
  LogBuffer b(10);
  b.append(false, "0123456789abc");
  b.append(false, "more");
  EXPECT_EQ(b.end_offset(), 10u);
  EXPECT_TRUE(b.truncated());
  EXPECT_EQ(b.after(0)[0].text, "0123456789");
}

TEST(LogBuffer, SubscribersGetBacklogThenLiveChunksThenDone) {
  LogBuffer b(1024);
  b.append(false, "one ");
  std::vector<std::string> got;
  int done = 0;
  auto id = b.subscribe(2, [&](const OutputChunk& c) { got.push_back(c.text); }, [&] { ++done; });
  EXPECT_NE(id, 0u);
  b.append(true, "two ");
  b.finish();
  b.append(false, "ignored after finish");
  EXPECT_EQ(got, (std::vector<std::string>{"e ", "two "}));
  EXPECT_EQ(done, 1);
  // Subscribing to a finished buffer delivers everything and finishes at once.
  std::string all;
  int done2 = 0;
  EXPECT_EQ(b.subscribe(0, [&](const OutputChunk& c) { all += c.text; }, [&] { ++done2; }), 0u);
  EXPECT_EQ(all, "one two ");
  EXPECT_EQ(done2, 1);
}

TEST(LogBuffer, UnsubscribedListenersHearNothing) {
  LogBuffer b(1024);
  int calls = 0;
  auto id = b.subscribe(0, [&](const OutputChunk&) { ++calls; }, [] {});
  b.unsubscribe(id);
  b.append(false, "x");
  EXPECT_EQ(calls, 0);
}

TEST(LogBuffer, WaitWakesOnAppend) {
  LogBuffer b(1024);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    b.append(false, "x");
  });
  b.wait_for_more(0, std::chrono::seconds(5));
  EXPECT_EQ(b.end_offset(), 1u);
  writer.join();
}

// The final event of a stream reads the buffer (its size) from the done
// callback: that must not deadlock, whether the buffer finishes later or
// had already finished when the reader subscribed.
TEST(LogBuffer, DoneMayReadTheBuffer) {
  LogBuffer b(1024);
  b.append(false, "abc");
  uint64_t seen_late = 0, seen_early = 0;
  b.subscribe(0, [](const airlock::service::OutputChunk&) {}, [&] { seen_late = b.end_offset(); });
  b.append(true, "de");
  b.finish();
  EXPECT_EQ(seen_late, 5u);
  b.subscribe(0, [](const airlock::service::OutputChunk&) {}, [&] { seen_early = b.end_offset(); });
  EXPECT_EQ(seen_early, 5u);
}
