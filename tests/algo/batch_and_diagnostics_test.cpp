// Specifications of token-level advantage assignment (full and window
// context modes), loss masking of rows, and the update diagnostics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/diagnostics.h"
#include "agentrl/core/error.h"
#include "algo_test_util.h"

namespace agentrl::algo {
namespace {

using testing::make_traj;

torch::Tensor ints(std::vector<std::vector<int64_t>> rows) {
  auto out = torch::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, torch::kInt64);
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) out[i][j] = rows[i][j];
  return out;
}

std::vector<float> row(const torch::Tensor& t, int64_t r) {
  auto c = t[r].contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TEST(AssignTokenAdvantages, FullModeUsesTurnIndexOfEachToken) {
  std::vector<rollout::Trajectory> trajs = {make_traj(0, 0, 1, {2, 2})};
  AdvantageResult adv;
  adv.turn_advantages = {{0.5f, -2.0f}};
  rollout::TrainBatch b;
  b.turn_index = ints({{-1, -1, 0, 0, -1, -1, 1, 1, -1}});
  b.loss_mask = (b.turn_index >= 0).to(torch::kFloat32);
  b.trajectory_of_row = {0};
  b.turn_of_row = {-1};
  assign_token_advantages(b, trajs, adv);
  EXPECT_THAT(row(b.advantages, 0), ::testing::ElementsAre(0, 0, 0.5f, 0.5f, 0, 0, -2.0f, -2.0f, 0));
}

TEST(AssignTokenAdvantages, WindowModeUsesTurnOfRowAndMatchesFullMode) {
  std::vector<rollout::Trajectory> trajs = {make_traj(0, 0, 1, {2, 2}), make_traj(0, 1, 0, {1})};
  AdvantageResult adv;
  adv.turn_advantages = {{0.5f, -2.0f}, {3.0f}};
  // Window rows: one per step, prompt (whole window) then the step's tokens.
  rollout::TrainBatch w;
  w.turn_index = ints({{-1, -1, -1, 0, 0}, {-1, -1, -1, 1, 1}, {-1, -1, -1, -1, 0}});
  w.loss_mask = (w.turn_index >= 0).to(torch::kFloat32);
  w.trajectory_of_row = {0, 0, 1};
  w.turn_of_row = {0, 1, 0};
  assign_token_advantages(w, trajs, adv);
  EXPECT_THAT(row(w.advantages, 0), ::testing::ElementsAre(0, 0, 0, 0.5f, 0.5f));
  EXPECT_THAT(row(w.advantages, 1), ::testing::ElementsAre(0, 0, 0, -2.0f, -2.0f));
  EXPECT_THAT(row(w.advantages, 2), ::testing::ElementsAre(0, 0, 0, 0, 3.0f));
  // Full mode for the same episodes: same advantage on each generated token.
  rollout::TrainBatch f;
  f.turn_index = ints({{-1, 0, 0, -1, 1, 1}, {-1, -1, 0, -1, -1, -1}});
  f.loss_mask = (f.turn_index >= 0).to(torch::kFloat32);
  f.trajectory_of_row = {0, 1};
  f.turn_of_row = {-1, -1};
  assign_token_advantages(f, trajs, adv);
  auto pick = [](const torch::Tensor& a, const torch::Tensor& m) { return a.masked_select(m > 0); };
  EXPECT_TRUE(torch::equal(pick(w.advantages, w.loss_mask), pick(f.advantages, f.loss_mask)));
}

TEST(AssignTokenAdvantages, LossMaskedTrajectoryGetsZeroAndMaskIsZeroed) {
  std::vector<rollout::Trajectory> trajs = {make_traj(0, 0, 1, {2}), make_traj(0, 1, 0, {2})};
  trajs[1].loss_masked = true;
  AdvantageResult adv;
  adv.turn_advantages = {{1.0f}, {-1.0f}};
  rollout::TrainBatch b;
  b.turn_index = ints({{-1, 0, 0}, {-1, 0, 0}});
  b.loss_mask = (b.turn_index >= 0).to(torch::kFloat32);
  b.trajectory_of_row = {0, 1};
  assign_token_advantages(b, trajs, adv);
  mask_loss_masked_rows(b, trajs);
  EXPECT_THAT(row(b.advantages, 1), ::testing::ElementsAre(0, 0, 0));
  EXPECT_THAT(row(b.loss_mask, 1), ::testing::ElementsAre(0, 0, 0));
  EXPECT_THAT(row(b.loss_mask, 0), ::testing::ElementsAre(0, 1, 1));
}

TEST(AssignTokenAdvantages, TurnOutOfRangeIsAnError) {
  std::vector<rollout::Trajectory> trajs = {make_traj(0, 0, 1, {1})};
  AdvantageResult adv;
  adv.turn_advantages = {{1.0f}};
  rollout::TrainBatch b;
  b.turn_index = ints({{-1, 0, 3}});
  b.trajectory_of_row = {0};
  try {
    assign_token_advantages(b, trajs, adv);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("belongs to turn 3 but trajectory 0 has 1 turns"));
  }
}

