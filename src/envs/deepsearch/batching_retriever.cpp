#include "agentrl/envs/deepsearch/batching_retriever.h"

#include <chrono>
#include <map>

#include "agentrl/core/error.h"

namespace agentrl::envs::deepsearch {

BatchingRetriever::BatchingRetriever(std::shared_ptr<const Retriever> inner, size_t max_batch, double window_ms)
    : inner_(std::move(inner)), max_batch_(std::max<size_t>(1, max_batch)), window_ms_(window_ms) {
  dispatcher_ = std::thread([this] { dispatch_loop(); });
}

BatchingRetriever::~BatchingRetriever() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  dispatcher_.join();
}

std::vector<std::vector<RetrievedPassage>> BatchingRetriever::search_batch(const std::vector<std::string>& queries,
                                                                           size_t k) const {
  if (queries.empty()) return {};
  auto p = std::make_shared<Pending>();
  p->queries = queries;
  p->k = k;
  auto answer = p->answer.get_future();
  {
    std::lock_guard<std::mutex> g(mu_);
    pending_.push_back(p);
    pending_queries_ += queries.size();
  }
  cv_.notify_all();
  return answer.get();  // rethrows the inner call's failure
}

void BatchingRetriever::dispatch_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, nothing left
    // The window opens with the first pending search: later ones join it
    // until it closes or the batch is full.
    const auto close = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double, std::milli>(window_ms_));
    cv_.wait_until(lock, close, [&] { return stop_ || pending_queries_ >= max_batch_; });
    std::vector<std::shared_ptr<Pending>> batch;
    size_t taken = 0;
    while (!pending_.empty() && (batch.empty() || taken + pending_.front()->queries.size() <= max_batch_)) {
      taken += pending_.front()->queries.size();
      batch.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    pending_queries_ -= taken;
    lock.unlock();
    answer(std::move(batch));
    lock.lock();
  }
}

// One inner call per distinct k; each search gets its slice of the results.
void BatchingRetriever::answer(std::vector<std::shared_ptr<Pending>> batch) const {
  std::map<size_t, std::vector<std::shared_ptr<Pending>>> by_k;
  for (auto& p : batch) by_k[p->k].push_back(p);
  for (auto& [k, group] : by_k) {
    std::vector<std::string> queries;
    for (const auto& p : group) queries.insert(queries.end(), p->queries.begin(), p->queries.end());
    try {
      auto results = inner_->search_batch(queries, k);
      if (results.size() != queries.size())
        throw IoError("retriever answered " + std::to_string(results.size()) + " result lists for " +
                      std::to_string(queries.size()) + " queries");
      size_t at = 0;
      for (auto& p : group) {
        std::vector<std::vector<RetrievedPassage>> mine(results.begin() + static_cast<std::ptrdiff_t>(at),
                                                        results.begin() + static_cast<std::ptrdiff_t>(at + p->queries.size()));
        at += p->queries.size();
        p->answer.set_value(std::move(mine));
      }
    } catch (...) {
      for (auto& p : group) p->answer.set_exception(std::current_exception());
    }
  }
}

}  // namespace agentrl::envs::deepsearch
