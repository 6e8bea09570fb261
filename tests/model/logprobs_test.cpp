// Specifications of the chunked log-prob / entropy computation against the
// naive full log_softmax, including gradients.
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <torch/torch.h>

#include "agentrl/model/logprobs.h"
#include "tiny_model.h"

using namespace agentrl::model;
using namespace agentrl::model::test_util;

namespace {

struct Naive {
  torch::Tensor lp, ent, psq;  // [B,T], 0 where no prediction
};

// Naive: full [B,T,V] logits, log_softmax, shift by one.
Naive naive_stats(TransformerLM& m, const torch::Tensor& ids, const torch::Tensor& mask, const torch::Tensor& pos) {
  auto logp = torch::log_softmax(m->forward(ids, pos, mask).to(torch::kFloat32), -1);  // [B,T,V]
  const int64_t B = ids.size(0), T = ids.size(1);
  auto pred = logp.narrow(1, 0, T - 1);
  auto tgt = ids.narrow(1, 1, T - 1).unsqueeze(-1);
  auto pm = prediction_mask(mask, pos).to(torch::kFloat32);
  Naive n;
  n.lp = torch::zeros({B, T});
  n.ent = torch::zeros({B, T});
  n.psq = torch::zeros({B, T});
  n.lp.narrow(1, 1, T - 1).copy_(pred.gather(-1, tgt).squeeze(-1));
  n.ent.narrow(1, 1, T - 1).copy_(-(pred.exp() * pred).sum(-1));
  n.psq.narrow(1, 1, T - 1).copy_(pred.exp().pow(2).sum(-1));
  n.lp = n.lp * pm;
  n.ent = n.ent * pm;
  n.psq = n.psq * pm;
  return n;
}

struct Batch {
  torch::Tensor ids, mask, pos;
};

// Two sequences: one full, one left-padded by 3.
Batch padded_batch(int64_t V) {
  Batch b;
  b.ids = random_ids(2, 9, V, 21);
  b.mask = full_mask(2, 9);
  b.mask[1].narrow(0, 0, 3).fill_(false);
  b.pos = position_ids_from_mask(b.mask);
  return b;
}

}  // namespace

TEST(Logprobs, ChunkedMatchesNaiveLogSoftmaxForEveryChunkSize) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  auto b = padded_batch(a.vocab_size);
  torch::NoGradGuard g;
  auto ref = naive_stats(m, b.ids, b.mask, b.pos);
  for (int64_t chunk : {1, 3, 5, 1024}) {
    LogprobOptions o;
    o.chunk_tokens = chunk;
    o.want_prob_sq = true;
    auto st = logprobs_and_entropy(m, b.ids, b.mask, b.pos, o);
    EXPECT_LT(max_abs_diff(st.logprobs, ref.lp), 1e-5) << "chunk " << chunk;
    EXPECT_LT(max_abs_diff(st.entropy, ref.ent), 1e-5) << "chunk " << chunk;
    EXPECT_LT(max_abs_diff(st.prob_sq_sum, ref.psq), 1e-6) << "chunk " << chunk;
  }
}

TEST(Logprobs, ZeroAtFirstTokenAndPaddingAndFirstRealTokenOfLeftPadding) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  auto b = padded_batch(a.vocab_size);
  torch::NoGradGuard g;
  auto st = logprobs_and_entropy(m, b.ids, b.mask, b.pos);
  EXPECT_EQ(st.logprobs[0][0].item<float>(), 0.0f);
  for (int t = 0; t <= 3; ++t) EXPECT_EQ(st.logprobs[1][t].item<float>(), 0.0f) << t;  // 3 pads + first real
  EXPECT_LT(st.logprobs[1][4].item<float>(), 0.0f);
  EXPECT_GT(st.entropy[1][4].item<float>(), 0.0f);
}

TEST(Logprobs, GradientsThroughLogprobsAndEntropyEqualNaiveGradients) {
  auto a = tiny_args();
  auto b = padded_batch(a.vocab_size);
  auto w = torch::randn({2, 9});  // arbitrary per-token loss weights
  auto grads = [&](bool chunked) {
    auto m = tiny_model(a);
    torch::Tensor loss;
    if (chunked) {
      LogprobOptions o;
      o.chunk_tokens = 4;
      o.entropy_grad = true;
      auto st = logprobs_and_entropy(m, b.ids, b.mask, b.pos, o);
      loss = (st.logprobs * w).sum() + 0.3 * (st.entropy * w).sum();
    } else {
      auto n = naive_stats(m, b.ids, b.mask, b.pos);
      loss = (n.lp * w).sum() + 0.3 * (n.ent * w).sum();
    }
    loss.backward();
    std::map<std::string, torch::Tensor> out;
    for (auto& p : m->named_parameters()) out[p.key()] = p.value().grad().clone();
    return out;
  };
  auto gc = grads(true), gn = grads(false);
  for (auto& [name, g] : gn) {
    const double scale = g.abs().max().item<double>();
    EXPECT_LT(max_abs_diff(gc[name], g), 1e-5 * (1 + scale)) << name;
  }
}

