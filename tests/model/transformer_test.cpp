// Specifications of TransformerLM: HF parameter names, config validation,
// KV-cache decoding == full forward, padding/packing invariance, and the
// forward pass against an independent naive re-implementation.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <set>

#include "agentrl/core/error.h"
#include "agentrl/model/kv_cache.h"
#include "agentrl/model/transformer.h"
#include "tiny_model.h"

using namespace agentrl::model;
using namespace agentrl::model::test_util;

namespace {

std::set<std::string> names(TransformerLM& m) {
  std::set<std::string> s;
  for (auto& p : m->named_parameters()) s.insert(p.key());
  return s;
}

// Naive Qwen2/Qwen3 forward written from the HF modeling code, one sequence,
// explicit repeat_kv, additive -inf causal mask, float64.
torch::Tensor naive_forward(TransformerLM& m, const torch::Tensor& ids) {
  const auto& a = m->args();
  const int64_t T = ids.size(0), Hq = a.num_attention_heads, Hkv = a.num_key_value_heads;
  const int64_t D = a.hidden_size / Hq;
  auto P = [&](const std::string& n) { return m->named_parameters()[n].to(torch::kFloat64); };
  auto norm = [&](const torch::Tensor& x, const torch::Tensor& w) {
    return w * x / torch::sqrt(x.pow(2).mean(-1, true) + a.rms_norm_eps);
  };
  auto lin = [&](const torch::Tensor& x, const std::string& n, bool bias) {
    auto y = torch::matmul(x, P(n + ".weight").t());
    return bias ? y + P(n + ".bias") : y;
  };
  auto rope = [&](const torch::Tensor& x) {  // x [heads, T, D]
    auto out = torch::empty_like(x);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < D / 2; ++i) {
        const double ang = t * std::pow(a.rope_theta, -2.0 * i / D);
        auto x1 = x.select(1, t).select(1, i), x2 = x.select(1, t).select(1, i + D / 2);
        out.select(1, t).select(1, i).copy_(x1 * std::cos(ang) - x2 * std::sin(ang));
        out.select(1, t).select(1, i + D / 2).copy_(x2 * std::cos(ang) + x1 * std::sin(ang));
      }
    return out;
  };
  auto h = P("model.embed_tokens.weight").index_select(0, ids);
  for (int64_t l = 0; l < a.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    auto x = norm(h, P(p + "input_layernorm.weight"));
    auto q = lin(x, p + "self_attn.q_proj", a.attention_bias).view({T, Hq, D}).transpose(0, 1);
    auto k = lin(x, p + "self_attn.k_proj", a.attention_bias).view({T, Hkv, D}).transpose(0, 1);
    auto v = lin(x, p + "self_attn.v_proj", a.attention_bias).view({T, Hkv, D}).transpose(0, 1);
    if (a.qk_norm) {
      q = norm(q, P(p + "self_attn.q_norm.weight"));
      k = norm(k, P(p + "self_attn.k_norm.weight"));
    }
    q = rope(q);
    k = rope(k).repeat_interleave(Hq / Hkv, 0);
    v = v.repeat_interleave(Hq / Hkv, 0);
    auto mask = torch::full({T, T}, -INFINITY, torch::kFloat64).triu(1);
    auto att = torch::softmax(torch::matmul(q, k.transpose(1, 2)) / std::sqrt(double(D)) + mask, -1);
    auto o = torch::matmul(att, v).transpose(0, 1).reshape({T, Hq * D});
    h = h + lin(o, p + "self_attn.o_proj", false);
    x = norm(h, P(p + "post_attention_layernorm.weight"));
    auto g = lin(x, p + "mlp.gate_proj", false);
    h = h + lin(torch::silu(g) * lin(x, p + "mlp.up_proj", false), p + "mlp.down_proj", false);
  }
  h = norm(h, P("model.norm.weight"));
  auto w = a.tie_word_embeddings ? P("model.embed_tokens.weight") : P("lm_head.weight");
  return torch::matmul(h, w.t());
}

}  // namespace

