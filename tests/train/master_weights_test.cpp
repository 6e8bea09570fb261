// Mixed precision: fp32 master weights and AdamW state for a bf16 model,
// driven through the production update (ppo_update) and checkpoint code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <shared_mutex>

#include "agentrl/core/error.h"
#include "agentrl/model/hf_checkpoint.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/model/lora.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/master_weights.h"
#include "agentrl/train/optim.h"
#include "agentrl/train/policy.h"
#include "agentrl/train/ppo_update.h"
#include "train/train_test_support.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

model::TransformerLM tiny_model(torch::Dtype dtype) { return testing::tiny_train_model(0.5, dtype, "llama"); }

rollout::TrainBatch tiny_batch() {
  std::vector<rollout::Trajectory> trajs;
  for (int k = 0; k < 2; ++k) {
    rollout::Trajectory t;
    rollout::Turn turn;
    turn.context_tokens = {1, 2, 3 + k};
    turn.generated_tokens = {4, 5 + k, 6, 7};
    turn.logprobs = {-3.f, -3.f, -3.f, -3.f};
    turn.entropies = {1.f, 1.f, 1.f, 1.f};
    t.turns.push_back(turn);
    t.reward = 1.f;
    trajs.push_back(t);
  }
  auto b = rollout::build_train_batch(trajs);
  b.advantages = b.loss_mask * torch::tensor({1.f, -0.5f}).unsqueeze(1);
  return b;
}

struct Update {
  ExperimentConfig cfg;
  UpdateCounters counters;
  Rng rng{1};
  std::shared_mutex mu;
  std::map<std::string, double> run(model::TransformerLM& m, MasterWeights& masters, torch::optim::Optimizer& opt,
                                    rollout::TrainBatch& batch) {
    batch.old_logprobs = score_batch(m, batch, 1024, 64, false).logprobs;
    return ppo_update(m, masters, opt, batch, cfg, 100, counters, rng,
                      [this] { return std::unique_lock<std::shared_mutex>(mu); });
  }
};

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& ts) {
  std::vector<torch::Tensor> out;
  for (const auto& t : ts) out.push_back(t.detach().clone());
  return out;
}

TEST(MasterWeights, Fp32ModelIsTrainedInPlaceWithoutCopies) {
  auto m = tiny_model(torch::kFloat32);
  MasterWeights masters(*m);
  EXPECT_FALSE(masters.enabled());
  const auto params = m->parameters();
  ASSERT_EQ(masters.params().size(), params.size());
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(masters.params()[i].is_same(params[i])) << "fp32 training must step the model's own tensors";
}

TEST(MasterWeights, Bf16ModelWithLr1e6ChangesEveryMasterThatHasAGradient) {
  auto m = tiny_model(torch::kBFloat16);
  MasterWeights masters(*m);
  ASSERT_TRUE(masters.enabled());
  for (const auto& p : masters.params()) EXPECT_EQ(p.scalar_type(), torch::kFloat32);
  Update u;
  u.cfg.actor.mini_batches = 1;
  u.cfg.trainer.optim.lr = 1e-6;
  u.cfg.trainer.optim.weight_decay = 0;
  auto opt = make_adamw(masters.params(), u.cfg.trainer.optim);
  auto batch = tiny_batch();
  const auto before = copies(masters.params());
  u.run(m, masters, *opt, batch);
  ASSERT_EQ(u.counters.optimizer_steps, 1);
  int64_t with_grad = 0, changed = 0;
  const auto model_params = m->parameters();
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& p = masters.params()[i];
    ASSERT_TRUE(p.grad().defined());
    // AdamW's first step is lr * g / (|g| + eps): for |g| far below eps = 1e-8
    // it is below an fp32 ulp of the weight; every other gradient counts.
    auto has_grad = p.grad().abs() > 1e-7;
    with_grad += has_grad.sum().item<int64_t>();
    changed += (has_grad & (p != before[i])).sum().item<int64_t>();
    // The compute weights are the masters rounded to bf16.
    EXPECT_TRUE(torch::equal(model_params[i], p.to(torch::kBFloat16))) << masters.names()[i];
  }
  EXPECT_GT(with_grad, 100);
  EXPECT_EQ(changed, with_grad) << "every weight with a non-zero gradient must move";
  // The state AdamW keeps is fp32 too.
  for (const auto& kv : opt->state()) {
    const auto& st = static_cast<const torch::optim::AdamWParamState&>(*kv.second);
    EXPECT_EQ(st.exp_avg().scalar_type(), torch::kFloat32);
    EXPECT_EQ(st.exp_avg_sq().scalar_type(), torch::kFloat32);
  }
}

