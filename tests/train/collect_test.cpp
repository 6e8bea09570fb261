// Seeds of the generation rounds of an iteration (first round and the
// refills of dynamic sampling).
#include <gtest/gtest.h>

#include <set>

#include "agentrl/train/collect.h"

namespace agentrl::train {
namespace {

TEST(RolloutRound, NoTwoRoundsOfAnyIterationsShareASeed) {
  // max_retries may be any number >= 0; 200 refill rounds cross the old
  // iteration * 64 + attempt boundary (round 64 of iteration i was round 0
  // of iteration i + 1).
  std::set<int64_t> seen;
  for (int64_t it = 0; it < 50; ++it)
    for (int64_t attempt = 0; attempt <= 200; ++attempt)
      EXPECT_TRUE(seen.insert(rollout_round(it, attempt)).second) << "iteration " << it << ", round " << attempt;
  EXPECT_TRUE(seen.insert(rollout_round(int64_t{1} << 30, (int64_t{1} << 31) - 1)).second);
}

TEST(RolloutRound, TheFirst64RoundsKeepTheirEarlierNumbers) {
  // Runs made before refill rounds got their own range reproduce.
  EXPECT_EQ(rollout_round(0, 0), 0);
  EXPECT_EQ(rollout_round(7, 0), 7 * 64);
  EXPECT_EQ(rollout_round(7, 3), 7 * 64 + 3);
  EXPECT_EQ(rollout_round(7, 63), 7 * 64 + 63);
}

}  // namespace
}  // namespace agentrl::train