TEST(Logprobs, EntropyIsDetachedUnlessEntropyGradIsSet) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  auto b = padded_batch(a.vocab_size);
  auto st = logprobs_and_entropy(m, b.ids, b.mask, b.pos);
  EXPECT_TRUE(st.logprobs.requires_grad());
  EXPECT_FALSE(st.entropy.requires_grad());
  LogprobOptions o;
  o.entropy_grad = true;
  EXPECT_TRUE(logprobs_and_entropy(m, b.ids, b.mask, b.pos, o).entropy.requires_grad());
}

TEST(Logprobs, PositionIdsFromMaskCountRealTokens) {
  auto mask = torch::tensor({0, 0, 1, 1, 1}, torch::kBool).unsqueeze(0);
  auto pos = position_ids_from_mask(mask);
  EXPECT_TRUE(torch::equal(pos, torch::tensor({0, 0, 0, 1, 2}, torch::kInt64).unsqueeze(0)));
}

namespace {

// Three sequences: full, left-padded by 3, and two packed segments (position
// restart at t = 6) followed by right padding; every type's first-layer and
// last-layer paths (qwen3 adds q/k norms).
Batch mixed_batch(int64_t V) {
  Batch b;
  b.ids = random_ids(3, 11, V, 5);
  b.mask = full_mask(3, 11);
  b.mask[1].narrow(0, 0, 3).fill_(false);
  b.mask[2].narrow(0, 9, 2).fill_(false);
  b.pos = position_ids_from_mask(b.mask);
  b.pos[2].narrow(0, 6, 5).copy_(torch::arange(5, torch::kInt64));
  return b;
}

// The gradient of every parameter after backward of `loss`.
std::map<std::string, torch::Tensor> grads_of(TransformerLM& m, const torch::Tensor& loss) {
  m->zero_grad();
  loss.backward();
  std::map<std::string, torch::Tensor> g;
  for (const auto& p : m->named_parameters()) g[p.key()] = p.value().grad().clone();
  return g;
}

}  // namespace

TEST(Logprobs, OnlyTheWantedPositionsEqualTheFullComputationWithTheirGradients) {
  for (const std::string type : {"qwen2", "qwen3"}) {
    for (const bool ckpt : {false, true}) {
      auto m = tiny_model(tiny_args(type));
      m->to(torch::kFloat64);
      m->set_gradient_checkpointing(ckpt);
      const auto b = mixed_batch(m->args().vocab_size);
      // Two of every three positions (also some without a prediction: t = 0,
      // padding, a segment start), and one row with nothing wanted.
      auto only = (torch::arange(11) % 3 != 0).unsqueeze(0).repeat({3, 1});
      only[0].fill_(false);
      LogprobOptions all_opts, only_opts;
      all_opts.want_prob_sq = only_opts.want_prob_sq = true;
      all_opts.entropy_grad = only_opts.entropy_grad = true;
      only_opts.only = only;
      auto all = logprobs_and_entropy(m, b.ids, b.mask, b.pos, all_opts);
      auto part = logprobs_and_entropy(m, b.ids, b.mask, b.pos, only_opts);
      const auto on = only.logical_and(prediction_mask(b.mask, b.pos)).to(torch::kFloat64);
      ASSERT_GT(on.sum().item<double>(), 4.0);
      EXPECT_LT((part.logprobs - all.logprobs * on).abs().max().item<double>(), 1e-12) << type << " ckpt " << ckpt;
      EXPECT_LT((part.entropy - all.entropy * on).abs().max().item<double>(), 1e-12);
      EXPECT_LT((part.prob_sq_sum - all.prob_sq_sum * on).abs().max().item<double>(), 1e-12);
      // The same loss through both paths gives the same gradients.
      auto loss_of = [&](const TokenStats& s) { return (s.logprobs * on).sum() + 0.5 * (s.entropy * on).sum(); };
      const auto g_all = grads_of(m, loss_of(logprobs_and_entropy(m, b.ids, b.mask, b.pos, all_opts)));
      const auto g_part = grads_of(m, loss_of(logprobs_and_entropy(m, b.ids, b.mask, b.pos, only_opts)));
      for (const auto& [name, g] : g_all) {
        EXPECT_GT(g.abs().max().item<double>(), 0.0) << name;
        EXPECT_LT((g_part.at(name) - g).abs().max().item<double>(), 1e-10) << type << " " << name;
      }
    }
  }
}

TEST(Logprobs, NothingWantedGivesZerosAndAGraphThatBackpropagates) {
  auto m = tiny_model(tiny_args());
  const auto b = padded_batch(m->args().vocab_size);
  LogprobOptions o;
  o.only = torch::zeros({2, 9}, torch::kBool);
  auto s = logprobs_and_entropy(m, b.ids, b.mask, b.pos, o);
  EXPECT_EQ(s.logprobs.abs().sum().item<double>(), 0.0);
  auto loss = s.logprobs.sum();
  ASSERT_TRUE(loss.requires_grad());
  loss.backward();  // a micro-batch without loss tokens still joins backward
}
