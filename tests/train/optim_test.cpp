// LR schedules, gradient clipping, the non-finite guard of the PPO update,
// and SFT on a tiny dataset.
#include <gtest/gtest.h>

#include <cmath>

#include "agentrl/core/error.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/optim.h"
#include "agentrl/train/ppo_update.h"
#include "agentrl/train/sft.h"
#include "train/train_test_support.h"

namespace agentrl::train {
namespace {

TEST(LrSchedule, WarmupThenCosineToTheFloor) {
  OptimConfig c;
  c.lr = 1.0;
  c.warmup_steps = 4;
  c.schedule = "cosine";
  c.min_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(lr_at(c, 0, 104), 0.25);
  EXPECT_DOUBLE_EQ(lr_at(c, 3, 104), 1.0);
  EXPECT_NEAR(lr_at(c, 54, 104), 0.1 + 0.9 * 0.5, 1e-12);  // halfway: cos(pi/2) = 0
  EXPECT_NEAR(lr_at(c, 104, 104), 0.1, 1e-12);
}

TEST(LrSchedule, LinearDecayAndConstant) {
  OptimConfig c;
  c.lr = 2.0;
  c.schedule = "linear";
  EXPECT_DOUBLE_EQ(lr_at(c, 0, 10), 2.0);
  EXPECT_DOUBLE_EQ(lr_at(c, 5, 10), 1.0);
  c.schedule = "constant";
  EXPECT_DOUBLE_EQ(lr_at(c, 7, 10), 2.0);
}

TEST(GradClip, ScalesToTheMaxNormAndReportsTheOriginal) {
  torch::nn::Linear lin(2, 1);
  lin->weight.mutable_grad() = torch::tensor({{3.0f, 0.0f}});
  lin->bias.mutable_grad() = torch::tensor({4.0f});
  double n = clip_grad_norm(*lin, 1.0);
  EXPECT_NEAR(n, 5.0, 1e-6);
  EXPECT_NEAR(lin->weight.grad()[0][0].item<float>(), 0.6f, 1e-4);
  EXPECT_NEAR(lin->bias.grad()[0].item<float>(), 0.8f, 1e-4);
}

model::TransformerLM tiny_model() { return testing::tiny_train_model(); }

rollout::Trajectory tiny_trajectory(float advantage_seed) {
  rollout::Trajectory t;
  rollout::Turn turn;
  turn.context_tokens = {1, 2, 3};
  turn.generated_tokens = {4, 5, 6, 7};
  turn.logprobs = {-3.f, -3.f, -3.f, -3.f};
  turn.entropies = {1.f, 1.f, 1.f, 1.f};
  t.turns.push_back(turn);
  t.reward = advantage_seed;
  return t;
}

TEST(PpoUpdate, NonFiniteAdvantagesSkipTheStepAndEventuallyStopTheRun) {
  auto m = tiny_model();
  auto before = m->parameters()[0].clone();
  ExperimentConfig cfg;
  cfg.actor.mini_batches = 1;
  cfg.trainer.max_nonfinite_steps = 2;
  MasterWeights masters(*m);
  auto opt = make_adamw(masters.params(), cfg.trainer.optim);
  auto batch = rollout::build_train_batch({tiny_trajectory(1.f)});
  batch.advantages = torch::full_like(batch.advantages, std::nanf(""));
  UpdateCounters counters;
  Rng rng(1);
  std::shared_mutex mu;
  WeightLock lock = [&mu] { return std::unique_lock<std::shared_mutex>(mu); };
  auto metrics = ppo_update(m, masters, *opt, batch, cfg, 10, counters, rng, lock);
  EXPECT_EQ(metrics.at("actor/skipped_steps"), 1.0);
  EXPECT_EQ(counters.consecutive_skips, 1);
  EXPECT_TRUE(torch::equal(before, m->parameters()[0])) << "a skipped step must not change parameters";
  try {
    ppo_update(m, masters, *opt, batch, cfg, 10, counters, rng, lock);
    FAIL() << "expected the run to stop";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 consecutive optimizer steps"), std::string::npos) << e.what();
  }
}

TEST(PpoUpdate, PositiveAdvantageRaisesTheLogprobOfTheGeneratedTokens) {
  auto m = tiny_model();
  ExperimentConfig cfg;
  cfg.actor.mini_batches = 1;
  cfg.trainer.optim.lr = 1e-2;
  MasterWeights masters(*m);
  auto opt = make_adamw(masters.params(), cfg.trainer.optim);
  auto batch = rollout::build_train_batch({tiny_trajectory(1.f)});
  batch.advantages = batch.loss_mask.clone();  // A = +1 on generated tokens
  auto score = [&] { return (score_batch(m, batch, 1024, 64, false).logprobs * batch.loss_mask).sum().item<double>(); };
  batch.old_logprobs = score_batch(m, batch, 1024, 64, false).logprobs;
  const double before = score();
  UpdateCounters counters;
  Rng rng(1);
  std::shared_mutex mu;
  for (int i = 0; i < 5; ++i)
    ppo_update(m, masters, *opt, batch, cfg, 10, counters, rng, [&mu] { return std::unique_lock<std::shared_mutex>(mu); });
  EXPECT_GT(score(), before + 0.1);
  EXPECT_EQ(counters.optimizer_steps, 5);
}

TEST(Sft, LossDecreasesOnATinyDataset) {
  auto m = tiny_model();
  std::vector<SftSequence> data;
  for (int k = 0; k < 4; ++k) {
    SftSequence s;
    for (int t = 0; t < 12; ++t) {
      s.ids.push_back((t * 3 + k) % 32);
      s.loss_mask.push_back(t >= 4 ? 1.f : 0.f);
    }
    data.push_back(s);
  }
  SftConfig cfg;
  cfg.epochs = 30;
  cfg.optim.lr = 1e-2;
  cfg.optim.weight_decay = 0;
  Rng rng(0);
  auto rep = run_sft(m, data, cfg, 64, rng);
  EXPECT_LT(rep.last_epoch_loss, 0.5 * rep.first_epoch_loss)
      << rep.first_epoch_loss << " -> " << rep.last_epoch_loss;
}

}  // namespace
}  // namespace agentrl::train