TEST(MasterWeights, ALoraModelStepsItsFp32AdaptersOnlyOnAFrozenBf16Base) {
  // LoRA on a bf16 base: the trainable parameters are the fp32 adapters, so
  // no masters are made; the optimizer holds the adapters only, and a PPO
  // update changes them and leaves every base weight bit for bit.
  auto m = tiny_model(torch::kBFloat16);
  model::LoraOptions lo;
  lo.rank = 2;
  lo.alpha = 4;
  const int64_t layers = model::attach_lora(*m, lo);
  MasterWeights masters(*m);
  EXPECT_FALSE(masters.enabled());
  ASSERT_EQ(masters.params().size(), static_cast<size_t>(2 * layers));
  for (size_t i = 0; i < masters.names().size(); ++i) {
    EXPECT_TRUE(model::is_lora_parameter_name(masters.names()[i])) << masters.names()[i];
    EXPECT_EQ(masters.params()[i].scalar_type(), torch::kFloat32);
  }
  Update u;
  u.cfg.actor.mini_batches = 1;
  u.cfg.trainer.optim.lr = 1e-3;
  auto opt = make_adamw(masters.params(), u.cfg.trainer.optim);
  EXPECT_EQ(optimizer_parameters(*opt).size(), masters.params().size());
  auto batch = tiny_batch();
  std::vector<std::pair<std::string, torch::Tensor>> base;
  for (const auto& p : m->named_parameters())
    if (!model::is_lora_parameter_name(p.key())) base.emplace_back(p.key(), p.value().detach().clone());
  const auto adapters_before = copies(masters.params());
  u.run(m, masters, *opt, batch);
  ASSERT_EQ(u.counters.optimizer_steps, 1);
  auto now = m->named_parameters();
  for (const auto& [name, t] : base) EXPECT_TRUE(torch::equal(now[name], t)) << name << " (frozen) changed";
  int64_t changed = 0;
  for (size_t i = 0; i < adapters_before.size(); ++i) changed += !torch::equal(masters.params()[i], adapters_before[i]);
  EXPECT_GE(changed, layers) << "every B (zero at the start, with a gradient) must move";
}

TEST(MasterWeights, WithoutMastersBf16AdamWLosesNearlyEveryUpdate) {
  // The failure the masters exist for: AdamW stepping bf16 weights directly.
  auto m = tiny_model(torch::kBFloat16);
  OptimConfig oc;
  oc.lr = 1e-6;
  oc.weight_decay = 0;
  auto opt = make_adamw(*m, oc);
  auto batch = tiny_batch();
  auto before = copies(m->parameters());
  model::LogprobOptions o;
  auto s = model::logprobs_and_entropy(m, batch.input_ids, batch.attention_mask, batch.position_ids, o);
  (-(s.logprobs.to(torch::kFloat32) * batch.advantages).sum()).backward();
  opt->step();
  int64_t total = 0, changed = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    total += before[i].numel();
    changed += (m->parameters()[i] != before[i]).sum().item<int64_t>();
  }
  EXPECT_LT(changed, total / 10) << changed << " of " << total;
}

