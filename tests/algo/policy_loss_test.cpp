// Specifications of the ppo_clip loss, verl's aggregation modes, KL
// estimators, truncated IS, the entropy bonus and the adaptive KL controller.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>

#include "agentrl/algo/policy_loss.h"
#include "agentrl/core/error.h"

namespace agentrl::algo {
namespace {

torch::Tensor t2(std::vector<std::vector<double>> rows) {
  const int64_t n = static_cast<int64_t>(rows.size()), m = static_cast<int64_t>(rows[0].size());
  auto out = torch::zeros({n, m}, torch::kFloat64);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) out[i][j] = rows[i][j];
  return out;
}

// One token per call: returns the per-token loss (token-mean of one token).
double one_token_loss(double ratio, double adv, const ActorConfig& cfg) {
  PolicyLossInputs in;
  in.old_logprobs = t2({{std::log(0.5)}});
  in.logprobs = in.old_logprobs + std::log(ratio);
  in.advantages = t2({{adv}});
  in.loss_mask = t2({{1}});
  return compute_policy_loss(in, cfg).loss.item<double>();
}

TEST(PpoClip, UnclippedInsideTheTrustRegion) {
  ActorConfig cfg;
  EXPECT_NEAR(one_token_loss(1.1, 2.0, cfg), -2.2, 1e-9);
  EXPECT_NEAR(one_token_loss(0.5, 1.0, cfg), -0.5, 1e-9);  // A > 0, ratio low: not clipped (pessimistic bound)
}

TEST(PpoClip, PositiveAdvantageClippedAtOnePlusEpsHigh) {
  ActorConfig cfg;
  EXPECT_NEAR(one_token_loss(1.5, 1.0, cfg), -1.2, 1e-9);
  cfg.clip_high = 0.28;  // DAPO clip-higher
  EXPECT_NEAR(one_token_loss(1.25, 1.0, cfg), -1.25, 1e-9);
  EXPECT_NEAR(one_token_loss(1.3, 1.0, cfg), -1.28, 1e-9);
}

TEST(PpoClip, NegativeAdvantageClippedAtOneMinusEpsLow) {
  ActorConfig cfg;
  EXPECT_NEAR(one_token_loss(0.5, -1.0, cfg), 0.8, 1e-9);
}

TEST(PpoClip, DualClipBoundsNegativeAdvantageLossByC) {
  ActorConfig cfg;  // c = 3
  EXPECT_NEAR(one_token_loss(4.0, -1.0, cfg), 3.0, 1e-9);
  EXPECT_NEAR(one_token_loss(2.5, -1.0, cfg), 2.5, 1e-9);  // below c: untouched
  cfg.dual_clip = 0;
  EXPECT_NEAR(one_token_loss(4.0, -1.0, cfg), 4.0, 1e-9);
}

TEST(PpoClip, DualClipBelowOneIsAConfigError) {
  ActorConfig cfg;
  cfg.dual_clip = 0.5;
  try {
    one_token_loss(1.0, 1.0, cfg);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("actor.dual_clip = 0.5"));
  }
}

TEST(PpoClip, ClipFractionsCountEachKind) {
  ActorConfig cfg;
  PolicyLossInputs in;
  in.old_logprobs = torch::zeros({1, 5}, torch::kFloat64);
  in.logprobs = torch::log(t2({{1.5, 0.5, 4.0, 1.0, 9.0}}));
  in.advantages = t2({{1, -1, -1, 1, 1}});
  in.loss_mask = t2({{1, 1, 1, 1, 0}});
  auto out = compute_policy_loss(in, cfg);
  EXPECT_NEAR(out.metrics.at("clip_frac_high"), 0.25, 1e-12);
  EXPECT_NEAR(out.metrics.at("clip_frac_low"), 0.25, 1e-12);
  EXPECT_NEAR(out.metrics.at("dual_clip_frac"), 0.25, 1e-12);
  EXPECT_NEAR(out.metrics.at("tokens"), 4.0, 1e-12);
  // approx_kl = mean(log pi_old - log pi) over the 4 tokens.
  EXPECT_NEAR(out.metrics.at("approx_kl"), -(std::log(1.5) + std::log(0.5) + std::log(4.0)) / 4, 1e-9);
  // Per token: -1.2, 0.8, 3, -1 -> mean 0.4.
  EXPECT_NEAR(out.loss.item<double>(), 0.4, 1e-9);
}

