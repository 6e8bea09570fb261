// A fixed-size pool of worker threads.
//
// Used for CPU-parallel work whose results are collected through futures
// (environment steps of many episodes, tokenisation of a dataset). Results
// must be gathered in submission order by the caller (futures), never in
// completion order, so outputs stay deterministic.
//
// submit() returns a std::future; an exception thrown by the task is stored
// in it and rethrown by future::get(). The destructor runs every task already
// queued, then joins the workers.
//
// Thread-safety: submit() and wait_idle() may be called from any thread,
// including from inside a task (but a task that waits on futures of tasks
// queued behind it in a pool of one thread deadlocks, as with any pool).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

namespace agentrl {

class ThreadPool {
 public:
  // num_threads == 0 means std::thread::hardware_concurrency() (at least 1).
  explicit ThreadPool(size_t num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <class F, class... Args>
  auto submit(F&& f, Args&&... args) -> std::future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> {
    using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>;
    auto task = std::make_shared<std::packaged_task<R()>>(
        [fn = std::forward<F>(f), tup = std::make_tuple(std::forward<Args>(args)...)]() mutable {
          return std::apply(fn, std::move(tup));
        });
    std::future<R> fut = task->get_future();
    enqueue([task] { (*task)(); });
    return fut;
  }

  // Blocks until the queue is empty and no task is running.
  void wait_idle();

  size_t size() const { return workers_.size(); }

 private:
  void enqueue(std::function<void()> job);
  void worker_loop();

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  size_t active_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// Runs fn(i) for i = 0, 1, ... (i < n) on a pool of `threads` workers
// (0: max(4, cores): env work mostly waits on subprocesses and I/O), in
// rounds: a round runs the next remaining() indices in parallel, then hands
// their results to sink in index order. Stops when remaining() is 0 or the
// indices are used up. When each sink call lowers remaining() by at most 1,
// sink sees exactly what the serial loop
//   for (i = 0; i < n && remaining() > 0; ++i) sink(fn(i));
// sees. fn must be safe to call concurrently; sink runs on the caller's
// thread. An exception from fn is rethrown here (after the round's other
// calls have finished).
template <class Fn, class Remaining, class Sink>
void parallel_in_order(size_t n, Remaining&& remaining, Fn&& fn, Sink&& sink, size_t threads = 0) {
  if (threads == 0) threads = std::max<size_t>(4, std::thread::hardware_concurrency());
  ThreadPool pool(threads);
  for (size_t next = 0; next < n;) {
    const size_t round = std::min<size_t>(n - next, remaining());
    if (round == 0) return;
    std::vector<std::future<std::invoke_result_t<Fn&, size_t>>> results;
    results.reserve(round);
    for (size_t i = next; i < next + round; ++i) results.push_back(pool.submit([&fn, i] { return fn(i); }));
    next += round;
    pool.wait_idle();
    for (auto& r : results) sink(r.get());
  }
}

}  // namespace agentrl
