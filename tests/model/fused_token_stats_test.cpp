// The fused CPU kernels of the log-prob loss (LogprobOptions::fused, the
// default) against the ATen ops path (fused = false) through the public
// chunked_token_stats: values, gradients with and without the entropy term,
// rows of extreme logits, a vocabulary that is not a multiple of the kernel's
// lane count, and bad target ids.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

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