TEST(PpoClip, GradientMatchesFiniteDifferences) {
  torch::manual_seed(3);
  ActorConfig cfg;
  cfg.kl.enabled = true;
  cfg.kl.coef = 0.3;
  cfg.kl.type = "k3";
  cfg.loss_agg = "seq-mean-token-mean";
  auto old_lp = -torch::rand({3, 6}, torch::kFloat64) * 2 - 0.1;
  auto base = old_lp + (torch::rand({3, 6}, torch::kFloat64) - 0.5);  // ratios in [0.6, 1.65]
  PolicyLossInputs in;
  in.old_logprobs = old_lp;
  in.ref_logprobs = old_lp + 0.2 * (torch::rand({3, 6}, torch::kFloat64) - 0.5);
  in.advantages = torch::randn({3, 6}, torch::kFloat64);
  in.loss_mask = t2({{0, 1, 1, 1, 0, 0}, {0, 1, 1, 1, 1, 1}, {0, 0, 1, 0, 0, 0}});
  in.logprobs = base.clone().requires_grad_(true);
  auto loss = compute_policy_loss(in, cfg).loss;
  loss.backward();
  auto grad = in.logprobs.grad();
  const double h = 1e-6;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      auto plus = base.clone(), minus = base.clone();
      plus[i][j] += h;
      minus[i][j] -= h;
      in.logprobs = plus;
      const double lp = compute_policy_loss(in, cfg).loss.item<double>();
      in.logprobs = minus;
      const double lm = compute_policy_loss(in, cfg).loss.item<double>();
      EXPECT_NEAR(grad[i][j].item<double>(), (lp - lm) / (2 * h), 1e-6) << "token " << i << "," << j;
    }
  }
}

// Ragged batch: row 0 has 3 loss tokens, row 1 one, row 2 none (T = 4).
const std::vector<std::vector<double>> kLoss = {{1, 2, 3, 50}, {4, 60, 70, 80}, {7, 7, 7, 7}};
const std::vector<std::vector<double>> kMask = {{1, 1, 1, 0}, {1, 0, 0, 0}, {0, 0, 0, 0}};

TEST(AggregateLoss, TokenMean) {
  EXPECT_NEAR(aggregate_loss(t2(kLoss), t2(kMask), "token-mean").item<double>(), (1 + 2 + 3 + 4) / 4.0, 1e-12);
}
TEST(AggregateLoss, SeqMeanTokenSum) {
  EXPECT_NEAR(aggregate_loss(t2(kLoss), t2(kMask), "seq-mean-token-sum").item<double>(), (6 + 4 + 0) / 3.0, 1e-12);
}
TEST(AggregateLoss, SeqMeanTokenMean) {
  EXPECT_NEAR(aggregate_loss(t2(kLoss), t2(kMask), "seq-mean-token-mean").item<double>(), (2 + 4 + 0) / 3.0, 1e-12);
}
TEST(AggregateLoss, SeqMeanTokenSumNormDividesByTheLengthNotTheRows) {
  EXPECT_NEAR(aggregate_loss(t2(kLoss), t2(kMask), "seq-mean-token-sum-norm").item<double>(), 10.0 / 4.0, 1e-12);
  EXPECT_NEAR(aggregate_loss(t2(kLoss), t2(kMask), "seq-mean-token-sum-norm", 0, 0, 8).item<double>(), 10.0 / 8.0,
              1e-12);
}
TEST(AggregateLoss, UnknownModeIsAConfigError) {
  try {
    aggregate_loss(t2(kLoss), t2(kMask), "token-sum");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("actor.loss_agg: unknown aggregation mode 'token-sum'"));
  }
}

TEST(AggregateLoss, ModesThroughThePolicyLoss) {
  // ratio 1 everywhere, so the per-token loss is -A: set A = -L.
  const std::map<std::string, double> expected = {{"token-mean", 2.5},
                                                   {"seq-mean-token-sum", 10.0 / 3},
                                                   {"seq-mean-token-mean", 2.0},
                                                   {"seq-mean-token-sum-norm", 2.5}};
  for (const auto& [mode, value] : expected) {
    ActorConfig cfg;
    cfg.loss_agg = mode;
    cfg.loss_agg_norm_length = 4;
    PolicyLossInputs in;
    in.old_logprobs = torch::full({3, 4}, -1.0, torch::kFloat64);
    in.logprobs = in.old_logprobs.clone();
    in.advantages = -t2(kLoss);
    in.loss_mask = t2(kMask);
    EXPECT_NEAR(compute_policy_loss(in, cfg).loss.item<double>(), value, 1e-9) << mode;
  }
}