TEST(TransformerLM, ParameterNamesAreHuggingFaceNames) {
  auto a = tiny_args("qwen2");
  a.num_hidden_layers = 1;
  TransformerLM m(a);
  std::set<std::string> expect = {
      "model.embed_tokens.weight",
      "model.layers.0.input_layernorm.weight",
      "model.layers.0.self_attn.q_proj.weight",
      "model.layers.0.self_attn.q_proj.bias",
      "model.layers.0.self_attn.k_proj.weight",
      "model.layers.0.self_attn.k_proj.bias",
      "model.layers.0.self_attn.v_proj.weight",
      "model.layers.0.self_attn.v_proj.bias",
      "model.layers.0.self_attn.o_proj.weight",
      "model.layers.0.post_attention_layernorm.weight",
      "model.layers.0.mlp.gate_proj.weight",
      "model.layers.0.mlp.up_proj.weight",
      "model.layers.0.mlp.down_proj.weight",
      "model.norm.weight",
      "lm_head.weight",
  };
  EXPECT_EQ(names(m), expect);
  EXPECT_EQ(m->named_parameters()["model.layers.0.self_attn.k_proj.weight"].sizes(),
            torch::IntArrayRef({2 * 8, 32}));
}

TEST(TransformerLM, Qwen3HasQkNormAndTiedModelHasNoLmHead) {
  auto a = tiny_args("qwen3");
  a.num_hidden_layers = 1;
  a.tie_word_embeddings = true;
  TransformerLM m(a);
  auto n = names(m);
  EXPECT_TRUE(n.count("model.layers.0.self_attn.q_norm.weight"));
  EXPECT_TRUE(n.count("model.layers.0.self_attn.k_norm.weight"));
  EXPECT_FALSE(n.count("model.layers.0.self_attn.q_proj.bias"));
  EXPECT_FALSE(n.count("lm_head.weight"));
  EXPECT_TRUE(m->lm_head_weight().is_same(m->named_parameters()["model.embed_tokens.weight"]));
}

TEST(TransformerLM, UnknownModelTypeThrowsNamingIt) {
  auto a = tiny_args();
  a.model_type = "gpt2";
  try {
    TransformerLM m(a);
    FAIL();
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'gpt2'"), std::string::npos) << e.what();
  }
}

TEST(TransformerLM, UnsupportedActivationAndHeadRatioThrow) {
  auto a = tiny_args();
  a.hidden_act = "gelu";
  EXPECT_THROW(TransformerLM{a}, agentrl::ConfigError);
  a = tiny_args();
  a.num_key_value_heads = 3;
  try {
    TransformerLM m(a);
    FAIL();
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("num_key_value_heads (3)"), std::string::npos) << e.what();
  }
}

TEST(TransformerLM, InitWeightsIsDeterministicPerSeed) {
  auto a = tiny_args();
  TransformerLM m1(a), m2(a), m3(a);
  m1->init_weights(7);
  m2->init_weights(7);
  m3->init_weights(8);
  auto w1 = m1->named_parameters()["model.layers.1.mlp.up_proj.weight"];
  EXPECT_TRUE(torch::equal(w1, m2->named_parameters()["model.layers.1.mlp.up_proj.weight"]));
  EXPECT_FALSE(torch::equal(w1, m3->named_parameters()["model.layers.1.mlp.up_proj.weight"]));
  EXPECT_NEAR(w1.std().item<double>(), 0.02, 0.002);
  EXPECT_TRUE(torch::equal(m1->named_parameters()["model.norm.weight"], torch::ones({32})));
}

