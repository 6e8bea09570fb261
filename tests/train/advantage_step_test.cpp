// The trainer's advantage step (estimate, then assign per token on the batch
// built for the trajectories' context mode), where the context modes differ.
#include <gtest/gtest.h>

#include <algorithm>

#include "agentrl/algo/advantage.h"
#include "agentrl/rollout/batch_builder.h"
#include "algo/algo_test_util.h"

namespace agentrl::train {
namespace {

using algo::testing::make_episode;

std::vector<rollout::Trajectory> varied_batch(rollout::ContextMode mode) {
  std::vector<rollout::Trajectory> b = {
      make_episode(0, 0, 1.0, {{0.3f, 0.5f}, {2.0f}, {0.1f}}), make_episode(0, 1, 0.0, {{1.5f}, {0.7f, 0.9f, 1.1f}}),
      make_episode(0, 2, 1.0, {{0.2f}}), make_episode(1, 0, 0.0, {{3.0f}, {2.5f}}), make_episode(1, 1, 1.0, {{0.4f}})};
  for (auto& t : b) {
    t.context_mode = mode;
    // Full mode: each turn adds its own context; window mode: each step's
    // prompt is the whole windowed context.
    for (auto& turn : t.turns)
      turn.context_tokens = mode == rollout::ContextMode::kWindow ? std::vector<int32_t>{1, 2, 3, 4, 5, 6}
                                                                   : std::vector<int32_t>{1, 2};
  }
  return b;
}

// The advantage of every generated token in trajectory / turn / token order.
std::vector<float> token_advantages(const std::string& estimator, rollout::ContextMode mode) {
  auto batch = varied_batch(mode);
  auto train = rollout::build_train_batch(batch);
  algo::AlgorithmConfig cfg;
  cfg.adv_estimator = estimator;
  LocalCollective local;
  algo::estimate_and_assign(*algo::make_estimator(cfg), batch, train, local);
  std::vector<float> out;
  for (int64_t r = 0; r < train.rows(); ++r)
    for (int64_t t = 0; t < train.loss_mask.size(1); ++t)
      if (train.loss_mask[r][t].item<float>() > 0) out.push_back(train.advantages[r][t].item<float>());
  return out;
}

TEST(AdvantageStep, FullAndWindowContextModesGiveEveryTokenTheSameAdvantage) {
  // One row per episode (full) or one row per step (window): the same step
  // carries the same advantage either way, for step-level estimators too.
  for (const std::string est : {"empg", "gigpo", "grpo"}) {
    const auto full = token_advantages(est, rollout::ContextMode::kFull);
    const auto window = token_advantages(est, rollout::ContextMode::kWindow);
    ASSERT_EQ(full.size(), 12u) << est;  // the batch's generated tokens
    EXPECT_EQ(full, window) << est;
    if (est == "empg") {  // not vacuous: EMPG gives the steps of one episode different advantages
      EXPECT_NE(*std::min_element(full.begin(), full.begin() + 4), *std::max_element(full.begin(), full.begin() + 4));
    }
  }
}

}  // namespace
}  // namespace agentrl::train
