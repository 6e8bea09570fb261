// The fused CPU kernels of the log-prob loss (LogprobOptions::fused, the
// default) against the ATen ops path (fused = false) through the public
// chunked_token_stats: values, gradients with and without the entropy term,
// rows of extreme logits, a vocabulary that is not a multiple of the kernel's
// lane count, bad target ids, and rows constrained to a set of tokens.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "agentrl/model/logprobs.h"
#include "tiny_model.h"

using namespace agentrl::model;
using agentrl::model::test_util::max_abs_diff;

namespace {

struct Problem {
  torch::Tensor hidden, weight, targets;
};

// N rows of width H over a vocabulary of V, logits of spread ~`scale`; row 0
// has all-equal logits (zero weight row), row 1 one dominant logit.
Problem problem(int64_t N, int64_t H, int64_t V, double scale, torch::Dtype dt, uint64_t seed) {
  torch::manual_seed(seed);
  Problem p;
  p.hidden = torch::randn({N, H}, torch::kFloat64);
  p.weight = torch::randn({V, H}, torch::kFloat64) * (scale / std::sqrt(double(H)));
  p.hidden[0].zero_();
  p.weight[3] = p.hidden[1] * (20.0 * scale / p.hidden[1].pow(2).sum());
  p.hidden = p.hidden.to(dt);
  p.weight = p.weight.to(dt);
  p.targets = torch::randint(V, {N}, torch::kInt64);
  p.targets[1] = 3;
  return p;
}

TokenStats stats(const Problem& p, bool fused, int64_t chunk = 7, bool entropy_grad = false) {
  LogprobOptions o;
  o.fused = fused;
  o.chunk_tokens = chunk;
  o.want_prob_sq = true;
  o.entropy_grad = entropy_grad;
  return chunked_token_stats(p.hidden, p.weight, p.targets, o);
}

}  // namespace

TEST(FusedTokenStats, Float32ValuesEqualTheAtenOpsOnAWideVocabulary) {
  for (double scale : {1.0, 8.0}) {
    auto p = problem(29, 24, 5003, scale, torch::kFloat32, 5);  // 5003 = 312 x 16 + 11: a tail
    torch::NoGradGuard g;
    auto f = stats(p, true), a = stats(p, false);
    EXPECT_LT(max_abs_diff(f.logprobs, a.logprobs), 2e-5 * scale) << scale;
    EXPECT_LT(max_abs_diff(f.entropy, a.entropy), 2e-5 * scale) << scale;
    EXPECT_LT(max_abs_diff(f.prob_sq_sum, a.prob_sq_sum), 5e-6) << scale;  // float32 rounding of values near 1
    EXPECT_NEAR(f.entropy[0].item<double>(), std::log(5003.0), 1e-5);  // uniform row
    EXPECT_NEAR(f.prob_sq_sum[0].item<double>(), 1.0 / 5003, 1e-9);
    EXPECT_GT(f.prob_sq_sum[1].item<double>(), 0.9) << "dominant logit";
  }
}

TEST(FusedTokenStats, Float64ValuesEqualTheAtenOpsToRounding) {
  auto p = problem(13, 8, 333, 3.0, torch::kFloat64, 6);
  torch::NoGradGuard g;
  auto f = stats(p, true, 4), a = stats(p, false, 4);
  EXPECT_LT(max_abs_diff(f.logprobs, a.logprobs), 1e-12);
  EXPECT_LT(max_abs_diff(f.entropy, a.entropy), 1e-12);
  EXPECT_LT(max_abs_diff(f.prob_sq_sum, a.prob_sq_sum), 1e-14);
}

// Logits spread over thousands of nats: most exponentials underflow (the
// float kernel returns 0 below e^-87.33), the target may sit far in the tail.
TEST(FusedTokenStats, ExtremeLogitsStayFiniteAndMatchFloat64) {
  auto p32 = problem(9, 16, 2048, 400.0, torch::kFloat32, 7);
  Problem p64{p32.hidden.to(torch::kFloat64), p32.weight.to(torch::kFloat64), p32.targets};
  torch::NoGradGuard g;
  auto f = stats(p32, true), ref = stats(p64, false);
  EXPECT_TRUE(torch::isfinite(f.logprobs).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(f.entropy).all().item<bool>());
  const auto rel = (f.logprobs.to(torch::kFloat64) - ref.logprobs).abs() / (1 + ref.logprobs.abs());
  EXPECT_LT(rel.max().item<double>(), 1e-5);
  EXPECT_LT(max_abs_diff(f.entropy.to(torch::kFloat64), ref.entropy), 1e-4);
  EXPECT_LT(ref.logprobs.min().item<double>(), -100) << "the problem should put some target far in the tail";
}

// Gradients w.r.t. hidden and weight, float64: the fused backward (from the
// saved log-sum-exp and entropy) equals the ATen backward, with the entropy in
// the loss, without it (its gradient then is not materialised), and with the
// entropy alone (no log-prob gradient).
TEST(FusedTokenStats, GradientsEqualTheAtenOpsWithAndWithoutTheEntropyTerm) {
  enum Loss { kLogprob, kBoth, kEntropyOnly };
  for (Loss loss : {kLogprob, kBoth, kEntropyOnly}) {
    auto grads = [&](bool fused) {
      auto p = problem(11, 8, 301, 2.0, torch::kFloat64, 8);
      p.hidden.requires_grad_(true);
      p.weight.requires_grad_(true);
      auto st = stats(p, fused, 4, loss != kLogprob);
      auto w = torch::linspace(-1, 1, 11, torch::kFloat64);
      torch::Tensor l = loss == kEntropyOnly ? (st.entropy * w).sum() : (st.logprobs * w).sum();
      if (loss == kBoth) l = l + 0.3 * (st.entropy * w.flip(0)).sum();
      l.backward();
      return std::make_pair(p.hidden.grad(), p.weight.grad());
    };
    auto [fh, fw] = grads(true);
    auto [ah, aw] = grads(false);
    EXPECT_LT(max_abs_diff(fh, ah), 1e-12) << "loss " << loss;
    EXPECT_LT(max_abs_diff(fw, aw), 1e-12) << "loss " << loss;
    EXPECT_GT(fw.abs().max().item<double>(), 1e-3) << "loss " << loss;
  }
}

