// Specifications of GiGPO (arXiv 2505.10978): episode groups, anchor-state
// step groups, discounted step returns, the omega combination and both
// normalisation modes. Expected numbers by hand from eqs. 3-8.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/gigpo.h"
#include "algo_test_util.h"

namespace agentrl::algo {
namespace {

using testing::make_turn;

rollout::Trajectory walk(int64_t group, int64_t sample, double reward, std::vector<std::string> obs,
                         std::vector<double> step_rewards) {
  rollout::Trajectory t;
  t.group_id = group;
  t.sample_index = sample;
  t.reward = reward;
  for (size_t k = 0; k < obs.size(); ++k) t.turns.push_back(make_turn({1.0f}, obs[k], step_rewards[k]));
  return t;
}

// gamma = 0.5. T1: s0 -> s1 -> s2, step rewards 0,0,1: returns {0.25, 0.5, 1}.
// T2: s0 -> s1 -> s1, no reward: returns {0, 0, 0}. T3 (another group) also
// starts at s0 and must not join group 0's anchor groups.
std::vector<rollout::Trajectory> batch() {
  return {walk(0, 0, 1.0, {"s0", "s1", "s2"}, {0, 0, 1}), walk(0, 1, 0.0, {"s0", "s1", "s1"}, {0, 0, 0}),
          walk(1, 0, 7.0, {"s0"}, {7})};
}

AdvantageResult run(const std::vector<rollout::Trajectory>& b, const std::string& mode, const std::string& step_reward = "turn") {
  AlgorithmConfig cfg;
  cfg.adv_estimator = "gigpo";
  cfg.options<GigpoConfig>("gigpo").gamma = 0.5;
  cfg.options<GigpoConfig>("gigpo").omega = 1.0;
  cfg.options<GigpoConfig>("gigpo").mode = mode;
  cfg.options<GigpoConfig>("gigpo").step_reward = step_reward;
  LocalCollective local;
  return make_estimator(cfg)->compute(b, local);
}

TEST(Gigpo, MeanNormCombinesEpisodeAndAnchorStepAdvantages) {
  auto r = run(batch(), "mean_norm");
  // Episode: {1, 0} -> +-0.5. Step groups: s0 {0.25, 0} -> +-0.125;
  // s1 {0.5, 0, 0} -> {1/3, -1/6, -1/6}; s2 {1} alone -> 0.
  EXPECT_NEAR(r.turn_advantages[0][0], 0.5 + 0.125, 1e-6);
  EXPECT_NEAR(r.turn_advantages[0][1], 0.5 + 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(r.turn_advantages[0][2], 0.5, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][0], -0.5 - 0.125, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][1], -0.5 - 1.0 / 6.0, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][2], -0.5 - 1.0 / 6.0, 1e-6);
}

TEST(Gigpo, TurnDetailsNameEachStepsGroupAndParts) {
  auto r = run(batch(), "mean_norm");
  ASSERT_EQ(r.turn_details.size(), 3u);
  const auto& d = r.turn_details;
  EXPECT_EQ(d[0][0].at("gigpo/step_group_size"), 2.0);  // s0 of group 0: both episodes
  EXPECT_EQ(d[0][1].at("gigpo/step_group_size"), 3.0);  // s1: once in episode 0, twice in episode 1
  EXPECT_EQ(d[0][2].at("gigpo/step_group_size"), 1.0);  // s2 alone
  EXPECT_EQ(d[2][0].at("gigpo/step_group_size"), 1.0);  // s0 of group 1 is another anchor group
  EXPECT_NEAR(d[0][1].at("gigpo/episode_advantage"), 0.5, 1e-9);
  EXPECT_NEAR(d[0][1].at("gigpo/step_advantage"), 1.0 / 3.0, 1e-9);
  // The turn advantage is their combination (omega = 1).
  EXPECT_NEAR(r.turn_advantages[0][1], d[0][1].at("gigpo/episode_advantage") + d[0][1].at("gigpo/step_advantage"), 1e-6);
}

TEST(Gigpo, AnchorGroupsDoNotCrossEpisodeGroups) {
  auto r = run(batch(), "mean_norm");
  // T3 is alone in group 1 and in its (group 1, "s0") step group.
  EXPECT_EQ(r.turn_advantages[2][0], 0.0f);
  EXPECT_EQ(r.diagnostics.at("gigpo/step_groups"), 4.0);  // (0,s0) (0,s1) (0,s2) (1,s0)
  EXPECT_NEAR(r.diagnostics.at("gigpo/nontrivial_step_group_frac"), 0.5, 1e-12);
}

TEST(Gigpo, MeanStdNormDividesBothLevelsByTheirStd) {
  auto r = run(batch(), "mean_std_norm");
  const double ep = 0.5 / (std::sqrt(0.5) + 1e-6);
  const double s0 = 0.125 / (std::sqrt(0.03125) + 1e-6);      // std{0.25, 0} = sqrt(0.03125)
  const double s1_hi = (1.0 / 3.0) / (std::sqrt(1.0 / 12.0) + 1e-6);  // std{0.5, 0, 0} = sqrt(1/12)
  const double s1_lo = (-1.0 / 6.0) / (std::sqrt(1.0 / 12.0) + 1e-6);
  EXPECT_NEAR(r.turn_advantages[0][0], ep + s0, 1e-5);
  EXPECT_NEAR(r.turn_advantages[0][1], ep + s1_hi, 1e-5);
  EXPECT_NEAR(r.turn_advantages[1][2], -ep + s1_lo, 1e-5);
}

TEST(Gigpo, OmegaWeightsTheStepLevelTerm) {
  AlgorithmConfig cfg;
  cfg.adv_estimator = "gigpo";
  cfg.options<GigpoConfig>("gigpo").gamma = 0.5;
  cfg.options<GigpoConfig>("gigpo").omega = 0.0;
  LocalCollective local;
  auto r = make_estimator(cfg)->compute(batch(), local);
  EXPECT_NEAR(r.turn_advantages[0][1], 0.5, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][1], -0.5, 1e-6);
}

TEST(Gigpo, OutcomeStepRewardPutsTheEpisodeRewardOnTheLastStep) {
  auto b = batch();
  for (auto& t : b)
    for (auto& turn : t.turns) turn.reward = 0.0;  // only the outcome remains
  auto r = run(b, "mean_norm", "outcome");
  // Same returns as the turn rewards above ({0.25, 0.5, 1} and zeros).
  EXPECT_NEAR(r.turn_advantages[0][0], 0.625, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][1], -0.5 - 1.0 / 6.0, 1e-6);
}

}  // namespace
}  // namespace agentrl::algo
