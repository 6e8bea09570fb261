#include "agentrl/core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "agentrl/core/error.h"

namespace agentrl {
namespace {

TEST(Rng, SeedExpandsThroughSplitMix64) {
  // SplitMix64 from x = 0 (Vigna's splitmix64.c): its first four outputs.
  EXPECT_EQ(Rng(0).state(), "xoshiro256ss:e220a8397b1dcdaf:6e789e6aa1b965f4:06c45d188009454f:f88bb8a8724c81ec");
}

TEST(Rng, MatchesXoshiro256StarStarReferenceSequence) {
  // Reference xoshiro256** (Blackman & Vigna) from state {1, 2, 3, 4}.
  Rng r;
  r.set_state("xoshiro256ss:1:2:3:4");
  EXPECT_EQ(r.next_u64(), 11520u);
  EXPECT_EQ(r.next_u64(), 0u);
  EXPECT_EQ(r.next_u64(), 1509978240u);
  EXPECT_EQ(r.next_u64(), 1215971899390074240u);
}

TEST(Rng, StateRoundTripResumesTheSameStream) {
  Rng a(42);
  for (int i = 0; i < 10; ++i) a.next_u64();
  Rng b(7);
  b.set_state(a.state());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, BadStateIsFormatErrorAndLeavesStreamUnchanged) {
  Rng r(3);
  const std::string before = r.state();
  try {
    r.set_state("mt19937:1");
    FAIL() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_STREQ(e.what(), "invalid RNG state 'mt19937:1' (expected xoshiro256ss:<4 hex words>)");
  }
  EXPECT_THROW(r.set_state("xoshiro256ss:0:0:0:0"), FormatError);
  EXPECT_EQ(r.state(), before);
}

TEST(Rng, UniformIntCoversInclusiveRangeEvenly) {
  Rng r(1);
  std::map<int64_t, int> counts;
  const int n = 60000;
  for (int i = 0; i < n; ++i) ++counts[r.uniform_int(-1, 4)];
  ASSERT_EQ(counts.size(), 6u);
  EXPECT_EQ(counts.begin()->first, -1);
  EXPECT_EQ(counts.rbegin()->first, 4);
  // Expected 10000 each; binomial sd ~ 91, allow 5 sd.
  for (const auto& [v, c] : counts) EXPECT_NEAR(c, 10000, 460) << v;
}

TEST(Rng, UniformIsInUnitIntervalWithMeanHalf) {
  Rng r(2);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // sd of the mean = sqrt(1/12 / 1e5) ~ 0.00091.
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
}

TEST(Rng, NormalHasZeroMeanUnitVariance) {
  Rng r(3);
  double s = 0, s2 = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal();
    s += x;
    s2 += x * x;
  }
  EXPECT_NEAR(s / n, 0.0, 0.02);
  EXPECT_NEAR(s2 / n, 1.0, 0.03);
}

TEST(Rng, ForkIsDeterministicDoesNotAdvanceAndDependsOnSalt) {
  Rng a(5);
  const std::string before = a.state();
  Rng f1 = a.fork(1), f1b = a.fork(1), f2 = a.fork(2);
  EXPECT_EQ(a.state(), before);
  EXPECT_EQ(f1.next_u64(), f1b.next_u64());
  EXPECT_NE(a.fork(1).next_u64(), f2.next_u64());
}

TEST(Rng, MixSeedIsDeterministicAndOrderSensitive) {
  EXPECT_EQ(mix_seed(1, 2), mix_seed(1, 2));
  EXPECT_NE(mix_seed(1, 2), mix_seed(2, 1));
}

}  // namespace
}  // namespace agentrl