TEST(FusedTokenStats, Float32GradientsEqualTheAtenOps) {
  auto grads = [&](bool fused) {
    auto p = problem(40, 32, 4099, 4.0, torch::kFloat32, 9);
    p.weight.requires_grad_(true);
    p.hidden.requires_grad_(true);
    auto st = stats(p, fused, 16, true);
    ((st.logprobs * 0.7).sum() - 0.1 * st.entropy.sum()).backward();
    return std::make_pair(p.hidden.grad(), p.weight.grad());
  };
  auto [fh, fw] = grads(true);
  auto [ah, aw] = grads(false);
  EXPECT_LT(max_abs_diff(fh, ah), 1e-5 * (1 + ah.abs().max().item<double>()));
  EXPECT_LT(max_abs_diff(fw, aw), 1e-5 * (1 + aw.abs().max().item<double>()));
}

TEST(FusedTokenStats, TargetOutsideTheVocabularyIsAnErrorNamingIt) {
  auto p = problem(4, 8, 100, 1.0, torch::kFloat32, 10);
  p.targets[2] = 100;
  torch::NoGradGuard g;
  try {
    stats(p, true);
    FAIL() << "no error";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("target id 100 outside the vocabulary [0, 100)"), std::string::npos)
        << e.what();
  }
}

// Choice-mode rows (LogprobOptions::allowed_offsets / _ids): a constrained
// row's stats are those of the softmax over its allowed logits alone (here
// computed by gathering those logits, an independent route), free rows are
// untouched, and the gradients (log-prob and entropy terms) are the gathered
// computation's, in both the fused and the ATen paths, across chunk borders.
TEST(FusedTokenStats, ConstrainedRowsAreTheSoftmaxOverTheirAllowedLogits) {
  const int64_t N = 9, V = 97;
  // Row -> allowed ids (each holds the row's target); rows 0, 4 and 8 are free.
  std::map<int64_t, std::vector<int64_t>> sets = {{1, {3, 10, 11}}, {2, {5}}, {3, {0, 7, 50, 96}},
                                                  {5, {2, 3, 4, 5, 6}}, {6, {40, 41}}, {7, {12, 13}}};
  auto p = problem(N, 8, V, 3.0, torch::kFloat64, 11);
  std::vector<int64_t> offsets{0}, ids;
  for (int64_t i = 0; i < N; ++i) {
    if (sets.count(i)) {
      p.targets[i] = sets[i][static_cast<size_t>(i) % sets[i].size()];
      ids.insert(ids.end(), sets[i].begin(), sets[i].end());
    }
    offsets.push_back(static_cast<int64_t>(ids.size()));
  }
  auto reference = [&](const torch::Tensor& h, const torch::Tensor& w) {
    auto z = torch::matmul(h, w.t());
    std::vector<torch::Tensor> lp, ent;
    for (int64_t i = 0; i < N; ++i) {
      auto row = z[i];
      int64_t target = p.targets[i].item<int64_t>();
      if (sets.count(i)) {
        const auto& s = sets[i];
        row = row.index_select(0, torch::tensor(s, torch::kInt64));
        target = std::find(s.begin(), s.end(), target) - s.begin();
      }
      auto logp = torch::log_softmax(row, 0);
      lp.push_back(logp[target]);
      ent.push_back(-(logp.exp() * logp).sum());
    }
    return std::make_pair(torch::stack(lp), torch::stack(ent));
  };
  auto weights = torch::linspace(-1, 1, N, torch::kFloat64);
  auto run = [&](bool fused, bool ref) {
    auto h = p.hidden.clone().requires_grad_(true), w = p.weight.clone().requires_grad_(true);
    torch::Tensor lp, ent;
    if (ref) {
      std::tie(lp, ent) = reference(h, w);
    } else {
      LogprobOptions o;
      o.fused = fused;
      o.chunk_tokens = 4;
      o.entropy_grad = true;
      o.allowed_offsets = torch::tensor(offsets, torch::kInt64);
      o.allowed_ids = torch::tensor(ids, torch::kInt64);
      auto st = chunked_token_stats(h, w, p.targets, o);
      lp = st.logprobs, ent = st.entropy;
    }
    ((lp * weights).sum() + 0.3 * (ent * weights.flip(0)).sum()).backward();
    return std::vector<torch::Tensor>{lp.detach(), ent.detach(), h.grad(), w.grad()};
  };
  const auto want = run(false, true);
  EXPECT_NEAR(want[0][2].item<double>(), 0.0, 1e-15) << "a single allowed token is certain";
  for (bool fused : {true, false}) {
    const auto got = run(fused, false);
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_LT(max_abs_diff(got[k], want[k]), 1e-10) << (fused ? "fused" : "aten") << " output " << k;
  }
  // Without the constraint the constrained rows differ: the mask is what matches.
  torch::NoGradGuard g;
  LogprobOptions free;
  free.chunk_tokens = 4;
  auto st = chunked_token_stats(p.hidden, p.weight, p.targets, free);
  EXPECT_GT((st.logprobs - want[0]).abs()[3].item<double>(), 1e-3);
  EXPECT_LT((st.logprobs - want[0]).abs()[0].item<double>(), 1e-12) << "a free row is the full softmax";
}
