// Specifications of the chunked log-prob / entropy computation against the
// naive full log_softmax, including gradients.
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <torch/torch.h>
#include <vector>

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

// Choice-mode positions with want_free_logprobs: free_logprobs is the
// unconstrained log-prob everywhere (values and gradients), and at a
// constrained position logprobs - free_logprobs is -log of the unmasked mass
// of its allowed ids (the trainer's actor.choice_mass_coef term).
TEST(Logprobs, FreeLogprobsAreTheUnmaskedOnesAndTheirGapIsTheAllowedMass) {
  for (const auto dtype : {torch::kFloat64, torch::kFloat32}) {
    for (const bool use_only : {false, true}) {
      const double tol = dtype == torch::kFloat64 ? 1e-10 : 2e-5;
      auto m = tiny_model(tiny_args());
      m->to(dtype);
      const auto b = padded_batch(m->args().vocab_size);
      const int64_t V = m->args().vocab_size;
      auto id = [&](int64_t r, int64_t t) { return static_cast<int32_t>(b.ids[r][t].item<int64_t>()); };
      // Row 0: three allowed ids at t = 3, the target alone at t = 5; row 1: two at t = 6.
      std::vector<std::map<int64_t, std::vector<int32_t>>> allowed(2);
      allowed[0][3] = {id(0, 3), static_cast<int32_t>((id(0, 3) + 1) % V), static_cast<int32_t>((id(0, 3) + 5) % V)};
      allowed[0][5] = {id(0, 5)};
      allowed[1][6] = {static_cast<int32_t>((id(1, 6) + 2) % V), id(1, 6)};
      LogprobOptions free_opts, opts;
      if (use_only) free_opts.only = opts.only = torch::ones({2, 9}, torch::kBool);
      opts.allowed = &allowed;
      opts.want_free_logprobs = true;
      auto s = logprobs_and_entropy(m, b.ids, b.mask, b.pos, opts);
      auto plain = logprobs_and_entropy(m, b.ids, b.mask, b.pos, free_opts);
      ASSERT_TRUE(s.free_logprobs.defined());
      EXPECT_LT(max_abs_diff(s.free_logprobs, plain.logprobs), tol) << "only " << use_only;
      auto logp = torch::log_softmax(m->forward(b.ids, b.pos, b.mask).to(torch::kFloat64), -1);
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t t = 1; t < 9; ++t) {
          const auto it = allowed[static_cast<size_t>(r)].find(t);
          const double gap = (s.logprobs[r][t] - s.free_logprobs[r][t]).item<double>();
          if (it == allowed[static_cast<size_t>(r)].end()) {
            EXPECT_NEAR(gap, 0.0, tol) << "free position " << r << "," << t;
            continue;
          }
          const auto ids = torch::tensor(std::vector<int64_t>(it->second.begin(), it->second.end()), torch::kInt64);
          const double log_mass = torch::logsumexp(logp[r][t - 1].index_select(0, ids), 0).item<double>();
          EXPECT_NEAR(gap, -log_mass, tol * 10) << r << "," << t;
          if (it->second.size() > 1) {
            EXPECT_GT(gap, 1e-3) << "the unmasked policy puts mass elsewhere";
          }
        }
      }
      const auto g_free = grads_of(m, logprobs_and_entropy(m, b.ids, b.mask, b.pos, opts).free_logprobs.sum());
      const auto g_plain = grads_of(m, logprobs_and_entropy(m, b.ids, b.mask, b.pos, free_opts).logprobs.sum());
      for (const auto& [name, g] : g_plain)
        EXPECT_LT((g_free.at(name) - g).abs().max().item<double>(), tol * 100) << name << " only " << use_only;
    }
  }
}