TEST(MasterWeights, Bf16TrainingStaysCloseToFp32Training) {
  auto m32 = tiny_model(torch::kFloat32);
  auto m16 = tiny_model(torch::kBFloat16);
  MasterWeights w32(*m32), w16(*m16);
  {
    // Same starting point: the fp32 run starts from the bf16 weights.
    torch::NoGradGuard g;
    for (size_t i = 0; i < w32.params().size(); ++i) w32.params()[i].copy_(w16.params()[i]);
  }
  Update u32, u16;
  for (auto* u : {&u32, &u16}) {
    u->cfg.actor.mini_batches = 1;
    u->cfg.trainer.optim.lr = 1e-3;
  }
  auto o32 = make_adamw(w32.params(), u32.cfg.trainer.optim);
  auto o16 = make_adamw(w16.params(), u16.cfg.trainer.optim);
  for (int step = 0; step < 5; ++step) {
    auto b32 = tiny_batch(), b16 = tiny_batch();
    u32.run(m32, w32, *o32, b32);
    u16.run(m16, w16, *o16, b16);
  }
  // The weights moved alike (L2 over all parameters) and so did the
  // log-probs of the trained tokens.
  double diff_sq = 0, move_sq = 0;
  const auto start = tiny_model(torch::kBFloat16)->parameters();
  for (size_t i = 0; i < w32.params().size(); ++i) {
    diff_sq += (w32.params()[i] - w16.params()[i]).pow(2).sum().item<double>();
    move_sq += (w32.params()[i] - start[i].to(torch::kFloat32)).pow(2).sum().item<double>();
  }
  EXPECT_GT(std::sqrt(move_sq), 1e-2) << "both runs must have trained";
  EXPECT_LT(std::sqrt(diff_sq), 0.3 * std::sqrt(move_sq)) << "weights: bf16 " << std::sqrt(diff_sq)
                                                           << " away from fp32 after moving " << std::sqrt(move_sq);
  auto b = tiny_batch();
  auto on = b.loss_mask > 0;
  auto lp_of = [&](model::TransformerLM& m) { return score_batch(m, b, 1024, 64, false).logprobs.masked_select(on); };
  auto m0 = tiny_model(torch::kBFloat16);
  const auto lp0 = lp_of(m0), lp32 = lp_of(m32), lp16 = lp_of(m16);
  const double moved = (lp32 - lp0).abs().max().item<double>();
  const double apart = (lp16 - lp32).abs().max().item<double>();
  EXPECT_GT(moved, 0.05);
  EXPECT_LT(apart, 0.3 * moved) << "log-probs: bf16 " << apart << " from fp32 after moving " << moved;
  std::cout << "weights moved " << std::sqrt(move_sq) << ", bf16-fp32 " << std::sqrt(diff_sq) << "; log-probs moved "
            << moved << ", bf16-fp32 " << apart << std::endl;
}

TEST(MasterWeights, CheckpointKeepsTheMastersBitForBit) {
  auto m = tiny_model(torch::kBFloat16);
  MasterWeights masters(*m);
  {
    torch::NoGradGuard g;
    for (auto& p : masters.params()) p.add_(1e-6 * torch::randn(p.sizes()));  // below bf16 resolution
  }
  masters.copy_to_model();
  const auto dir = (fs::temp_directory_path() / ("agentrl_masters_" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  model::SaveOptions so;
  so.replace = masters.named();
  model::save_pretrained(m, dir, so);
  auto loaded = model::load_pretrained(dir, torch::kCPU, torch::kBFloat16).model;
  MasterWeights restored(*loaded);
  load_master_weights(restored, dir);
  for (size_t i = 0; i < masters.params().size(); ++i) {
    EXPECT_TRUE(torch::equal(restored.params()[i], masters.params()[i])) << masters.names()[i];
    EXPECT_TRUE(torch::equal(loaded->parameters()[i], m->parameters()[i])) << masters.names()[i];
  }
  // A bf16-stored directory holds no masters: a clear error, not a silent rounding.
  const auto dir16 = dir + "_bf16";
  fs::remove_all(dir16);
  model::SaveOptions s16;
  s16.dtype = "bfloat16";
  model::save_pretrained(m, dir16, s16);
  try {
    load_master_weights(restored, dir16);
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("BF16"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
  fs::remove_all(dir16);
}

}  // namespace
}  // namespace agentrl::train
