// Specification of BatchingRetriever (deepsearch/batching_retriever.h): the
// searches of concurrently stepping episodes reach the wrapped retriever as
// one call, each caller gets its own results, failures reach every caller.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "agentrl/core/error.h"
#include "agentrl/envs/deepsearch/batching_retriever.h"

namespace agentrl::envs::deepsearch {
namespace {

// Answers each query with one passage whose id is "<query>#<k>"; records the
// size of every call.
class EchoRetriever final : public Retriever {
 public:
  std::vector<std::vector<RetrievedPassage>> search_batch(const std::vector<std::string>& queries,
                                                          size_t k) const override {
    std::lock_guard<std::mutex> g(mu);
    calls.push_back(queries.size());
    if (fail) throw IoError("retriever down");
    std::vector<std::vector<RetrievedPassage>> out;
    for (const auto& q : queries) out.push_back({RetrievedPassage{Passage{q + "#" + std::to_string(k), q}, 1.0}});
    return out;
  }
  std::optional<Passage> get(const std::string& id) const override { return Passage{id, "by id"}; }
  mutable std::mutex mu;
  mutable std::vector<size_t> calls;
  std::atomic<bool> fail{false};
};

// Runs `n` searches from `n` threads at once; returns the ids they got.
std::vector<std::string> search_concurrently(const Retriever& r, int n, std::vector<size_t> ks = {}) {
  std::vector<std::string> got(static_cast<size_t>(n));
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < n) std::this_thread::yield();
      const size_t k = ks.empty() ? 3 : ks[static_cast<size_t>(i)];
      got[static_cast<size_t>(i)] = r.search("q" + std::to_string(i), k).at(0).passage.id;
    });
  }
  for (auto& t : threads) t.join();
  return got;
}

TEST(BatchingRetriever, ConcurrentSearchesShareOneCallAndGetTheirOwnResults) {
  auto inner = std::make_shared<EchoRetriever>();
  BatchingRetriever r(inner, 512, 500.0);
  auto got = search_concurrently(r, 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], "q" + std::to_string(i) + "#3");
  ASSERT_LE(inner->calls.size(), 2u) << "searches started together are gathered";
  size_t total = 0;
  for (auto c : inner->calls) total += c;
  EXPECT_EQ(total, 8u);
  EXPECT_EQ(r.get("d1")->contents, "by id");
}

TEST(BatchingRetriever, BatchesStopAtTheLimitAndDifferentKAreSeparateCalls) {
  auto inner = std::make_shared<EchoRetriever>();
  BatchingRetriever r(inner, 3, 300.0);
  search_concurrently(r, 7);
  EXPECT_GE(inner->calls.size(), 3u);
  for (auto c : inner->calls) EXPECT_LE(c, 3u);
  auto inner2 = std::make_shared<EchoRetriever>();
  BatchingRetriever r2(inner2, 512, 300.0);
  auto got = search_concurrently(r2, 4, {1, 5, 1, 5});
  EXPECT_EQ(got, (std::vector<std::string>{"q0#1", "q1#5", "q2#1", "q3#5"}));
  EXPECT_GE(inner2->calls.size(), 2u);
}

TEST(BatchingRetriever, AFailedCallFailsEverySearchInIt) {
  auto inner = std::make_shared<EchoRetriever>();
  inner->fail = true;
  BatchingRetriever r(inner, 512, 100.0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        r.search("q", 2);
      } catch (const IoError&) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 4);
  inner->fail = false;
  EXPECT_EQ(r.search("again", 2).at(0).passage.id, "again#2") << "the next call works";
}

}  // namespace
}  // namespace agentrl::envs::deepsearch
