// Specifications of the slot KV cache.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "agentrl/core/error.h"
#include "agentrl/model/kv_cache.h"
#include "tiny_model.h"

using namespace agentrl::model;

TEST(KvCache, PreallocatesLayersTimesSlotsTimesCapacity) {
  auto a = test_util::tiny_args();  // 2 layers, 2 kv heads, head_dim 8
  KvCache c(a, 3, 10, torch::kFloat32, torch::kCPU);
  EXPECT_EQ(c.keys(0).sizes(), torch::IntArrayRef({3, 2, 10, 8}));
  EXPECT_EQ(c.bytes(), 2 /*k,v*/ * 2 /*layers*/ * 3 * 2 * 10 * 8 * 4);
}

TEST(KvCache, AllocatesLowestFreeSlotAndReportsExhaustion) {
  KvCache c(test_util::tiny_args(), 2, 4, torch::kFloat32, torch::kCPU);
  EXPECT_EQ(c.allocate(), 0);
  EXPECT_EQ(c.allocate(), 1);
  EXPECT_FALSE(c.allocate().has_value());
  c.release(0);
  EXPECT_EQ(c.free_slots(), 1);
  EXPECT_EQ(c.allocate(), 0);
}

TEST(KvCache, CopyPrefixForksOnlyThePrefix) {
  KvCache c(test_util::tiny_args(), 2, 4, torch::kFloat32, torch::kCPU);
  c.keys(1)[0].fill_(3.0);
  c.values(1)[0].fill_(4.0);
  c.copy_prefix(0, 1, 3);
  EXPECT_TRUE(c.keys(1)[1].narrow(1, 0, 3).eq(3.0).all().item<bool>());
  EXPECT_TRUE(c.values(1)[1].narrow(1, 0, 3).eq(4.0).all().item<bool>());
  EXPECT_TRUE(c.keys(1)[1].narrow(1, 3, 1).eq(0.0).all().item<bool>());
}

TEST(KvCache, ZeroSlotsThrowNamingTheBudgetKey) {
  try {
    KvCache c(test_util::tiny_args(), 0, 16, torch::kFloat32, torch::kCPU);
    FAIL();
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("engine.kv_budget_tokens"), std::string::npos) << e.what();
  }
}
