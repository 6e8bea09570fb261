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

}  // namespace agentrl