TEST(TransformerLM, ForwardMatchesNaiveReferenceForQwen2AndQwen3) {
  for (std::string type : {"qwen2", "qwen3", "llama"}) {
    auto a = tiny_args(type);
    auto m = tiny_model(a);
    m->to(torch::kFloat64);
    auto ids = random_ids(1, 10, a.vocab_size, 5);
    auto got = m->forward(ids, arange_positions(1, 10), full_mask(1, 10))[0];
    EXPECT_LT(max_abs_diff(got, naive_forward(m, ids[0])), 1e-10) << type;
  }
}

TEST(TransformerLM, KvCacheDecodingEqualsFullForward) {
  auto a = tiny_args("qwen3");
  auto m = tiny_model(a);
  const int64_t T = 14;
  auto ids = random_ids(1, T, a.vocab_size, 6);
  torch::NoGradGuard g;
  auto full = m->forward(ids, arange_positions(1, T), full_mask(1, T))[0];  // [T,V]
  KvCache cache(a, 2, 32, torch::kFloat32, torch::kCPU);
  // Prefill 5 tokens, then one token per step.
  auto h = m->forward_cached(ids[0].narrow(0, 0, 5), {{1, 0, 5}}, cache);
  EXPECT_LT(max_abs_diff(m->logits(h)[0], full[4]), 1e-5);
  for (int64_t t = 5; t < T; ++t) {
    h = m->forward_cached(ids[0].narrow(0, t, 1), {{1, t, 1}}, cache);
    EXPECT_LT(max_abs_diff(m->logits(h)[0], full[t]), 1e-5) << "position " << t;
  }
}

TEST(TransformerLM, RaggedCachedStepEqualsEachSequenceAlone) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  auto x = random_ids(1, 9, a.vocab_size, 7)[0], y = random_ids(1, 4, a.vocab_size, 8)[0];
  KvCache alone(a, 2, 16, torch::kFloat32, torch::kCPU), both(a, 3, 16, torch::kFloat32, torch::kCPU);
  auto hx = m->forward_cached(x, {{0, 0, 9}}, alone);
  auto hy = m->forward_cached(y, {{1, 0, 4}}, alone);
  // x's first 6 tokens already cached in slot 2; one step feeds x's last 3 and y's 4.
  m->forward_cached(x.narrow(0, 0, 6), {{2, 0, 6}}, both);
  auto h = m->forward_cached(torch::cat({x.narrow(0, 6, 3), y}), {{2, 6, 3}, {0, 0, 4}}, both);
  EXPECT_LT(max_abs_diff(h[0], hx[0]), 1e-5);
  EXPECT_LT(max_abs_diff(h[1], hy[0]), 1e-5);
}

TEST(TransformerLM, MixedStepOfDecodeRowsAndPrefillChunksEqualsEachSequenceAlone) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  // Sequences of 6, 8, 7 and 6 tokens; before the step the cache holds 5, 7, 3 and 0 of them,
  // so the step has two decode rows (batched) and two prefill chunks (one padded batch).
  const std::vector<int64_t> total = {6, 8, 7, 6}, cached = {5, 7, 3, 0}, slot = {3, 0, 2, 1};
  KvCache alone(a, 1, 16, torch::kFloat32, torch::kCPU), both(a, 4, 16, torch::kFloat32, torch::kCPU);
  std::vector<torch::Tensor> seqs, want, feed;
  std::vector<CacheSegment> step;
  for (size_t i = 0; i < total.size(); ++i) {
    seqs.push_back(random_ids(1, total[i], a.vocab_size, 20 + static_cast<int>(i))[0]);
    want.push_back(m->forward_cached(seqs[i], {{0, 0, total[i]}}, alone)[0]);
    if (cached[i] > 0) m->forward_cached(seqs[i].narrow(0, 0, cached[i]), {{slot[i], 0, cached[i]}}, both);
    feed.push_back(seqs[i].narrow(0, cached[i], total[i] - cached[i]));
    step.push_back({slot[i], cached[i], total[i] - cached[i]});
  }
  auto h = m->forward_cached(torch::cat(feed), step, both);
  ASSERT_EQ(h.size(0), 4);
  for (size_t i = 0; i < total.size(); ++i) EXPECT_LT(max_abs_diff(h[i], want[i]), 1e-5) << "sequence " << i;
}

