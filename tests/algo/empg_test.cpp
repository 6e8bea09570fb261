// Specifications of EMPG (arXiv 2509.09265). Expected numbers follow the six
// steps of the estimator by hand (and a few lines of Python's statistics
// module as a reference implementation for the decimals).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/empg.h"
#include "agentrl/algo/grpo.h"
#include "agentrl/core/error.h"
#include "algo_test_util.h"

namespace agentrl::algo {
namespace {

rollout::Trajectory episode(int64_t group, int64_t sample, double reward, std::vector<std::vector<float>> e) {
  return testing::make_episode(group, sample, reward, std::move(e));
}

AdvantageResult run_empg(const std::vector<rollout::Trajectory>& b, AlgorithmConfig cfg = {}) {
  cfg.adv_estimator = "empg";
  LocalCollective local;
  return make_estimator(cfg)->compute(b, local);
}

// Group 0: A (r=1) with steps of entropy mean 2 ([1, 3]) and 0; B (r=0) with
// one step of entropy 4.
std::vector<rollout::Trajectory> small_batch() {
  return {episode(0, 0, 1.0, {{1.0f, 3.0f}, {0.0f}}), episode(0, 1, 0.0, {{4.0f}})};
}

TEST(Empg, HandComputedSmallBatch) {
  // Base GRPO: +-0.5 / (sqrt(0.5) + 1e-6). H = {2, 0, 4} -> H~ = {0.5, 0, 1}.
  // g = exp(-H~) / mean(exp(-H~)) = {0.92159, 1.51944, 0.55897}.
  // Bonus: only A's first step, f = exp(-H~(A,1)) = 1; zeta = 0.05.
  // A_mod = {0.70166, 1.07441, -0.39525}; minus mean 0.46027.
  auto r = run_empg(small_batch());
  EXPECT_NEAR(r.turn_advantages[0][0], 0.2413886768, 1e-5);
  EXPECT_NEAR(r.turn_advantages[0][1], 0.6141343531, 1e-5);
  EXPECT_NEAR(r.turn_advantages[1][0], -0.8555230299, 1e-5);
  EXPECT_NEAR(r.diagnostics.at("empg/g_max"), 1.5194411719, 1e-6);
  EXPECT_NEAR(r.diagnostics.at("empg/g_min"), 0.5589711706, 1e-6);
  EXPECT_NEAR(r.diagnostics.at("empg/amplified_frac"), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.diagnostics.at("empg/attenuated_frac"), 2.0 / 3.0, 1e-12);
}

TEST(Empg, TurnDetailsAreEachStepsGainBonusAndEntropy) {
  // The values the dashboard shows per step: the same g and zeta * f as the
  // hand computation of HandComputedSmallBatch.
  auto r = run_empg(small_batch());
  ASSERT_EQ(r.turn_details.size(), 2u);
  ASSERT_EQ(r.turn_details[0].size(), 2u);
  EXPECT_NEAR(r.turn_details[0][0].at("empg/gain"), 0.92159, 1e-5);
  EXPECT_NEAR(r.turn_details[0][1].at("empg/gain"), 1.51944, 1e-5);
  EXPECT_NEAR(r.turn_details[1][0].at("empg/gain"), 0.55897, 1e-5);
  EXPECT_NEAR(r.turn_details[0][0].at("empg/bonus"), 0.05, 1e-12);  // zeta * f, f = exp(-0) = 1
  EXPECT_EQ(r.turn_details[0][1].at("empg/bonus"), 0.0);             // last step: no next step
  EXPECT_NEAR(r.turn_details[0][0].at("empg/entropy"), 2.0, 1e-6);
  EXPECT_NEAR(r.turn_details[1][0].at("empg/entropy"), 4.0, 1e-6);
}

TEST(Empg, FinalStdNormDividesByUnbiasedStepStd) {
  AlgorithmConfig cfg;
  cfg.options<EmpgConfig>("empg").final_std_norm = true;
  auto r = run_empg(small_batch(), cfg);
  EXPECT_NEAR(r.turn_advantages[0][0], 0.3159595599, 1e-5);
  EXPECT_NEAR(r.turn_advantages[0][1], 0.8038555184, 1e-5);
  EXPECT_NEAR(r.turn_advantages[1][0], -1.1198150783, 1e-5);
}

std::vector<rollout::Trajectory> varied_batch() {
  return {episode(0, 0, 1.0, {{0.3f, 0.5f}, {2.0f}, {0.1f}}), episode(0, 1, 0.0, {{1.5f}, {0.7f, 0.9f, 1.1f}}),
          episode(0, 2, 1.0, {{0.2f}}), episode(1, 0, 0.0, {{3.0f}, {2.5f}}), episode(1, 1, 1.0, {{0.4f}})};
}

TEST(Empg, MeanOfScaleIsExactlyOne) {
  auto r = run_empg(varied_batch());
  EXPECT_NEAR(r.diagnostics.at("empg/g_mean"), 1.0, 1e-12);
  EXPECT_EQ(r.diagnostics.at("empg/steps"), 9.0);  // 3 + 2 + 1 + 2 + 1
}

TEST(Empg, FinalAdvantagesHaveZeroBatchMean) {
  auto r = run_empg(varied_batch());
  double sum = 0;
  int n = 0;
  for (const auto& t : r.turn_advantages)
    for (float a : t) sum += a, ++n;
  EXPECT_EQ(n, 9);
  EXPECT_NEAR(sum / n, 0.0, 1e-6);
}

TEST(Empg, ScaleDecreasesWithEntropy) {
  // zeta = 0: A_final = g * A - const. Within the positive-advantage
  // trajectory, higher step entropy must give a strictly smaller advantage.
  AlgorithmConfig cfg;
  cfg.options<EmpgConfig>("empg").zeta = 0.0;
  std::vector<rollout::Trajectory> b = {episode(0, 0, 1.0, {{0.5f}, {1.0f}, {2.0f}, {3.0f}}), episode(0, 1, 0.0, {{1.0f}})};
  auto r = run_empg(b, cfg);
  const auto& a = r.turn_advantages[0];
  EXPECT_GT(a[0], a[1]);
  EXPECT_GT(a[1], a[2]);
  EXPECT_GT(a[2], a[3]);
}

TEST(Empg, NoBonusOnAnEpisodesLastStep) {
  // Equal rewards -> base advantage 0, so A_final = zeta f - mean(zeta f).
  // H = {0, 2 | 2} -> H~ = {0, 1 | 1}; f = {exp(-1), none | none}.
  std::vector<rollout::Trajectory> b = {episode(0, 0, 1.0, {{0.0f}, {2.0f}}), episode(0, 1, 1.0, {{2.0f}})};
  auto r = run_empg(b);
  const double f = 0.05 * std::exp(-1.0 * (2.0 / (2.0 + 1e-8)));
  EXPECT_NEAR(r.turn_advantages[0][0], f - f / 3, 1e-6);
  EXPECT_NEAR(r.turn_advantages[0][1], -f / 3, 1e-6);  // last step: no bonus
  EXPECT_NEAR(r.turn_advantages[1][0], -f / 3, 1e-6);  // last (only) step: no bonus
}

TEST(Empg, TwoRankCollectiveEqualsOneProcess) {
  auto b = varied_batch();
  for (bool std_norm : {false, true}) {
    AlgorithmConfig cfg;
    cfg.adv_estimator = "empg";
    cfg.options<EmpgConfig>("empg").final_std_norm = std_norm;
    auto single = run_empg(b, cfg);
    // Rank 0 holds group 0, rank 1 group 1 (groups never span ranks).
    std::vector<std::vector<rollout::Trajectory>> parts = {{b[0], b[1], b[2]}, {b[3], b[4]}};
    std::vector<AdvantageResult> out(2);
    auto est = make_estimator(cfg);
    testing::ThreadCollectiveGroup group(2);
    group.run([&](int rank, Collective& c) { out[rank] = est->compute(parts[rank], c); });
    size_t i = 0;
    for (int rank = 0; rank < 2; ++rank) {
      for (const auto& traj : out[rank].turn_advantages) {
        for (size_t t = 0; t < traj.size(); ++t) EXPECT_NEAR(traj[t], single.turn_advantages[i][t], 1e-6);
        ++i;
      }
    }
    EXPECT_NEAR(out[0].diagnostics.at("empg/g_mean"), 1.0, 1e-12);
    EXPECT_NEAR(out[1].diagnostics.at("empg/g_max"), single.diagnostics.at("empg/g_max"), 1e-12);
  }
}

TEST(Empg, RankWithoutStepsStillParticipates) {
  auto b = varied_batch();
  std::vector<std::vector<rollout::Trajectory>> parts = {b, {}};
  std::vector<AdvantageResult> out(2);
  AlgorithmConfig cfg;
  cfg.adv_estimator = "empg";
  auto est = make_estimator(cfg);
  auto single = run_empg(b);
  testing::ThreadCollectiveGroup group(2);
  group.run([&](int rank, Collective& c) { out[rank] = est->compute(parts[rank], c); });
  EXPECT_TRUE(out[1].turn_advantages.empty());
  EXPECT_NEAR(out[0].turn_advantages[1][1], single.turn_advantages[1][1], 1e-7);
}

TEST(Empg, LossMaskedTrajectoriesGetZeroAndStayOutOfBatchStats) {
  auto b = small_batch();
  auto masked = episode(0, 2, 1.0, {{100.0f}});  // would dominate the entropy range
  masked.loss_masked = true;
  b.push_back(masked);
  auto r = run_empg(b);
  EXPECT_EQ(r.turn_advantages[2][0], 0.0f);
  EXPECT_EQ(r.diagnostics.at("empg/steps"), 3.0);
  EXPECT_NEAR(r.diagnostics.at("empg/entropy_max"), 4.0, 1e-12);
}

TEST(Empg, DapoBaseUsesStdNormalisedGroupAdvantage) {
  // With grpo.norm_by_std false, base grpo is Dr.GRPO but base dapo is not.
  AlgorithmConfig a, d;
  a.options<GrpoConfig>("grpo").norm_by_std = false;
  d.options<GrpoConfig>("grpo").norm_by_std = false;
  d.options<EmpgConfig>("empg").base = "dapo";
  a.options<EmpgConfig>("empg").zeta = d.options<EmpgConfig>("empg").zeta = 0;
  // One step each with equal entropy: g = 1, so A_final = base - mean(base).
  std::vector<rollout::Trajectory> b = {episode(0, 0, 1.0, {{1.0f}}), episode(0, 1, 0.0, {{1.0f}})};
  EXPECT_NEAR(run_empg(b, a).turn_advantages[0][0], 0.5, 1e-6);
  EXPECT_NEAR(run_empg(b, d).turn_advantages[0][0], 0.5 / (std::sqrt(0.5) + 1e-6), 1e-6);
}

TEST(Empg, MissingEntropiesAreAnErrorNamingTheStep) {
  auto b = small_batch();
  b[1].turns[0].entropies.clear();
  try {
    run_empg(b);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("episode '0-1' turn 0"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("0 entropies for 1 generated tokens"));
  }
}

TEST(Empg, ANonFiniteStepEntropyIsAnErrorNamingTheStepNotANaNBatch) {
  // Before: the NaN reached the batch min / max and every advantage of the
  // batch became NaN, which the PPO update then skipped step after step.
  auto b = small_batch();
  b[1].turns[0].entropies[0] = std::numeric_limits<float>::quiet_NaN();
  try {
    run_empg(b);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("episode '" + b[1].episode_id + "' turn 0"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("non-finite step entropy"));
  }
  b[1].turns[0].entropies[0] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(run_empg(b), Error);
}

}  // namespace
}  // namespace agentrl::algo
