// On the default-size built-in world, every hop of every test question
// is answerable by retrieval: the expert's query for a hop returns, in the
// top-k passages, the entity the hop leads to.
#include <gtest/gtest.h>

#include "agentrl/envs/deepsearch/deepsearch_env.h"

namespace agentrl::envs::deepsearch {
namespace {

TEST(DeepsearchRetrieval, EveryHopOfTheDefaultTestSplitIsRetrievable) {
  DeepSearchConfig c;  // default world: 1500 people, 5000 questions
  c.retriever.cache_dir = std::string(AGENTRL_BINARY_DIR) + "/envs2-deepsearch-cache";
  DeepSearchSuite suite(c);
  size_t hops = 0, found = 0;
  for (size_t i = 0; i < suite.size("test"); ++i) {
    Task task = suite.get("test", i);
    for (const Hop& hop : suite.chain(task)) {
      ++hops;
      bool hit = false;
      for (auto& r : suite.retriever().search(hop_query(hop), static_cast<size_t>(c.topk)))
        hit |= r.passage.contents.find(hop.result) != std::string::npos;
      found += hit;
      if (!hit) ADD_FAILURE() << task.id << ": '" << hop_query(hop) << "' does not retrieve " << hop.result;
    }
  }
  EXPECT_EQ(found, hops);
  EXPECT_GT(hops, suite.size("test"));  // multi-hop questions are present
}

}  // namespace
}  // namespace agentrl::envs::deepsearch