TEST(TransformerLM, LeftAndRightPaddedBatchEqualsUnbatched) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  auto s1 = random_ids(1, 8, a.vocab_size, 9), s2 = random_ids(1, 5, a.vocab_size, 10);
  auto l1 = m->forward(s1, arange_positions(1, 8), full_mask(1, 8))[0];
  auto l2 = m->forward(s2, arange_positions(1, 5), full_mask(1, 5))[0];
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  // Right padding: s2 then 3 pads (pad id 0, positions 0 as position_ids_from_mask gives).
  auto ids = torch::zeros({2, 8}, opts);
  ids[0].copy_(s1[0]);
  ids[1].narrow(0, 0, 5).copy_(s2[0]);
  auto mask = torch::zeros({2, 8}, torch::kBool);
  mask[0].fill_(true);
  mask[1].narrow(0, 0, 5).fill_(true);
  auto pos = torch::zeros({2, 8}, opts);
  pos[0].copy_(torch::arange(8));
  pos[1].narrow(0, 0, 5).copy_(torch::arange(5));
  auto out = m->forward(ids, pos, mask);
  EXPECT_LT(max_abs_diff(out[0], l1), 1e-5);
  EXPECT_LT(max_abs_diff(out[1].narrow(0, 0, 5), l2), 1e-5);
  // Left padding: 3 pads then s2.
  ids[1].zero_();
  ids[1].narrow(0, 3, 5).copy_(s2[0]);
  mask[1].zero_();
  mask[1].narrow(0, 3, 5).fill_(true);
  pos[1].zero_();
  pos[1].narrow(0, 3, 5).copy_(torch::arange(5));
  out = m->forward(ids, pos, mask);
  EXPECT_LT(max_abs_diff(out[1].narrow(0, 3, 5), l2), 1e-5);
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
}

TEST(TransformerLM, PackedSequencesViaPositionRestartsEqualSeparateSequences) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  auto s1 = random_ids(1, 6, a.vocab_size, 11), s2 = random_ids(1, 4, a.vocab_size, 12);
  auto l1 = m->forward(s1, arange_positions(1, 6), full_mask(1, 6))[0];
  auto l2 = m->forward(s2, arange_positions(1, 4), full_mask(1, 4))[0];
  auto ids = torch::cat({s1, s2}, 1);
  auto pos = torch::cat({arange_positions(1, 6), arange_positions(1, 4)}, 1);
  auto out = m->forward(ids, pos, full_mask(1, 10))[0];
  EXPECT_LT(max_abs_diff(out.narrow(0, 0, 6), l1), 1e-5);
  EXPECT_LT(max_abs_diff(out.narrow(0, 6, 4), l2), 1e-5);
}

TEST(TransformerLM, LongSequenceSpanningSeveralQueryBlocksMatchesCachedDecoding) {
  auto a = tiny_args();
  a.num_hidden_layers = 1;
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  const int64_t T = 600;  // > 2 query blocks of 256
  auto ids = random_ids(1, T, a.vocab_size, 13);
  auto full = m->forward(ids, arange_positions(1, T), full_mask(1, T))[0];
  KvCache cache(a, 1, T, torch::kFloat32, torch::kCPU);
  m->forward_cached(ids[0].narrow(0, 0, T - 1), {{0, 0, T - 1}}, cache);
  auto h = m->forward_cached(ids[0].narrow(0, T - 1, 1), {{0, T - 1, 1}}, cache);
  EXPECT_LT(max_abs_diff(m->logits(h)[0], full[T - 1]), 1e-5);
}

