// Specification of LoRA adapters on the transformer (model/lora.h): PEFT's
// initialisation (the adapted model starts equal to the base), merged and
// unmerged forwards agree, adapters off = the base model, only the adapters
// get gradients, and bad options are ConfigErrors naming the option.
#include "agentrl/model/lora.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agentrl/core/error.h"
#include "tiny_model.h"

namespace agentrl::model {
namespace {

using namespace test_util;

struct Fixture {
  TransformerLM m = tiny_model(tiny_args("qwen2"));
  torch::Tensor ids = random_ids(2, 9, 97, 3);
  torch::Tensor logits() { return m->forward(ids, arange_positions(2, 9), full_mask(2, 9)); }
};

// Gives every B a random value (after init B = 0 and the adapter is a no-op).
void randomise_b(TransformerLM& m) {
  torch::NoGradGuard g;
  torch::manual_seed(7);
  for (auto& [name, t] : named_lora_parameters(*m))
    if (name.size() > 6 && name.compare(name.size() - 6, 6, "lora_B") == 0) t.copy_(0.3 * torch::randn(t.sizes()));
}

TEST(Lora, AttachedAdaptersStartAsTheBaseModelWithPeftShapes) {
  Fixture f;
  const auto base = f.logits().detach().clone();
  LoraOptions o;
  o.rank = 4;
  o.alpha = 8;
  EXPECT_EQ(attach_lora(*f.m, o), 2 * 7);  // 2 layers x q,k,v,o,gate,up,down
  EXPECT_EQ(max_abs_diff(f.logits(), base), 0.0);  // B = 0
  auto named = named_lora_parameters(*f.m);
  ASSERT_EQ(named.size(), 28u);
  EXPECT_EQ(named[0].first, "model.layers.0.self_attn.q_proj.lora_A");
  EXPECT_EQ(named[0].second.sizes(), torch::IntArrayRef({4, 32}));  // [r, in]
  EXPECT_EQ(named[1].first, "model.layers.0.self_attn.q_proj.lora_B");
  EXPECT_EQ(named[1].second.sizes(), torch::IntArrayRef({32, 4}));  // [out, r]
  // A ~ U(-1/sqrt(in), 1/sqrt(in)), not all equal; B = 0.
  EXPECT_LE(named[0].second.abs().max().item<double>(), 1.0 / std::sqrt(32.0));
  EXPECT_GT(named[0].second.std().item<double>(), 0.05);
  EXPECT_EQ(named[1].second.abs().max().item<double>(), 0.0);
  // The adapter parameters are module parameters, under the same names.
  EXPECT_TRUE(f.m->named_parameters().contains("model.layers.1.mlp.down_proj.lora_B"));
}

TEST(Lora, OnlyAdaptersGetGradientsAndAdaptersOffIsTheBase) {
  Fixture f;
  const auto base = f.logits().detach().clone();
  attach_lora(*f.m, LoraOptions{});
  randomise_b(f.m);
  auto adapted = f.logits();
  EXPECT_GT(max_abs_diff(adapted, base), 1e-3);
  adapted.logsumexp(-1).sum().backward();
  for (const auto& p : f.m->named_parameters()) {
    const bool is_lora = p.key().find(".lora_") != std::string::npos;
    EXPECT_EQ(p.value().requires_grad(), is_lora) << p.key();
    EXPECT_EQ(p.value().grad().defined() && p.value().grad().abs().sum().item<double>() > 0, is_lora) << p.key();
  }
  set_lora_enabled(*f.m, false);
  EXPECT_EQ(max_abs_diff(f.logits(), base), 0.0);
  set_lora_enabled(*f.m, true);
  EXPECT_EQ(max_abs_diff(f.logits(), adapted), 0.0);
}

TEST(Lora, MergedAndUnmergedForwardsAgree) {
  // float64: the algebra exactly; float32: to float rounding of the logits.
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    for (bool rslora : {false, true}) {
      Fixture f;
      f.m->to(dtype);
      LoraOptions o;
      o.rank = 8;
      o.alpha = 16;
      o.use_rslora = rslora;
      o.dtype = dtype;
      attach_lora(*f.m, o);
      randomise_b(f.m);
      const auto base_w = f.m->named_parameters()["model.layers.0.mlp.up_proj.weight"].detach().clone();
      torch::NoGradGuard g;
      const auto unmerged = f.logits();
      const double tol = dtype == torch::kFloat64 ? 1e-10 : 1e-5 * unmerged.abs().max().item<double>();
      merge_lora(*f.m);
      EXPECT_LT(max_abs_diff(f.logits(), unmerged), tol) << rslora;
      EXPECT_THROW(set_lora_enabled(*f.m, false), Error);
      unmerge_lora(*f.m);
      EXPECT_LT(max_abs_diff(f.m->named_parameters()["model.layers.0.mlp.up_proj.weight"], base_w),
                dtype == torch::kFloat64 ? 1e-12 : 1e-6);
      EXPECT_LT(max_abs_diff(f.logits(), unmerged), tol);
    }
  }
}

TEST(Lora, ScalingIsAlphaOverRankOrOverItsRootWithRslora) {
  // One adapted layer: delta of y = scaling * x A^T B^T, measured directly.
  for (bool rslora : {false, true}) {
    Fixture f;
    LoraOptions o;
    o.rank = 4;
    o.alpha = 6;
    o.use_rslora = rslora;
    o.target_modules = {"o_proj"};
    EXPECT_EQ(attach_lora(*f.m, o), 2);
    randomise_b(f.m);
    auto* d = f.m->named_modules()["model.layers.0.self_attn.o_proj"]->as<DenseImpl>();
    ASSERT_NE(d, nullptr);
    torch::NoGradGuard g;
    auto x = torch::randn({3, 32});
    auto expected = torch::matmul(torch::matmul(x, d->lora.A.t()), d->lora.B.t()) * (rslora ? 6.0 / 2.0 : 6.0 / 4.0);
    set_lora_enabled(*f.m, false);
    auto y0 = d->forward(x);
    set_lora_enabled(*f.m, true);
    EXPECT_LT(max_abs_diff(d->forward(x) - y0, expected), 1e-5) << rslora;
  }
}

TEST(Lora, GradientCheckpointingGivesTheSameAdapterGradientsEvenWithDropout) {
  // A LoRA model's embedding is frozen, so the checkpointed layers' input has
  // no grad; and adapter dropout draws random masks, which the recomputation
  // in backward must draw again identically.
  auto adapter_grads = [](bool checkpointing) {
    Fixture f;
    LoraOptions o;
    o.dropout = 0.3;
    attach_lora(*f.m, o);
    randomise_b(f.m);
    f.m->train();
    f.m->set_gradient_checkpointing(checkpointing);
    torch::manual_seed(42);
    f.logits().logsumexp(-1).sum().backward();
    const auto after = torch::rand({1});  // the generator continues where an uncheckpointed run's does
    std::vector<torch::Tensor> out{after};
    for (auto& [name, t] : named_lora_parameters(*f.m)) {
      EXPECT_TRUE(t.grad().defined()) << name << (checkpointing ? " (checkpointed)" : "");
      out.push_back(t.grad().defined() ? t.grad().clone() : torch::zeros_like(t));
    }
    return out;
  };
  const auto plain = adapter_grads(false), ckpt = adapter_grads(true);
  ASSERT_EQ(plain.size(), ckpt.size());
  EXPECT_TRUE(torch::equal(plain[0], ckpt[0])) << "the random stream after backward differs";
  double largest = 0;
  for (size_t i = 1; i < plain.size(); ++i) {
    largest = std::max(largest, plain[i].abs().max().item<double>());
    EXPECT_LT(max_abs_diff(plain[i], ckpt[i]), 1e-5) << i;
  }
  EXPECT_GT(largest, 1e-3);
}

TEST(Lora, BadOptionsNameTheKeyAndTheExpectedValue) {
  Fixture f;
  LoraOptions o;
  o.target_modules = {"q_proj", "c_attn"};
  try {
    attach_lora(*f.m, o);
    FAIL() << "unknown target accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("model.lora.target_modules: 'c_attn'"));
    // The seven projections; not the embedding or the LM head (read as tables).
    EXPECT_THAT(e.what(), ::testing::HasSubstr("(its layers: down_proj, gate_proj, k_proj, o_proj, q_proj, up_proj, v_proj)"));
  }
  o.target_modules = {"lm_head"};
  EXPECT_THROW(attach_lora(*f.m, o), ConfigError);
  o = LoraOptions{};
  o.rank = 33;  // the 32-wide attention projections
  try {
    attach_lora(*f.m, o);
    FAIL() << "rank larger than a layer accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("model.lora.rank: 33 is larger than layer model.layers.0.self_attn"));
  }
  // Nothing was attached or frozen by the failed calls.
  EXPECT_TRUE(named_lora_parameters(*f.m).empty());
  for (const auto& p : f.m->parameters()) EXPECT_TRUE(p.requires_grad());
  attach_lora(*f.m, LoraOptions{});
  EXPECT_THROW(attach_lora(*f.m, LoraOptions{}), ConfigError);  // twice
}

}  // namespace
}  // namespace agentrl::model
