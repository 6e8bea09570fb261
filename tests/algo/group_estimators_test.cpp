// Specifications of the group-baseline estimators (grpo, drgrpo, rloo,
// reinforce_pp) and of the estimator registry. Expected values are written
// from the formulas in each estimator's paper, by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/grpo.h"
#include "agentrl/core/error.h"
#include "algo_test_util.h"

namespace agentrl::algo {
namespace {

using testing::make_traj;

AdvantageResult run(const std::string& name, const std::vector<rollout::Trajectory>& batch,
                    AlgorithmConfig cfg = {}) {
  cfg.adv_estimator = name;
  LocalCollective local;
  return make_estimator(cfg)->compute(batch, local);
}

TEST(Grpo, BinaryRewardsGiveUnitStdAdvantagesWithUnbiasedStd) {
  // rewards {1,0,0,1}: mean 0.5, unbiased std sqrt(4 * 0.25 / 3) = sqrt(1/3).
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1), make_traj(0, 1, 0), make_traj(0, 2, 0), make_traj(0, 3, 1)};
  auto r = run("grpo", b);
  const double a = 0.5 / (std::sqrt(1.0 / 3.0) + 1e-6);  // = 0.8660...
  EXPECT_NEAR(r.turn_advantages[0][0], a, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][0], -a, 1e-6);
  EXPECT_NEAR(r.turn_advantages[2][0], -a, 1e-6);
  EXPECT_NEAR(r.turn_advantages[3][0], a, 1e-6);
}

TEST(Grpo, SameAdvantageOnEveryTurnOfATrajectory) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1, {2, 3, 1}), make_traj(0, 1, 0, {1})};
  auto r = run("grpo", b);
  ASSERT_EQ(r.turn_advantages[0].size(), 3u);
  // {1, 0}: mean 0.5, std sqrt(0.5).
  const double a = 0.5 / (std::sqrt(0.5) + 1e-6);
  for (float x : r.turn_advantages[0]) EXPECT_NEAR(x, a, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][0], -a, 1e-6);
}

TEST(Grpo, SingletonAndConstantGroupsGetZero) {
  std::vector<rollout::Trajectory> b = {make_traj(5, 0, 3.0), make_traj(6, 0, 2.0), make_traj(6, 1, 2.0)};
  auto r = run("grpo", b);
  EXPECT_EQ(r.turn_advantages[0][0], 0.0f);
  EXPECT_EQ(r.turn_advantages[1][0], 0.0f);
  EXPECT_EQ(r.turn_advantages[2][0], 0.0f);
}

TEST(Grpo, GroupsAreNormalisedIndependently) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1), make_traj(1, 0, 10), make_traj(0, 1, 0), make_traj(1, 1, 30)};
  auto r = run("grpo", b);
  // group 0 {1, 0}: +-0.5 / sqrt(0.5); group 1 {10, 30}: +-10 / sqrt(200).
  EXPECT_NEAR(r.turn_advantages[0][0], 0.5 / (std::sqrt(0.5) + 1e-6), 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][0], -10.0 / (std::sqrt(200.0) + 1e-6), 1e-6);
  EXPECT_NEAR(r.turn_advantages[3][0], 10.0 / (std::sqrt(200.0) + 1e-6), 1e-6);
}

TEST(Grpo, NormByStdFalseIsDrGrpo) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 3), make_traj(0, 1, 1), make_traj(0, 2, 2)};
  AlgorithmConfig cfg;
  cfg.options<GrpoConfig>("grpo").norm_by_std = false;
  auto r = run("grpo", b, cfg);
  auto d = run("drgrpo", b);  // drgrpo ignores grpo.norm_by_std
  // mean 2: {1, -1, 0}.
  for (const auto* x : {&r, &d}) {
    EXPECT_NEAR(x->turn_advantages[0][0], 1.0, 1e-6);
    EXPECT_NEAR(x->turn_advantages[1][0], -1.0, 1e-6);
    EXPECT_NEAR(x->turn_advantages[2][0], 0.0, 1e-6);
  }
}

TEST(Grpo, LossMaskedTrajectoryKeepsItsRewardInGroupStatsButGetsZero) {
  auto masked = make_traj(0, 2, 1);
  masked.loss_masked = true;
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1), make_traj(0, 1, 0), masked, make_traj(0, 3, 0)};
  auto r = run("grpo", b);
  // Stats over {1, 0, 1, 0}: mean 0.5, std sqrt(1/3).
  const double a = 0.5 / (std::sqrt(1.0 / 3.0) + 1e-6);
  EXPECT_NEAR(r.turn_advantages[0][0], a, 1e-6);
  EXPECT_NEAR(r.turn_advantages[1][0], -a, 1e-6);
  EXPECT_EQ(r.turn_advantages[2][0], 0.0f);
}

