// A Retriever that gathers the searches of concurrently stepping episodes
// into one call of the retriever it wraps: Search-R1 sends all queries of a
// turn in one request to its retrieval server (which encodes them as one
// batch on the GPU); agentrl's envs step on parallel threads, so the queries
// of one lock-step turn arrive within a short time of each other.
//
// A search waits until `max_batch` queries are pending or `window_ms` has
// passed since the first pending one, then one search_batch() of the inner
// retriever answers all of them (requests with different k are sent as
// separate calls). A failure of that call is the failure of every search in
// it. get() passes straight through.
//
// Thread-safety: search_batch() and get() may be called from many threads at
// once; one dispatcher thread makes the inner calls. The destructor answers
// nothing still pending (there is none: each caller waits for its answer).
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "agentrl/envs/deepsearch/retriever.h"

namespace agentrl::envs::deepsearch {

class BatchingRetriever final : public Retriever {
 public:
  BatchingRetriever(std::shared_ptr<const Retriever> inner, size_t max_batch, double window_ms);
  ~BatchingRetriever() override;
  std::vector<std::vector<RetrievedPassage>> search_batch(const std::vector<std::string>& queries,
                                                          size_t k) const override;
  std::optional<Passage> get(const std::string& id) const override { return inner_->get(id); }

 private:
  struct Pending {
    std::vector<std::string> queries;
    size_t k;
    std::promise<std::vector<std::vector<RetrievedPassage>>> answer;
  };
  void dispatch_loop();
  void answer(std::vector<std::shared_ptr<Pending>> batch) const;

  std::shared_ptr<const Retriever> inner_;
  size_t max_batch_;
  double window_ms_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::deque<std::shared_ptr<Pending>> pending_;
  mutable size_t pending_queries_ = 0;
  bool stop_ = false;
  std::thread dispatcher_;
};

}  // namespace agentrl::envs::deepsearch
