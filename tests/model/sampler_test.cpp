// Specifications of token sampling: greedy, temperature, top-k, top-p, seeds,
// and the raw-distribution statistics returned with every token.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "agentrl/core/error.h"
#include "agentrl/model/sampler.h"

using namespace agentrl::model;
using agentrl::Rng;

namespace {
std::vector<int> histogram(const std::vector<float>& z, const SamplerParams& p, int n, uint64_t seed = 1) {
  std::vector<int> h(z.size(), 0);
  Rng rng(seed);
  for (int i = 0; i < n; ++i) ++h[sample_token(z.data(), static_cast<int64_t>(z.size()), p, rng).token];
  return h;
}
}  // namespace

TEST(Sampler, GreedyTakesArgmaxWithLowestIdOnTiesAndReportsRawStats) {
  std::vector<float> z = {1, 3, 3, 2};
  Rng rng(0);
  SamplerParams p;
  p.temperature = 0;
  auto s = sample_token(z.data(), 4, p, rng);
  EXPECT_EQ(s.token, 1);
  const double se = std::exp(1) + 2 * std::exp(3) + std::exp(2);
  EXPECT_NEAR(s.logprob, 3 - std::log(se), 1e-6);
  double ent = 0;
  for (float v : z) {
    const double pj = std::exp(v) / se;
    ent -= pj * std::log(pj);
  }
  EXPECT_NEAR(s.entropy, ent, 1e-6);
  EXPECT_EQ(rng, Rng(0));  // greedy draws nothing
}

TEST(Sampler, LogprobIsOfTheRawDistributionEvenWithTemperatureAndTruncation) {
  std::vector<float> z = {0.0f, 1.0f, 2.0f};
  SamplerParams p;
  p.temperature = 0.5;
  p.top_k = 2;
  Rng rng(3);
  auto s = sample_token(z.data(), 3, p, rng);
  const double lse = std::log(1 + std::exp(1.0) + std::exp(2.0));
  EXPECT_NEAR(s.logprob, z[s.token] - lse, 1e-6);
}

TEST(Sampler, TemperatureScalesLogits) {
  // logits [0, ln 4] at T=2 -> probabilities proportional to [1, 2].
  std::vector<float> z = {0.0f, static_cast<float>(std::log(4.0))};
  SamplerParams p;
  p.temperature = 2.0;
  auto h = histogram(z, p, 20000);
  EXPECT_NEAR(h[1] / 20000.0, 2.0 / 3.0, 0.015);
}

TEST(Sampler, TopKKeepsOnlyTheKMostLikelyTokens) {
  std::vector<float> z = {0, 1, 2, 3, 4};
  SamplerParams p;
  p.top_k = 2;
  auto h = histogram(z, p, 20000);
  EXPECT_EQ(h[0] + h[1] + h[2], 0);
  EXPECT_NEAR(h[4] / 20000.0, std::exp(1) / (1 + std::exp(1)), 0.015);
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  // p = [0.5, 0.3, 0.15, 0.05]; top_p 0.7 keeps {0, 1} (0.5 < 0.7 <= 0.8).
  std::vector<float> z;
  for (double q : {0.5, 0.3, 0.15, 0.05}) z.push_back(static_cast<float>(std::log(q)));
  SamplerParams p;
  p.top_p = 0.7;
  auto h = histogram(z, p, 20000);
  EXPECT_EQ(h[2] + h[3], 0);
  EXPECT_NEAR(h[0] / 20000.0, 0.5 / 0.8, 0.015);
}

TEST(Sampler, TopPOverALargeVocabularyKeepsOnlyTheHead) {
  // 5000 tokens: 3 heavy ones hold ~97% of the mass; top_p 0.9 keeps them only.
  std::vector<float> z(5000, 0.0f);
  z[4000] = z[17] = z[2500] = 12.0f;
  SamplerParams p;
  p.top_p = 0.9;
  auto h = histogram(z, p, 3000);
  EXPECT_EQ(h[4000] + h[17] + h[2500], 3000);
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDifferentTokens) {
  std::vector<float> z(50);
  for (int i = 0; i < 50; ++i) z[i] = static_cast<float>(std::sin(i));
  SamplerParams p;
  auto draw = [&](uint64_t seed) {
    Rng rng(seed);
    std::vector<int> out;
    for (int i = 0; i < 40; ++i) out.push_back(sample_token(z.data(), 50, p, rng).token);
    return out;
  };
  EXPECT_EQ(draw(9), draw(9));
  EXPECT_NE(draw(9), draw(10));
}

