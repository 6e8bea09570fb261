#include "agentrl/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <set>
#include <stdexcept>

namespace agentrl {
namespace {

TEST(ThreadPool, ManyTasksAllRunAndReturnResultsInSubmissionOrder) {
  ThreadPool pool(4);
  std::vector<std::future<int64_t>> futures;
  for (int64_t i = 0; i < 10000; ++i) futures.push_back(pool.submit([](int64_t x) { return x * x; }, i));
  int64_t sum = 0;
  for (int64_t i = 0; i < 10000; ++i) {
    const int64_t v = futures[i].get();
    EXPECT_EQ(v, i * i);
    sum += v;
  }
  // sum of squares 0..n-1 = (n-1) n (2n-1) / 6
  EXPECT_EQ(sum, int64_t{9999} * 10000 * 19999 / 6);
}

TEST(ThreadPool, ExceptionPropagatesThroughFuture) {
  ThreadPool pool(2);
  auto f = pool.submit([]() -> int { throw std::runtime_error("task failed: 42"); });
  try {
    f.get();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task failed: 42");
  }
  // The worker survives.
  EXPECT_EQ(pool.submit([] { return 7; }).get(), 7);
}

TEST(ThreadPool, WaitIdleWaitsForAllTasks) {
  ThreadPool pool(3);
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i)
    pool.submit([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      ++done;
    });
  pool.wait_idle();
  EXPECT_EQ(done.load(), 50);
}

TEST(ThreadPool, DestructorRunsQueuedTasks) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 100; ++i) pool.submit([&] { ++done; });
  }
  EXPECT_EQ(done.load(), 100);
}

TEST(ThreadPool, UsesAllWorkers) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4u);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  std::vector<std::future<void>> fs;
  for (int i = 0; i < 4; ++i)
    fs.push_back(pool.submit([&] {
      ++arrived;
      // Each task waits until all four are running at once.
      while (arrived.load() < 4) std::this_thread::yield();
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }));
  for (auto& f : fs) f.get();
  EXPECT_EQ(ids.size(), 4u);
}

TEST(ThreadPool, ZeroMeansHardwareConcurrency) {
  ThreadPool pool(0);
  EXPECT_GE(pool.size(), 1u);
}

}  // namespace
TEST(ParallelInOrder, SinkSeesWhatTheSerialLoopSees) {
  // Odd i "fail" (no result); take the first 7 successes of 40 indices.
  auto fn = [](size_t i) { return i % 2 == 0 ? static_cast<int>(i) : -1; };
  std::vector<int> serial, parallel;
  for (size_t i = 0; i < 40 && serial.size() < 7; ++i)
    if (int v = fn(i); v >= 0) serial.push_back(v);
  size_t calls = 0;
  parallel_in_order(
      40, [&] { return 7 - parallel.size(); },
      [&](size_t i) {
        std::this_thread::sleep_for(std::chrono::microseconds((40 - i) * 50));  // finish out of order
        return fn(i);
      },
      [&](int v) {
        ++calls;
        if (v >= 0) parallel.push_back(v);
      },
      3);
  EXPECT_EQ(parallel, serial);
  EXPECT_EQ(parallel, (std::vector<int>{0, 2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(calls, 13u);  // rounds of 7, 3, 2, 1: no index past the 7th success is run
}

TEST(ParallelInOrder, StopsWhenTheIndicesRunOutAndRethrows) {
  std::vector<size_t> seen;
  parallel_in_order(5, [] { return size_t{100}; }, [](size_t i) { return i; }, [&](size_t i) { seen.push_back(i); });
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_THROW(parallel_in_order(
                   5, [] { return size_t{5}; },
                   [](size_t i) {
                     if (i == 3) throw std::runtime_error("episode 3");
                     return i;
                   },
                   [](size_t) {}),
               std::runtime_error);
}

}  // namespace agentrl