TEST(Rloo, LeaveOneOutBaseline) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1), make_traj(0, 1, 0), make_traj(0, 2, 0), make_traj(0, 3, 1),
                                        make_traj(1, 0, 3), make_traj(1, 1, 1), make_traj(1, 2, 2), make_traj(2, 0, 9)};
  auto r = run("rloo", b);
  EXPECT_NEAR(r.turn_advantages[0][0], 1.0 - 1.0 / 3.0, 1e-6);  // 1 - mean{0,0,1}
  EXPECT_NEAR(r.turn_advantages[1][0], 0.0 - 2.0 / 3.0, 1e-6);  // 0 - mean{1,0,1}
  EXPECT_NEAR(r.turn_advantages[4][0], 3.0 - 1.5, 1e-6);        // 3 - mean{1,2}
  EXPECT_NEAR(r.turn_advantages[5][0], 1.0 - 2.5, 1e-6);
  EXPECT_NEAR(r.turn_advantages[6][0], 0.0, 1e-6);
  EXPECT_EQ(r.turn_advantages[7][0], 0.0f);  // singleton
}

TEST(ReinforcePp, GroupMeanBaselineThenTokenWhitening) {
  // Centred rewards {0.5, -0.5, 1, -1} with {1, 3, 2, 2} tokens: token mean
  // -1/8; unbiased token variance 4.875 / 7. Values from the formulas.
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1, {1}), make_traj(0, 1, 0, {1, 2}), make_traj(1, 0, 2, {2}),
                                        make_traj(1, 1, 0, {2})};
  auto r = run("reinforce_pp", b);
  const double sd = std::sqrt(4.875 / 7.0 + 1e-8);
  EXPECT_NEAR(r.turn_advantages[0][0], 0.625 / sd, 1e-5);  // 0.74893
  EXPECT_NEAR(r.turn_advantages[1][0], -0.375 / sd, 1e-5);
  EXPECT_NEAR(r.turn_advantages[1][1], -0.375 / sd, 1e-5);
  EXPECT_NEAR(r.turn_advantages[2][0], 1.125 / sd, 1e-5);
  EXPECT_NEAR(r.turn_advantages[3][0], -0.875 / sd, 1e-5);
  EXPECT_NEAR(r.turn_advantages[0][0], 0.7489308565, 1e-5);
}

TEST(ReinforcePp, TwoRankCollectiveEqualsOneProcess) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1, {1}), make_traj(0, 1, 0, {1, 2}), make_traj(1, 0, 2, {2}),
                                        make_traj(1, 1, 0, {2}), make_traj(2, 0, 5, {4}), make_traj(2, 1, 1, {1})};
  auto single = run("reinforce_pp", b);
  std::vector<std::vector<rollout::Trajectory>> parts = {{b[0], b[1]}, {b[2], b[3], b[4], b[5]}};
  std::vector<AdvantageResult> out(2);
  testing::ThreadCollectiveGroup group(2);
  AlgorithmConfig cfg;
  cfg.adv_estimator = "reinforce_pp";
  auto est = make_estimator(cfg);
  group.run([&](int rank, Collective& c) { out[rank] = est->compute(parts[rank], c); });
  EXPECT_NEAR(out[0].turn_advantages[0][0], single.turn_advantages[0][0], 1e-6);
  EXPECT_NEAR(out[0].turn_advantages[1][1], single.turn_advantages[1][1], 1e-6);
  EXPECT_NEAR(out[1].turn_advantages[2][0], single.turn_advantages[4][0], 1e-6);
  EXPECT_NEAR(out[1].turn_advantages[3][0], single.turn_advantages[5][0], 1e-6);
}

TEST(EstimatorRegistry, ListsEveryBuiltInEstimator) {
  EXPECT_THAT(registered_estimators(),
              ::testing::IsSupersetOf({"drgrpo", "empg", "gigpo", "grpo", "reinforce_pp", "rloo"}));
}

TEST(EstimatorRegistry, UnknownNameErrorListsRegisteredNames) {
  AlgorithmConfig cfg;
  cfg.adv_estimator = "ppo_gae";
  try {
    make_estimator(cfg);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, ::testing::HasSubstr("algorithm.adv_estimator"));
    EXPECT_THAT(msg, ::testing::HasSubstr("'ppo_gae'"));
    EXPECT_THAT(msg, ::testing::HasSubstr("drgrpo, empg, gigpo, grpo, reinforce_pp, rloo"));
  }
}

TEST(EstimatorRegistry, DuplicateRegistrationThrows) {
  EXPECT_THROW(register_estimator("grpo", [](const AlgorithmConfig&) { return std::unique_ptr<AdvantageEstimator>(); }),
               ConfigError);
}

}  // namespace
}  // namespace agentrl::algo