TEST(Sampler, InvalidParamsThrowNamingTheValue) {
  std::vector<float> z = {0, 1};
  Rng rng(0);
  SamplerParams p;
  p.top_p = 0;
  try {
    sample_token(z.data(), 2, p, rng);
    FAIL();
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos) << e.what();
  }
  p = {};
  p.temperature = -1;
  EXPECT_THROW(sample_token(z.data(), 2, p, rng), agentrl::ConfigError);
}

TEST(Sampler, RowsAreIndependentOfEachOther) {
  auto logits = torch::randn({3, 30});
  std::vector<SamplerParams> ps(3);
  Rng r0(1), r1(2), r2(3), solo(2);
  std::vector<Rng*> rngs = {&r0, &r1, &r2};
  auto rows = sample_rows(logits, ps, rngs);
  auto alone = sample_token(logits[1].contiguous().data_ptr<float>(), 30, ps[1], solo);
  EXPECT_EQ(rows[1].token, alone.token);
  EXPECT_FLOAT_EQ(rows[1].logprob, alone.logprob);
}

namespace {

// Host and device sampling of the same rows with the same seeds.
void expect_same_draws(const torch::Tensor& logits, const std::vector<SamplerParams>& ps, int rounds) {
  const auto S = static_cast<size_t>(logits.size(0));
  std::vector<Rng> host_rngs, dev_rngs;
  for (size_t i = 0; i < S; ++i) {
    host_rngs.emplace_back(100 + i);
    dev_rngs.emplace_back(100 + i);
  }
  std::vector<Rng*> hr, dr;
  for (size_t i = 0; i < S; ++i) {
    hr.push_back(&host_rngs[i]);
    dr.push_back(&dev_rngs[i]);
  }
  for (int round = 0; round < rounds; ++round) {
    auto host = sample_rows(logits, ps, hr);
    auto dev = sample_rows_on_device(logits, ps, dr);
    ASSERT_EQ(host.size(), dev.size());
    for (size_t i = 0; i < S; ++i) {
      EXPECT_EQ(host[i].token, dev[i].token) << "round " << round << " row " << i;
      EXPECT_NEAR(host[i].logprob, dev[i].logprob, 1e-5) << "round " << round << " row " << i;
      EXPECT_NEAR(host[i].entropy, dev[i].entropy, 1e-5) << "round " << round << " row " << i;
    }
  }
  // Both consumed exactly one draw per sampled token.
  for (size_t i = 0; i < S; ++i) EXPECT_EQ(host_rngs[i].uniform(), dev_rngs[i].uniform()) << i;
}

}  // namespace

TEST(DeviceSampler, DrawsTheHostSamplersTokensForEveryParameterMix) {
  torch::manual_seed(7);
  auto logits = torch::randn({8, 500}) * 3;
  logits[2].fill_(0.5);  // all ties: greedy takes id 0, sampling is uniform
  std::vector<SamplerParams> ps(8);
  ps[0].temperature = 0;
  ps[1].temperature = 1.0;
  ps[2].temperature = 0.7;
  ps[3].top_k = 5;
  ps[4].top_p = 0.9;
  ps[5].top_k = 40;
  ps[5].top_p = 0.5;
  ps[5].temperature = 1.3;
  ps[6].temperature = 0.05;  // nearly greedy: most tempered mass underflows
  ps[7].top_p = 0.999;
  expect_same_draws(logits, ps, 200);
}

TEST(DeviceSampler, UntruncatedBatchesAndGreedyBatchesAgreeToo) {
  torch::manual_seed(3);
  auto logits = torch::randn({5, 64});
  expect_same_draws(logits, std::vector<SamplerParams>(5), 300);
  std::vector<SamplerParams> greedy(5);
  for (auto& p : greedy) p.temperature = 0;
  expect_same_draws(logits, greedy, 3);
}

TEST(DeviceSampler, NonFiniteLogitsAndBadParamsAreErrors) {
  auto logits = torch::zeros({2, 10});
  logits[1].fill_(-INFINITY);
  std::vector<SamplerParams> ps(2);
  Rng a(1), b(2);
  std::vector<Rng*> rngs{&a, &b};
  EXPECT_THROW(sample_rows_on_device(logits, ps, rngs), agentrl::Error);
  ps[1].top_p = 0;
  EXPECT_THROW(sample_rows_on_device(torch::zeros({2, 10}), ps, rngs), agentrl::ConfigError);
}