TEST(AggregateLoss, SeqMeanTokenSumNormWithoutAConstantLengthIsRefused) {
  // The padded width of a micro-batch changes with its rows: one row's loss
  // weight would depend on which micro-batch it lands in.
  ActorConfig cfg;
  cfg.loss_agg = "seq-mean-token-sum-norm";
  PolicyLossInputs in;
  in.old_logprobs = torch::full({3, 4}, -1.0, torch::kFloat64);
  in.logprobs = in.old_logprobs.clone();
  in.advantages = -t2(kLoss);
  in.loss_mask = t2(kMask);
  try {
    compute_policy_loss(in, cfg);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("actor.loss_agg_norm_length"));
  }
}

TEST(AggregateLoss, MicroBatchesWithGlobalNormalisersSumToTheFullBatchLoss) {
  torch::manual_seed(5);
  for (std::string mode : {"token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"}) {
    ActorConfig cfg;
    cfg.loss_agg = mode;
    cfg.loss_agg_norm_length = 16;
    auto old_lp = -torch::rand({4, 5}, torch::kFloat64);
    auto lp = old_lp + 0.3 * (torch::rand({4, 5}, torch::kFloat64) - 0.5);
    auto adv = torch::randn({4, 5}, torch::kFloat64);
    auto mask = t2({{0, 1, 1, 0, 0}, {0, 1, 1, 1, 1}, {0, 0, 0, 1, 0}, {0, 1, 0, 0, 0}});
    auto call = [&](int64_t lo, int64_t hi, double tokens, double seqs) {
      PolicyLossInputs in;
      in.logprobs = lp.slice(0, lo, hi);
      in.old_logprobs = old_lp.slice(0, lo, hi);
      in.advantages = adv.slice(0, lo, hi);
      in.loss_mask = mask.slice(0, lo, hi);
      in.global_tokens = tokens;
      in.global_sequences = seqs;
      return compute_policy_loss(in, cfg).loss.item<double>();
    };
    const double full = call(0, 4, 0, 0);
    const double parts = call(0, 1, 8, 4) + call(1, 4, 8, 4);
    EXPECT_NEAR(parts, full, 1e-12) << mode;
  }
}

TEST(KlEstimate, MatchesSchulmanFormulas) {
  auto lp = t2({{std::log(0.5)}}), ref = t2({{std::log(0.25)}});
  EXPECT_NEAR(kl_estimate(lp, ref, "k1").item<double>(), std::log(2.0), 1e-12);
  EXPECT_NEAR(kl_estimate(lp, ref, "k2").item<double>(), 0.5 * std::log(2.0) * std::log(2.0), 1e-12);
  // k3 with r = pi_ref / pi = 0.5: r - 1 - log r.
  EXPECT_NEAR(kl_estimate(lp, ref, "k3").item<double>(), 0.5 - 1 - std::log(0.5), 1e-12);
  EXPECT_NEAR(kl_estimate(lp, ref, "low_var_kl").item<double>(), 0.5 - 1 - std::log(0.5), 1e-12);
}

TEST(KlEstimate, LowVarKlIsClampedAsInVerl) {
  // log r = 30 -> clamped to 20 -> exp(20) - 21 -> clamped to 10.
  EXPECT_NEAR(kl_estimate(t2({{-30.0}}), t2({{0.0}}), "low_var_kl").item<double>(), 10.0, 1e-12);
  EXPECT_THROW(kl_estimate(t2({{0.0}}), t2({{0.0}}), "k4"), ConfigError);
}

TEST(KlPerRow, SumsLossTokensOfEachRow) {
  auto lp = t2({{0.0, -1.0, -2.0}, {-1.0, -1.0, -1.0}});
  auto ref = t2({{0.0, -2.0, -4.0}, {-1.5, -1.0, -1.0}});
  auto mask = t2({{1, 1, 0}, {1, 1, 1}});
  auto rows = kl_per_row(lp, ref, mask, "k1");
  EXPECT_NEAR(rows[0].item<double>(), 1.0, 1e-12);   // 0 + 1 (third token masked)
  EXPECT_NEAR(rows[1].item<double>(), 0.5, 1e-12);
}

