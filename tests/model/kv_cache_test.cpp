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

TEST(KvBudget, BytesPerTokenAreKAndVOfEveryLayer) {
  auto a = test_util::tiny_args();  // 2 layers, 2 KV heads, head_dim 32 / 4 = 8
  EXPECT_EQ(kv_bytes_per_token(a, torch::kFloat32), 2 * 2 * 2 * 8 * 4);
  EXPECT_EQ(kv_bytes_per_token(a, torch::kBFloat16), 2 * 2 * 2 * 8 * 2);
  // Qwen2.5-7B: 28 layers, 4 KV heads of 128, bf16 = 57,344 bytes a token.
  a.num_hidden_layers = 28;
  a.num_key_value_heads = 4;
  a.num_attention_heads = 28;
  a.hidden_size = 3584;
  a.head_dim = 128;
  EXPECT_EQ(kv_bytes_per_token(a, torch::kBFloat16), 57344);
  KvCache c(test_util::tiny_args(), 3, 10, torch::kFloat32, torch::kCPU);
  EXPECT_EQ(c.bytes(), 3 * 10 * kv_bytes_per_token(test_util::tiny_args(), torch::kFloat32));
}

TEST(KvBudget, AFractionOfTheFreeMemoryInWholeSequences) {
  // 40% of 80 GiB at 57,344 B/token in 8192-token sequences: 73 sequences.
  const int64_t free = 80LL << 30;
  EXPECT_EQ(kv_budget_from_memory(free, 0.4, 57344, 8192), 73 * 8192);
  EXPECT_EQ(kv_budget_from_memory(100 * 1000, 1.0, 10, 1000), 10 * 1000);
}

TEST(KvBudget, NotEvenOneSequenceIsAConfigErrorNamingTheNumbers) {
  try {
    kv_budget_from_memory(64LL << 20, 0.5, 57344, 8192);  // 32 MiB usable, 448 MiB needed
    FAIL() << "expected a ConfigError";
  } catch (const agentrl::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("engine.kv_memory_fraction"), std::string::npos) << m;
    EXPECT_NE(m.find("64 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("448 MiB"), std::string::npos) << m;
  }
}

TEST(KvBudget, FreeHostMemoryIsReadable) { EXPECT_GT(free_device_memory(torch::kCPU), 1LL << 20); }