TEST(Sampler, WideRowsSampledTogetherDrawWhatEachRowAloneDraws) {
  // Rows of a real vocabulary's width take sample_rows' vectorised path;
  // each must still draw sample_token's token with its log-prob and entropy.
  torch::manual_seed(11);
  const int64_t V = 20000;
  auto logits = torch::randn({5, V}) * 4;
  logits[4].fill_(-1.5);  // all ties
  std::vector<SamplerParams> ps(5);
  ps[0].temperature = 0;
  ps[1].temperature = 1.0;
  ps[2].temperature = 0.6, ps[2].top_p = 0.9;
  ps[3].temperature = 1.3, ps[3].top_k = 50;
  ps[4].temperature = 0;
  std::vector<Rng> batch_rngs, solo_rngs;
  for (int i = 0; i < 5; ++i) batch_rngs.emplace_back(40 + i), solo_rngs.emplace_back(40 + i);
  std::vector<Rng*> br;
  for (auto& r : batch_rngs) br.push_back(&r);
  for (int round = 0; round < 20; ++round) {
    auto rows = sample_rows(logits, ps, br);
    for (int64_t i = 0; i < 5; ++i) {
      auto alone = sample_token(logits[i].contiguous().data_ptr<float>(), V, ps[i], solo_rngs[i]);
      EXPECT_EQ(rows[i].token, alone.token) << "round " << round << " row " << i;
      EXPECT_NEAR(rows[i].logprob, alone.logprob, 1e-6) << "round " << round << " row " << i;
      EXPECT_NEAR(rows[i].entropy, alone.entropy, 1e-6) << "round " << round << " row " << i;
    }
  }
  EXPECT_EQ(sample_rows(logits, ps, br)[4].token, 0);  // ties: the lowest id
  EXPECT_NEAR(sample_rows(logits, ps, br)[4].entropy, std::log(static_cast<double>(V)), 1e-4);
  auto bad = logits.clone();
  bad[2].fill_(-std::numeric_limits<float>::infinity());  // no finite logit
  EXPECT_THROW(sample_rows(bad, ps, br), agentrl::Error);
}

TEST(Sampler, StatisticsAndDrawsMatchAScalarStdExpReference) {
  // The sampler's vectorised double exp against std::exp one id at a time:
  // rows whose logits spread over 1 to 3000 nats (ids far below the max give
  // mass 0 or a subnormal), widths that are not a multiple of the 4 lanes.
  torch::manual_seed(12);
  for (int64_t V : {3, 7, 1000, 4097}) {
    for (double scale : {1.0, 30.0, 3000.0}) {
      auto row = (torch::randn({V}) * scale).contiguous();
      const float* z = row.data_ptr<float>();
      double m = -INFINITY;
      for (int64_t j = 0; j < V; ++j) m = std::max(m, static_cast<double>(z[j]));
      double se = 0, sez = 0;
      for (int64_t j = 0; j < V; ++j) {
        const double e = std::exp(static_cast<double>(z[j]) - m);
        se += e, sez += e * z[j];
      }
      const double lse = m + std::log(se), entropy = lse - sez / se;
      SamplerParams greedy;
      greedy.temperature = 0;
      Rng rng(1);
      auto t = sample_token(z, V, greedy, rng);
      EXPECT_NEAR(t.logprob, z[t.token] - lse, 1e-6 * std::max(1.0, std::abs(lse))) << V << " " << scale;
      EXPECT_NEAR(t.entropy, entropy, 1e-6 * std::max(1.0, std::abs(lse))) << V << " " << scale;
      // Sampled at temperature 0.7: the inverse CDF over std::exp's masses draws the same ids.
      SamplerParams hot;
      hot.temperature = 0.7;
      Rng a(7), b(7);
      for (int round = 0; round < 50; ++round) {
        const double u = b.uniform();
        std::vector<double> q(static_cast<size_t>(V));
        double total = 0;
        for (int64_t j = 0; j < V; ++j) total += q[j] = std::exp((static_cast<double>(z[j]) - m) / 0.7);
        double acc = 0;
        int64_t want = V - 1;
        for (int64_t j = 0; j < V; ++j)
          if ((acc += q[j]) > u * total) {
            want = j;
            break;
          }
        while (q[want] == 0 && want > 0) --want;
        EXPECT_EQ(sample_token(z, V, hot, a).token, want) << V << " " << scale << " round " << round;
      }
    }
  }
}