TEST(KlRewardPenalty, SubtractsCoefTimesTrajectoryKlFromTheReward) {
  // Two rows of trajectory 0 (window mode), one row of trajectory 1; k1.
  rollout::TrainBatch b;
  b.old_logprobs = t2({{0.0, -1.0}, {-1.0, -1.0}, {-2.0, -2.0}});
  b.ref_logprobs = t2({{0.0, -2.0}, {-1.5, -9.0}, {-1.0, -2.0}});
  b.loss_mask = t2({{0, 1}, {1, 0}, {1, 1}});
  b.trajectory_of_row = {0, 0, 1};
  std::vector<rollout::Trajectory> trajs(2);
  trajs[0].reward = 1.0;
  trajs[1].reward = 0.0;
  // trajectory 0: 1 + 0.5 = 1.5; trajectory 1: -1 + 0 = -1; 4 tokens.
  const double mean_kl = apply_kl_reward_penalty(trajs, b, 0.1, "k1");
  EXPECT_NEAR(trajs[0].reward, 1.0 - 0.15, 1e-12);
  EXPECT_NEAR(trajs[1].reward, 0.1, 1e-12);
  EXPECT_NEAR(mean_kl, 0.5 / 4, 1e-12);
}

TEST(PolicyLoss, KlLossTermAddsCoefTimesAggregatedKl) {
  ActorConfig cfg;
  cfg.kl.enabled = true;
  cfg.kl.type = "k1";
  cfg.kl.coef = 0.1;
  PolicyLossInputs in;
  in.old_logprobs = t2({{-1.0, -1.0}});
  in.logprobs = in.old_logprobs.clone();
  in.ref_logprobs = t2({{-2.0, -1.5}});  // k1 = {1, 0.5}: mean 0.75
  in.advantages = t2({{1.0, 1.0}});
  in.loss_mask = t2({{1, 1}});
  auto out = compute_policy_loss(in, cfg);
  EXPECT_NEAR(out.loss.item<double>(), -1.0 + 0.1 * 0.75, 1e-12);
  in.kl_coef = 0.2;  // adaptive controller's value
  EXPECT_NEAR(compute_policy_loss(in, cfg).loss.item<double>(), -1.0 + 0.2 * 0.75, 1e-12);
  in.ref_logprobs = torch::Tensor();
  EXPECT_THROW(compute_policy_loss(in, cfg), Error);
}

TEST(PolicyLoss, EntropyBonusSubtractsCoefTimesMeanEntropy) {
  ActorConfig cfg;
  cfg.entropy_coef = 0.01;
  PolicyLossInputs in;
  in.old_logprobs = t2({{-1.0, -1.0}});
  in.logprobs = in.old_logprobs.clone();
  in.advantages = t2({{2.0, 2.0}});
  in.loss_mask = t2({{1, 1}});
  in.entropy = t2({{1.0, 3.0}});
  auto out = compute_policy_loss(in, cfg);
  EXPECT_NEAR(out.loss.item<double>(), -2.0 - 0.01 * 2.0, 1e-12);
  EXPECT_NEAR(out.metrics.at("entropy"), 2.0, 1e-12);
}

// Choice-mode tokens: the term adds coef * agg(log p_masked - log p_free),
// -log of the unmasked mass on the allowed ids (0 at free tokens, where both
// log-probs are the same), and its gradient pulls log p_free up.
TEST(PolicyLoss, ChoiceMassTermAddsCoefTimesTheAggregatedAllowedMassNll) {
  ActorConfig cfg;
  cfg.choice_mass_coef = 0.5;
  PolicyLossInputs in;
  in.old_logprobs = t2({{-1.0, -1.0, -1.0}});
  in.logprobs = in.old_logprobs.clone();
  in.advantages = t2({{0.0, 0.0, 0.0}});
  in.loss_mask = t2({{1, 1, 0}});
  // Token 0 constrained, allowed mass 0.25; token 1 free; token 2 masked out.
  in.free_logprobs = t2({{-1.0 + std::log(0.25), -1.0, -9.0}}).requires_grad_(true);
  auto out = compute_policy_loss(in, cfg);
  const double nll = -std::log(0.25);
  EXPECT_NEAR(out.loss.item<double>(), 0.5 * nll / 2, 1e-12);
  EXPECT_NEAR(out.metrics.at("choice_mass_loss"), nll / 2, 1e-12);
  EXPECT_NEAR(out.metrics.at("choice_mass_nll"), nll / 2, 1e-12);
  out.loss.backward();
  EXPECT_NEAR(in.free_logprobs.grad()[0][0].item<double>(), -0.5 / 2, 1e-12);
  EXPECT_EQ(in.free_logprobs.grad()[0][2].item<double>(), 0.0);
  const auto names = policy_loss_metric_names(cfg, false);
  EXPECT_NE(std::find(names.begin(), names.end(), "choice_mass_nll"), names.end());
  EXPECT_EQ(metric_combine("choice_mass_loss"), MetricCombine::kSum);
  in.free_logprobs = torch::Tensor();
  try {
    compute_policy_loss(in, cfg);
    ADD_FAILURE() << "no free_logprobs: expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("free_logprobs"));
  }
}

