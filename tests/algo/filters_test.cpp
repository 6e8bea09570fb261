// Specifications of the trajectory filters (void_turn, zero_variance,
// overlong), the filter registry and the SimpleTIR void-turn predicates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/diagnostics.h"
#include "agentrl/algo/filter.h"
#include "agentrl/core/error.h"
#include "algo_test_util.h"

namespace agentrl::algo {
namespace {

using testing::make_traj;

std::unique_ptr<TrajectoryFilter> filter(const std::string& name, AlgorithmConfig cfg = {}) {
  return make_filter(name, cfg);
}

std::vector<rollout::Trajectory> batch_with_void_turn() {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1, {1, 1}), make_traj(0, 1, 0, {1, 1}), make_traj(0, 2, 1, {1}),
                                        make_traj(0, 3, 0, {1})};
  b[2].turns[0].void_turn = true;
  return b;
}

TEST(VoidTurnFilter, MasksWholeTrajectoryAndKeepsItInGroupStats) {
  auto b = batch_with_void_turn();
  auto report = filter("void_turn")->apply(b, FilterContext{});
  ASSERT_EQ(b.size(), 4u);
  EXPECT_TRUE(b[2].loss_masked);
  EXPECT_FALSE(b[0].loss_masked);
  EXPECT_EQ(report.flagged_trajectories, 1);
  EXPECT_EQ(report.masked_trajectories, 1);
  EXPECT_EQ(report.dropped_trajectories, 0);
  EXPECT_NEAR(report.metrics.at("void_turn/flagged_rate"), 0.25, 1e-12);
  // GRPO stats still use {1, 0, 1, 0}: +-0.5 / sqrt(1/3); the masked one gets 0.
  AlgorithmConfig cfg;
  LocalCollective local;
  auto adv = make_estimator(cfg)->compute(b, local);
  EXPECT_NEAR(adv.turn_advantages[0][0], 0.5 / (std::sqrt(1.0 / 3.0) + 1e-6), 1e-6);
  EXPECT_EQ(adv.turn_advantages[2][0], 0.0f);
}

TEST(VoidTurnFilter, ExcludeFromGroupStatsDropsTheTrajectory) {
  auto b = batch_with_void_turn();
  AlgorithmConfig cfg;
  cfg.void_turn.exclude_from_group_stats = true;
  auto report = filter("void_turn", cfg)->apply(b, FilterContext{});
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[2].sample_index, 3);  // order of the rest preserved
  EXPECT_EQ(report.dropped_trajectories, 1);
  EXPECT_EQ(report.dropped_groups, 0);
  // Stats now over {1, 0, 0}: mean 1/3, std sqrt(1/3).
  LocalCollective local;
  auto adv = make_estimator(cfg)->compute(b, local);
  EXPECT_NEAR(adv.turn_advantages[0][0], (2.0 / 3.0) / (std::sqrt(1.0 / 3.0) + 1e-6), 1e-6);
}

TEST(VoidTurnFilter, DisabledAtEvaluation) {
  auto b = batch_with_void_turn();
  auto report = filter("void_turn")->apply(b, FilterContext{false});
  EXPECT_FALSE(b[2].loss_masked);
  EXPECT_EQ(report.flagged_trajectories, 0);
}

TEST(ZeroVarianceFilter, DropsGroupsWhoseRewardsAreAllEqual) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1), make_traj(0, 1, 1), make_traj(1, 0, 0), make_traj(1, 1, 1),
                                        make_traj(2, 0, 0), make_traj(2, 1, 0), make_traj(2, 2, 0), make_traj(3, 0, 5),
                                        make_traj(4, 0, 0.5), make_traj(4, 1, 0.25)};
  auto report = filter("zero_variance")->apply(b, FilterContext{});
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].group_id, 1);
  EXPECT_EQ(b[1].group_id, 1);
  EXPECT_EQ(b[2].group_id, 4);
  EXPECT_EQ(report.input_groups, 5);
  EXPECT_EQ(report.dropped_groups, 3);  // groups 0, 2 and the singleton 3
  EXPECT_EQ(report.dropped_trajectories, 6);
  EXPECT_NEAR(report.metrics.at("zero_variance/dropped_group_rate"), 0.6, 1e-12);
}

TEST(ZeroVarianceFilter, RefillRoundOverSamplesByTheFactor) {
  ZeroVarianceConfig cfg;
  cfg.oversample_factor = 1.5;
  EXPECT_EQ(groups_to_generate(3, cfg), 5);  // ceil(4.5)
  EXPECT_EQ(groups_to_generate(4, cfg), 6);
  EXPECT_EQ(groups_to_generate(0, cfg), 0);
}

TEST(OverlongFilter, MasksTrajectoriesWithATruncatedGeneration) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1, {1, 1}), make_traj(0, 1, 0, {1})};
  b[0].turns[1].truncated = true;
  b[1].truncated = true;  // hit the turn limit only: an ordinary failure
  auto report = filter("overlong")->apply(b, FilterContext{});
  EXPECT_TRUE(b[0].loss_masked);
  EXPECT_FALSE(b[1].loss_masked);
  EXPECT_EQ(report.masked_trajectories, 1);
}

TEST(OverlongFilter, PenaltyModeLowersTheRewardAndKeepsTheLoss) {
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1, {1})};
  b[0].turns[0].truncated = true;
  AlgorithmConfig cfg;
  cfg.overlong.mode = "penalty";
  cfg.overlong.penalty = 0.5;
  filter("overlong", cfg)->apply(b, FilterContext{});
  EXPECT_DOUBLE_EQ(b[0].reward, 0.5);
  EXPECT_FALSE(b[0].loss_masked);
}

TEST(FilterRegistry, AppliesConfiguredFiltersInOrderAndReportsRates) {
  AlgorithmConfig cfg;
  cfg.filters = {"void_turn", "zero_variance"};
  std::vector<rollout::Trajectory> b = {make_traj(0, 0, 1), make_traj(0, 1, 0), make_traj(1, 0, 1), make_traj(1, 1, 1)};
  b[0].turns[0].void_turn = true;
  auto reports = apply_filters(make_filters(cfg), b, FilterContext{});
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(b.size(), 2u);  // group 1 dropped; group 0 kept (masked member still counts)
  auto m = filter_metrics(reports);
  EXPECT_NEAR(m.at("filter/dropped_group_rate"), 0.5, 1e-12);
  EXPECT_NEAR(m.at("filter/dropped_trajectory_rate"), 0.5, 1e-12);
  EXPECT_NEAR(m.at("filter/masked_trajectory_rate"), 0.25, 1e-12);
  EXPECT_NEAR(m.at("void_turn/flagged_rate"), 0.25, 1e-12);
}

TEST(FilterRegistry, UnknownFilterErrorListsRegisteredNames) {
  try {
    make_filter("dedupe", AlgorithmConfig{});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown filter 'dedupe'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("overlong, void_turn, zero_variance"));
  }
}

}  // namespace
}  // namespace agentrl::algo
