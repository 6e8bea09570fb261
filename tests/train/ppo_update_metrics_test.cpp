// The metrics of the PPO update are those of the whole mini-batch, however it
// is cut into micro-batches and ranks.
#include <gtest/gtest.h>

#include <shared_mutex>

#include "agentrl/algo/diagnostics.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/master_weights.h"
#include "agentrl/train/optim.h"
#include "agentrl/train/ppo_update.h"
#include "train/train_test_support.h"

namespace agentrl::train {
namespace {

// Six episodes of different lengths with mixed advantages and old log-probs
// away from the current ones, so that ratios differ from 1 and clip.
rollout::TrainBatch batch_of_six(model::TransformerLM& m) {
  std::vector<rollout::Trajectory> trajs;
  for (int k = 0; k < 6; ++k) {
    rollout::Trajectory t;
    rollout::Turn turn;
    turn.context_tokens = {1, 2, 3 + k};
    for (int j = 0; j < 3 + 2 * k; ++j) turn.generated_tokens.push_back((5 + 3 * j + k) % 32);
    turn.logprobs.assign(turn.generated_tokens.size(), -3.f);
    turn.entropies.assign(turn.generated_tokens.size(), 1.f);
    t.turns.push_back(turn);
    t.group_id = k / 3;
    t.sample_index = k % 3;
    trajs.push_back(t);
  }
  auto b = rollout::build_train_batch(trajs);
  torch::manual_seed(11);
  b.old_logprobs = score_batch(m, b, 1 << 20, 64, false).logprobs + 0.3 * torch::randn(b.loss_mask.sizes());
  b.advantages = b.loss_mask * torch::tensor({1.f, -1.f, 0.5f, -0.5f, 2.f, -2.f}).unsqueeze(1);
  return b;
}

std::map<std::string, double> update_metrics(int64_t micro_batch_tokens, const DistHooks& hooks_in, bool mirror) {
  auto m = testing::tiny_train_model(0.3);
  MasterWeights masters(*m);
  ExperimentConfig cfg;
  cfg.actor.mini_batches = 1;
  cfg.actor.kl.enabled = false;
  cfg.trainer.micro_batch_tokens = micro_batch_tokens;
  auto opt = make_adamw(masters.params(), cfg.trainer.optim);
  auto batch = batch_of_six(m);
  DistHooks hooks = hooks_in;
  if (mirror) hooks.sync_gradients = [&masters] {
      for (auto& p : masters.params()) p.mutable_grad().mul_(2);  // the other rank's identical gradients
    };
  UpdateCounters counters;
  Rng rng(1);
  std::shared_mutex mu;
  return ppo_update(m, masters, *opt, batch, cfg, 10, counters, rng,
                    [&mu] { return std::unique_lock<std::shared_mutex>(mu); }, hooks);
}

void expect_same(const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
  for (const std::string key : {"actor/pg_loss", "actor/tokens", "actor/clip_frac_high", "actor/clip_frac_low",
                                "actor/approx_kl", "actor/ratio_mean", "actor/ratio_max", "actor/entropy",
                                "actor/logit_update_norm"}) {
    ASSERT_TRUE(a.count(key) && b.count(key)) << key;
    EXPECT_NEAR(a.at(key), b.at(key), 1e-5 * std::max(1.0, std::abs(a.at(key)))) << key;
  }
}

TEST(PpoUpdateMetrics, MicroBatchingDoesNotChangeTheLoggedLoss) {
  const auto whole = update_metrics(1 << 20, {}, false);  // one micro-batch
  const auto cut = update_metrics(16, {}, false);         // one row per micro-batch
  EXPECT_GT(whole.at("actor/tokens"), 30.0);
  EXPECT_GT(whole.at("actor/clip_frac_high") + whole.at("actor/clip_frac_low"), 0.0) << "not vacuous: ratios clip";
  expect_same(whole, cut);
}

TEST(PpoUpdateMetrics, LogitUpdateNormOfLiIsLoggedForTheUpdatedPolicy) {
  // One mini-batch: its forward pass is the policy before the step, so the
  // logged value is algo::logit_update_norm of that policy on the batch.
  auto m = testing::tiny_train_model(0.3);
  auto batch = batch_of_six(m);
  const auto stats = score_batch(m, batch, 1 << 20, 64, /*want_prob_sq=*/true);
  LocalCollective local;
  const double expected =
      algo::logit_update_norm(stats.logprobs, stats.prob_sq_sum, batch.advantages, batch.loss_mask, local);
  const auto logged = update_metrics(1 << 20, {}, false);
  EXPECT_GT(expected, 0.1);
  EXPECT_NEAR(logged.at("actor/logit_update_norm"), expected, 1e-6 * expected);
}

TEST(PpoUpdateMetrics, TwoIdenticalRanksLogWhatOneRankLogs) {
  // The other rank mirrors this one: every sum over ranks doubles.
  DistHooks two;
  two.sum = [](double x) { return 2 * x; };
  const auto one_rank = update_metrics(1 << 20, {}, false);
  auto mirrored = update_metrics(1 << 20, two, true);
  // The mini-batch of both ranks has twice the tokens; everything else is unchanged.
  mirrored["actor/tokens"] /= 2;
  expect_same(one_rank, mirrored);
}

}  // namespace
}  // namespace agentrl::train