TEST(PolicyLoss, TruncatedImportanceWeightIsCappedAndScalesTheLoss) {
  ActorConfig cfg;
  cfg.tis_cap = 2.0;
  PolicyLossInputs in;
  in.old_logprobs = t2({{std::log(0.6), std::log(0.3)}});
  in.behaviour_logprobs = t2({{std::log(0.2), std::log(0.6)}});  // w = {3 -> 2, 0.5}
  in.logprobs = in.old_logprobs.clone();
  in.advantages = t2({{1.0, 1.0}});
  in.loss_mask = t2({{1, 1}});
  auto out = compute_policy_loss(in, cfg);
  EXPECT_NEAR(out.loss.item<double>(), (-2.0 - 0.5) / 2, 1e-9);
  EXPECT_NEAR(out.metrics.at("tis_clip_frac"), 0.5, 1e-12);
  EXPECT_NEAR(out.metrics.at("tis_weight_mean"), 1.25, 1e-9);
}

TEST(PolicyLoss, MisShapedInputNamesIt) {
  PolicyLossInputs in;
  in.logprobs = torch::zeros({2, 3}, torch::kFloat64);
  in.old_logprobs = torch::zeros({2, 3}, torch::kFloat64);
  in.advantages = torch::zeros({2, 4}, torch::kFloat64);
  in.loss_mask = torch::ones({2, 3}, torch::kFloat64);
  try {
    compute_policy_loss(in, ActorConfig{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("advantages has shape [2, 4], expected [2, 3]"));
  }
}

TEST(KlController, AdaptiveUpdateFollowsZieglerEtAl) {
  KlConfig cfg;
  cfg.coef = 0.1;
  cfg.adaptive.enabled = true;
  cfg.adaptive.target = 0.1;
  cfg.adaptive.horizon = 100;
  KlController c(cfg);
  c.update(0.2, 10);  // error clip(0.2/0.1 - 1) = 0.2 -> x(1 + 0.2 * 10 / 100)
  EXPECT_NEAR(c.value(), 0.1 * 1.02, 1e-12);
  c.update(0.09, 10);  // error -0.1 -> x(1 - 0.01)
  EXPECT_NEAR(c.value(), 0.1 * 1.02 * 0.99, 1e-12);
  cfg.adaptive.enabled = false;
  KlController fixed(cfg);
  fixed.update(5.0, 10);
  EXPECT_EQ(fixed.value(), 0.1);
}

}  // namespace
}  // namespace agentrl::algo

namespace agentrl::algo {
namespace {

TEST(PolicyLossMetricNames, AreExactlyTheKeysTheLossProducesUnderEachConfig) {
  // ppo_update reduces these names over ranks in this order on every rank: a
  // name the loss does not produce (or a key missing here) would desynchronise
  // the collectives or drop a metric.
  for (int variant = 0; variant < 5; ++variant) {
    ActorConfig cfg;
    if (variant == 1) cfg.dual_clip = 3.0;
    if (variant == 2) cfg.tis_cap = 2.0;
    if (variant == 3) {
      cfg.kl.enabled = true;
      cfg.kl.use_as = "loss";
    }
    if (variant == 4) cfg.entropy_coef = 0.01;
    PolicyLossInputs in;
    in.old_logprobs = torch::zeros({1, 3}, torch::kFloat64);
    in.logprobs = torch::full({1, 3}, -0.5, torch::kFloat64);
    in.behaviour_logprobs = torch::zeros({1, 3}, torch::kFloat64);
    in.ref_logprobs = torch::zeros({1, 3}, torch::kFloat64);
    in.entropy = torch::ones({1, 3}, torch::kFloat64);
    in.advantages = torch::ones({1, 3}, torch::kFloat64);
    in.loss_mask = torch::ones({1, 3}, torch::kFloat64);
    auto out = compute_policy_loss(in, cfg);
    std::vector<std::string> keys;
    for (const auto& kv : out.metrics) keys.push_back(kv.first);
    auto names = policy_loss_metric_names(cfg, /*with_entropy=*/true);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(keys, names) << "variant " << variant;
  }
}

}  // namespace
}  // namespace agentrl::algo