namespace {

// Logits of a left-padded batch of a long sequence (several query blocks)
// and a short one, their parameter gradients under a fixed random loss, and
// the logits of a mixed cached step (decode rows and prefill chunks).
struct KernelRun {
  torch::Tensor logits;
  std::vector<torch::Tensor> grads;
  torch::Tensor cached;
};

KernelRun run_with(TransformerLM& m, AttentionKernel kernel, bool checkpointing) {
  m->set_attention_kernel(kernel);
  m->set_gradient_checkpointing(checkpointing);
  m->zero_grad();
  const int64_t T = 300;
  auto ids = random_ids(2, T, m->args().vocab_size, 31);
  auto mask = full_mask(2, T);
  mask[1].narrow(0, 0, 200).fill_(false);  // row 1: 200 pads, then 100 tokens
  auto pos = arange_positions(2, T);
  pos[1].narrow(0, 0, 200).zero_();
  pos[1].narrow(0, 200, 100).copy_(torch::arange(100));
  KernelRun r;
  r.logits = m->forward(ids, pos, mask);
  torch::manual_seed(32);
  auto w = torch::randn(r.logits.sizes()) * mask.unsqueeze(-1);
  (r.logits * w).sum().backward();
  for (auto& p : m->parameters()) r.grads.push_back(p.grad().clone());
  torch::NoGradGuard g;
  KvCache cache(m->args(), 3, 64, torch::kFloat32, torch::kCPU);
  auto a = random_ids(1, 40, m->args().vocab_size, 33)[0], b = random_ids(1, 30, m->args().vocab_size, 34)[0];
  m->forward_cached(a.narrow(0, 0, 39), {{0, 0, 39}}, cache);
  m->forward_cached(b.narrow(0, 0, 10), {{2, 0, 10}}, cache);
  m->forward_cached(b.narrow(0, 0, 7), {{1, 0, 7}}, cache);
  // One step: a decode row for slot 0 and two prefill chunks (slots 2, 1).
  r.cached = m->logits(m->forward_cached(torch::cat({a.narrow(0, 39, 1), b.narrow(0, 10, 20), b.narrow(0, 7, 23)}),
                                         {{0, 39, 1}, {2, 10, 20}, {1, 7, 23}}, cache));
  m->set_attention_kernel(AttentionKernel::kEager);
  return r;
}

// The kernel against the explicit one on the same model: logits, every
// parameter's gradient (checkpointing off and on) and a mixed cached step.
void expect_kernel_equals_eager(AttentionKernel kernel) {
  auto a = tiny_args("qwen3");
  auto m = tiny_model(a);
  for (bool ckpt : {false, true}) {
    auto eager = run_with(m, AttentionKernel::kEager, ckpt);
    auto got = run_with(m, kernel, ckpt);
    const auto name = attention_kernel_name(kernel);
    EXPECT_LT(max_abs_diff(got.logits.narrow(1, 200, 100), eager.logits.narrow(1, 200, 100)), 1e-4) << name << ckpt;
    EXPECT_LT(max_abs_diff(got.logits[0], eager.logits[0]), 1e-4) << name << ckpt;
    ASSERT_EQ(got.grads.size(), eager.grads.size());
    for (size_t i = 0; i < eager.grads.size(); ++i) {
      const double scale = std::max(1.0, eager.grads[i].abs().max().item<double>());
      EXPECT_LT(max_abs_diff(got.grads[i], eager.grads[i]) / scale, 1e-4)
          << name << ": parameter " << i << ", ckpt " << ckpt;
    }
    EXPECT_LT(max_abs_diff(got.cached, eager.cached), 1e-4) << name << ckpt;
  }
}
}  // namespace

TEST(TransformerLM, SdpaKernelGivesTheEagerLogitsGradientsAndCachedSteps) {
  if (!sdpa_available()) GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no scaled_dot_product_attention (>= 2.1)";
  expect_kernel_equals_eager(AttentionKernel::kSdpa);
}

TEST(TransformerLM, FusedKernelGivesTheEagerLogitsGradientsAndCachedSteps) {
  expect_kernel_equals_eager(AttentionKernel::kFused);
}