TEST(EstimateAndAssign, FillsTokensMasksRowsAndReportsAdvantageStats) {
  std::vector<rollout::Trajectory> trajs = {make_traj(0, 0, 1, {2}), make_traj(0, 1, 0, {1}), make_traj(0, 2, 0, {1})};
  trajs[2].loss_masked = true;
  rollout::TrainBatch b;
  b.turn_index = ints({{-1, 0, 0}, {-1, 0, -1}, {-1, 0, -1}});
  b.loss_mask = (b.turn_index >= 0).to(torch::kFloat32);
  b.trajectory_of_row = {0, 1, 2};
  AlgorithmConfig cfg;
  cfg.adv_estimator = "drgrpo";
  LocalCollective local;
  auto m = estimate_and_assign(*make_estimator(cfg), trajs, b, local);
  // Dr.GRPO over {1, 0, 0}: {2/3, -1/3, masked}. Loss tokens: 2/3, 2/3, -1/3.
  EXPECT_THAT(row(b.advantages, 0), ::testing::ElementsAre(0, ::testing::FloatNear(2.0f / 3, 1e-6), ::testing::FloatNear(2.0f / 3, 1e-6)));
  EXPECT_THAT(row(b.loss_mask, 2), ::testing::ElementsAre(0, 0, 0));
  EXPECT_NEAR(m.at("advantage/mean"), (2.0 / 3 + 2.0 / 3 - 1.0 / 3) / 3, 1e-6);
  EXPECT_NEAR(m.at("advantage/min"), -1.0 / 3, 1e-6);
  EXPECT_EQ(m.at("advantage/count"), 3.0);
}

TEST(MaskedStats, MeanUnbiasedStdMinMaxOverMaskedEntries) {
  auto v = torch::tensor({1.0, 2.0, 3.0, 100.0}).reshape({2, 2});
  auto m = torch::tensor({1.0, 1.0, 1.0, 0.0}).reshape({2, 2});
  LocalCollective local;
  auto s = masked_stats(v, m, local, "adv/");
  EXPECT_DOUBLE_EQ(s.at("adv/mean"), 2.0);
  EXPECT_DOUBLE_EQ(s.at("adv/std"), 1.0);
  EXPECT_DOUBLE_EQ(s.at("adv/min"), 1.0);
  EXPECT_DOUBLE_EQ(s.at("adv/max"), 3.0);
  EXPECT_DOUBLE_EQ(s.at("adv/count"), 3.0);
}

TEST(MaskedStats, TwoRanksEqualOneProcess) {
  auto v = torch::tensor({1.0, 2.0, 3.0, 4.0, 10.0, -5.0});
  auto m = torch::tensor({1.0, 1.0, 0.0, 1.0, 1.0, 1.0});
  LocalCollective local;
  auto single = masked_stats(v, m, local, "");
  std::vector<std::map<std::string, double>> out(2);
  testing::ThreadCollectiveGroup group(2);
  group.run([&](int r, Collective& c) { out[r] = masked_stats(v.slice(0, 3 * r, 3 * r + 3), m.slice(0, 3 * r, 3 * r + 3), c, ""); });
  for (const auto& [k, val] : single) EXPECT_NEAR(out[1].at(k), val, 1e-12) << k;
}

TEST(LogitUpdateNorm, MatchesNormOfOneHotMinusDistribution) {
  // Token 0: p = (0.5, 0.25, 0.25), c = 0, |A| = 2: ||e_c - p|| =
  // ||(-0.5, 0.25, 0.25)||. Token 1: P_c = 1 -> 0. Token 2 masked.
  const double norm0 = std::sqrt(0.25 + 0.0625 + 0.0625);
  auto lp = torch::tensor({std::log(0.5), 0.0, std::log(0.1)}, torch::kFloat64).reshape({1, 3});
  auto psq = torch::tensor({0.25 + 0.0625 + 0.0625, 1.0, 0.5}, torch::kFloat64).reshape({1, 3});
  auto adv = torch::tensor({-2.0, 5.0, 9.0}).reshape({1, 3});
  auto mask = torch::tensor({1.0, 1.0, 0.0}).reshape({1, 3});
  LocalCollective local;
  EXPECT_NEAR(logit_update_norm(lp, psq, adv, mask, local), (2.0 * norm0 + 0.0) / 2, 1e-9);
}

}  // namespace
}  // namespace agentrl::algo
