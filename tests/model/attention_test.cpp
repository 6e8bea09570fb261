// Specifications of RoPE, RMSNorm and grouped-query attention, each against
// a direct re-statement of its formula.
#include <gtest/gtest.h>

#include <limits>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>

#include "agentrl/core/error.h"
#include "agentrl/model/attention.h"
#include "agentrl/model/norm.h"
#include "agentrl/model/rope.h"
#include "tiny_model.h"

using namespace agentrl::model;
using agentrl::model::test_util::max_abs_diff;

namespace {

// rope(x)_i = x_i cos(a_i) - x_{i+D/2} sin(a_i); rope(x)_{i+D/2} = x_{i+D/2} cos(a_i) + x_i sin(a_i),
// a_i = pos * inv_freq_i (RoFormer eq. 34 in HF's half-split layout).
torch::Tensor direct_rope(const torch::Tensor& x, const std::vector<int64_t>& pos, const std::vector<double>& inv) {
  const int64_t T = x.size(0), D = x.size(1), h = D / 2;
  auto out = torch::zeros_like(x, torch::kFloat64);
  auto x64 = x.to(torch::kFloat64);
  auto xa = x64.accessor<double, 2>();
  auto oa = out.accessor<double, 2>();
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < h; ++i) {
      const double a = pos[t] * inv[i], c = std::cos(a), s = std::sin(a);
      oa[t][i] = xa[t][i] * c - xa[t][i + h] * s;
      oa[t][i + h] = xa[t][i + h] * c + xa[t][i] * s;
    }
  }
  return out;
}

std::vector<double> default_inv_freq(double theta, int64_t D) {
  std::vector<double> inv;
  for (int64_t i = 0; i < D / 2; ++i) inv.push_back(std::pow(theta, -2.0 * i / D));
  return inv;
}

}  // namespace

TEST(Rope, MatchesDirectCosSinFormula) {
  ModelArgs a;
  a.rope_theta = 10000.0;
  const int64_t D = 16;
  auto inv = rope_inv_freq(a, D, torch::kFloat64);
  std::vector<int64_t> pos = {0, 1, 5, 17, 300, 4095};
  torch::manual_seed(0);
  auto x = torch::randn({6, D}, torch::kFloat64);
  auto [c, s] = rope_cos_sin(torch::tensor(pos), inv, torch::kFloat64);
  auto got = apply_rope(x, c, s);
  EXPECT_LT(max_abs_diff(got, direct_rope(x, pos, default_inv_freq(1e4, D))), 1e-12);
}

TEST(Rope, Float32AnglesMatchFormulaToFloatPrecision) {
  ModelArgs a;
  a.rope_theta = 1e6;
  const int64_t D = 64;
  std::vector<int64_t> pos = {0, 3, 100, 1000};
  torch::manual_seed(1);
  auto x = torch::randn({4, D});
  auto [c, s] = rope_cos_sin(torch::tensor(pos), rope_inv_freq(a, D), torch::kFloat32);
  EXPECT_LT(max_abs_diff(apply_rope(x, c, s), direct_rope(x, pos, default_inv_freq(1e6, D))), 1e-3);
}

TEST(Rope, LinearScalingDividesEveryFrequencyByFactor) {
  ModelArgs a;
  a.rope_scaling.type = "linear";
  a.rope_scaling.factor = 4.0;
  auto inv = rope_inv_freq(a, 8, torch::kFloat64);
  auto ref = default_inv_freq(a.rope_theta, 8);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(inv[i].item<double>(), ref[i] / 4.0, 1e-15);
}

TEST(Rope, Llama3ScalingKeepsHighDividesLowAndInterpolatesMiddle) {
  // Llama-3.1 values: factor 8, low 1, high 4, original context 8192, theta 5e5, D 128.
  ModelArgs a;
  a.rope_theta = 500000.0;
  a.rope_scaling = {"llama3", 8.0, 1.0, 4.0, 8192};
  const int64_t D = 128;
  auto inv = rope_inv_freq(a, D, torch::kFloat64);
  auto ref = default_inv_freq(a.rope_theta, D);
  for (int64_t i = 0; i < D / 2; ++i) {
    const double wavelen = 2 * M_PI / ref[i];
    double expect;
    if (wavelen < 8192.0 / 4.0) {
      expect = ref[i];
    } else if (wavelen > 8192.0 / 1.0) {
      expect = ref[i] / 8.0;
    } else {
      const double smooth = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
      expect = (1 - smooth) * ref[i] / 8.0 + smooth * ref[i];
    }
    EXPECT_NEAR(inv[i].item<double>(), expect, 1e-12 * ref[i]) << "frequency " << i;
  }
}

TEST(Rope, UnknownScalingTypeThrowsNamingIt) {
  ModelArgs a;
  a.rope_scaling.type = "yarn";
  try {
    rope_inv_freq(a, 8);
    FAIL() << "expected ConfigError";
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'yarn'"), std::string::npos) << e.what();
  }
}

TEST(RmsNorm, MatchesDirectFormula) {
  torch::manual_seed(2);
  auto x = torch::randn({3, 5, 12}, torch::kFloat64);
  auto w = torch::randn({12}, torch::kFloat64);
  const double eps = 1e-5;
  auto got = rms_norm(x, w, eps);
  auto xa = x.accessor<double, 3>();
  auto ga = got.accessor<double, 3>();
  double worst = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      double ss = 0;
      for (int k = 0; k < 12; ++k) ss += xa[i][j][k] * xa[i][j][k];
      const double r = 1.0 / std::sqrt(ss / 12 + eps);
      for (int k = 0; k < 12; ++k) worst = std::max(worst, std::abs(ga[i][j][k] - w[k].item<double>() * xa[i][j][k] * r));
    }
  EXPECT_LT(worst, 1e-12);
}

namespace {
// The kernels this build has (sdpa needs LibTorch >= 2.1): the attention
// tests below hold for each, against the same references.
std::vector<AttentionKernel> kernels() {
  std::vector<AttentionKernel> k = {AttentionKernel::kEager};
  if (sdpa_available()) k.push_back(AttentionKernel::kSdpa);
  return k;
}
// Float64 inputs: the explicit kernel agrees with the references to ~1e-15;
// the fused one sums in tiles with an online softmax.
double tolerance(AttentionKernel kernel) { return kernel == AttentionKernel::kEager ? 1e-12 : 1e-10; }

// HF eager attention: repeat_kv then softmax(q k^T / sqrt(D) + mask) v.
torch::Tensor repeat_heads_reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     const torch::Tensor& allowed) {
  const int64_t G = q.size(1) / k.size(1);
  auto kr = k.repeat_interleave(G, 1), vr = v.repeat_interleave(G, 1);
  auto scores = torch::matmul(q, kr.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(3)));
  scores = scores.masked_fill(allowed.unsqueeze(1).logical_not(), -INFINITY);
  return torch::matmul(torch::softmax(scores, -1), vr);
}
}  // namespace

TEST(GroupedAttention, MatchesExplicitRepeatHeadsReference) {
  torch::manual_seed(3);
  const int64_t B = 2, Hq = 6, Hkv = 2, T = 11, D = 8;
  auto q = torch::randn({B, Hq, T, D}, torch::kFloat64);
  auto k = torch::randn({B, Hkv, T, D}, torch::kFloat64);
  auto v = torch::randn({B, Hkv, T, D}, torch::kFloat64);
  auto allowed = torch::ones({T, T}, torch::kBool).tril().unsqueeze(0).repeat({B, 1, 1});
  allowed[1].narrow(1, 0, 3).fill_(false);  // batch 1: first 3 keys are padding...
  allowed[1].narrow(0, 0, 3).narrow(1, 0, 3).copy_(torch::eye(3, torch::kBool));  // ...padding rows see themselves
  auto ref = repeat_heads_reference(q, k, v, allowed);
  for (auto kernel : kernels()) {
    for (int64_t block : {1, 4, 256}) {
      EXPECT_LT(max_abs_diff(grouped_attention(q, k, v, allowed, block, kernel), ref), tolerance(kernel))
          << "query_block " << block << ", kernel " << attention_kernel_name(kernel);
    }
    // Arbitrary masks (no causal block skipping): the same rows.
    EXPECT_LT(max_abs_diff(masked_attention(q, k, v, allowed, 4, kernel), ref), tolerance(kernel))
        << attention_kernel_name(kernel);
  }
}

TEST(GroupedAttention, CachedAttentionEqualsCausalAttentionOfTheLastQueries) {
  torch::manual_seed(4);
  const int64_t Hq = 4, Hkv = 1, L = 9, n = 3, D = 8;
  auto q = torch::randn({1, Hq, L, D}, torch::kFloat64);
  auto k = torch::randn({1, Hkv, L, D}, torch::kFloat64);
  auto v = torch::randn({1, Hkv, L, D}, torch::kFloat64);
  auto allowed = torch::ones({L, L}, torch::kBool).tril().unsqueeze(0);
  auto ref = repeat_heads_reference(q, k, v, allowed)[0];
  for (auto kernel : kernels()) {
    for (int64_t m : {n, int64_t{1}}) {  // a chunk of new queries, and one
      auto got = cached_attention(q[0].narrow(1, L - m, m), k[0], v[0], kernel);
      EXPECT_LT(max_abs_diff(got, ref.narrow(1, L - m, m)), tolerance(kernel))
          << m << " queries, kernel " << attention_kernel_name(kernel);
    }
  }
}

TEST(GroupedAttention, DecodeAttentionOfABatchEqualsEachSlotAloneWhateverTheUnwrittenCacheHolds) {
  torch::manual_seed(5);
  const int64_t S = 5, Hq = 6, Hkv = 2, cap = 12, D = 8;
  // Unwritten positions hold NaN and infinities: they must add nothing.
  auto K = torch::full({S, Hkv, cap, D}, std::numeric_limits<double>::quiet_NaN(), torch::kFloat64);
  auto V = torch::full({S, Hkv, cap, D}, std::numeric_limits<double>::infinity(), torch::kFloat64);
  const std::vector<int64_t> slots = {3, 0, 4}, lengths = {7, 1, 12};
  for (size_t b = 0; b < slots.size(); ++b) {
    K[slots[b]].narrow(1, 0, lengths[b]).copy_(torch::randn({Hkv, lengths[b], D}, torch::kFloat64));
    V[slots[b]].narrow(1, 0, lengths[b]).copy_(torch::randn({Hkv, lengths[b], D}, torch::kFloat64));
  }
  const auto B = static_cast<int64_t>(slots.size());
  auto q = torch::randn({B, Hq, D}, torch::kFloat64);
  auto len = torch::tensor(lengths, torch::kInt64);
  auto hidden = torch::arange(12, torch::kInt64).unsqueeze(0).ge(len.unsqueeze(1));  // [B, max_len]
  for (auto kernel : kernels()) {
    auto got = decode_attention(q, K, V, torch::tensor(slots, torch::kInt64), hidden, kernel);
    ASSERT_EQ(got.sizes(), (std::vector<int64_t>{B, Hq, D}));
    for (int64_t b = 0; b < B; ++b) {
      auto alone = cached_attention(q[b].unsqueeze(1), K[slots[b]].narrow(1, 0, lengths[b]),
                                    V[slots[b]].narrow(1, 0, lengths[b]));  // [Hq, 1, D], eager
      EXPECT_LT(max_abs_diff(got[b], alone.squeeze(1)), tolerance(kernel))
          << "row " << b << ", kernel " << attention_kernel_name(kernel);
    }
  }
}

TEST(GroupedAttention, ChunkAttentionOfPaddedChunksEqualsEachChunkAloneWhateverTheUnwrittenCacheHolds) {
  torch::manual_seed(6);
  const int64_t S = 5, Hq = 6, Hkv = 2, cap = 16, D = 8;
  auto K = torch::full({S, Hkv, cap, D}, std::numeric_limits<double>::quiet_NaN(), torch::kFloat64);
  auto V = torch::full({S, Hkv, cap, D}, std::numeric_limits<double>::infinity(), torch::kFloat64);
  // Three chunks: 4 new tokens after 3 cached, 2 new from scratch, 6 new after 9 cached.
  const std::vector<int64_t> slots = {2, 4, 0}, starts = {3, 0, 9}, lens = {4, 2, 6};
  const int64_t C = 3, qmax = 6, L = 15;
  for (int64_t c = 0; c < C; ++c) {
    const int64_t n = starts[c] + lens[c];
    K[slots[c]].narrow(1, 0, n).copy_(torch::randn({Hkv, n, D}, torch::kFloat64));
    V[slots[c]].narrow(1, 0, n).copy_(torch::randn({Hkv, n, D}, torch::kFloat64));
  }
  auto q = torch::randn({C, qmax, Hq, D}, torch::kFloat64);
  auto hidden = torch::ones({C, qmax, L}, torch::kBool);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t i = 0; i < qmax; ++i) {
      const int64_t last = starts[c] + std::min(i, lens[c] - 1);  // pads see what the last query sees
      hidden[c][i].narrow(0, 0, last + 1).fill_(false);
    }
  }
  for (auto kernel : kernels()) {
    auto got = chunk_attention(q, K, V, torch::tensor(slots, torch::kInt64), hidden, kernel);
    ASSERT_EQ(got.sizes(), (std::vector<int64_t>{C, qmax, Hq, D}));
    EXPECT_FALSE(got.isnan().any().item<bool>()) << attention_kernel_name(kernel);
    for (int64_t c = 0; c < C; ++c) {
      const int64_t n = starts[c] + lens[c];
      auto alone = cached_attention(q[c].narrow(0, 0, lens[c]).transpose(0, 1).contiguous(),
                                    K[slots[c]].narrow(1, 0, n), V[slots[c]].narrow(1, 0, n));  // [Hq, len, D], eager
      EXPECT_LT(max_abs_diff(got[c].narrow(0, 0, lens[c]), alone.transpose(0, 1)), tolerance(kernel))
          << "chunk " << c << ", kernel " << attention_kernel_name(kernel);
    }
  }
}

// The engine's prefill on the fused kernel (float32 on the CPU): padded
// chunks over several key tiles, behind unwritten (NaN) cache, and a lone
// chunk, against the explicit path of the same float32 inputs.
TEST(GroupedAttention, FusedKernelAttendsPrefillChunksAndALoneChunkAsTheExplicitPathDoes) {
  torch::manual_seed(7);
  const int64_t S = 4, Hq = 4, Hkv = 2, cap = 200, D = 16;
  auto K = torch::full({S, Hkv, cap, D}, std::numeric_limits<float>::quiet_NaN());
  auto V = torch::full({S, Hkv, cap, D}, std::numeric_limits<float>::quiet_NaN());
  // Chunks: 40 new tokens after 130 cached, 70 from scratch, 1 after 65.
  const std::vector<int64_t> slots = {3, 0, 1}, starts = {130, 0, 65}, lens = {40, 70, 1};
  const int64_t C = 3, qmax = 70, L = 170;
  for (int64_t c = 0; c < C; ++c) {
    const int64_t n = starts[c] + lens[c];
    K[slots[c]].narrow(1, 0, n).copy_(torch::randn({Hkv, n, D}));
    V[slots[c]].narrow(1, 0, n).copy_(torch::randn({Hkv, n, D}));
  }
  auto q = torch::randn({C, qmax, Hq, D});
  auto hidden = torch::ones({C, qmax, L}, torch::kBool);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t i = 0; i < qmax; ++i) hidden[c][i].narrow(0, 0, starts[c] + std::min(i, lens[c] - 1) + 1).fill_(false);
  }
  auto slot_ids = torch::tensor(slots, torch::kInt64);
  auto fused = chunk_attention(q, K, V, slot_ids, hidden, AttentionKernel::kFused);
  auto eager = chunk_attention(q, K, V, slot_ids, hidden, AttentionKernel::kEager);
  for (int64_t c = 0; c < C; ++c) {
    auto got = fused[c].narrow(0, 0, lens[c]), want = eager[c].narrow(0, 0, lens[c]);
    EXPECT_FALSE(got.isnan().any().item<bool>()) << "chunk " << c;
    EXPECT_LT(max_abs_diff(got, want), 1e-5) << "chunk " << c;
    // The same chunk alone (cached_attention), on both kernels.
    const int64_t n = starts[c] + lens[c];
    auto qa = q[c].narrow(0, 0, lens[c]).transpose(0, 1).contiguous();
    auto ka = K[slots[c]].narrow(1, 0, n), va = V[slots[c]].narrow(1, 0, n);
    auto alone = cached_attention(qa, ka, va, AttentionKernel::kFused);
    EXPECT_LT(max_abs_diff(alone.transpose(0, 1), want), 1e-5) << "chunk " << c << " alone";
    EXPECT_LT(max_abs_diff(alone, cached_attention(qa, ka, va, AttentionKernel::kEager)), 1e-5) << "chunk " << c;
  }
}

TEST(AttentionKernel, AutoIsSdpaWhereTheLibTorchHasItElseFusedAndAnUnavailableOrUnknownKernelIsAConfigError) {
  EXPECT_EQ(resolve_attention_kernel("eager"), AttentionKernel::kEager);
  EXPECT_EQ(resolve_attention_kernel("fused"), AttentionKernel::kFused);
  EXPECT_STREQ(attention_kernel_name(AttentionKernel::kFused), "fused");
  EXPECT_EQ(resolve_attention_kernel("auto"), sdpa_available() ? AttentionKernel::kSdpa : AttentionKernel::kFused);
  if (sdpa_available()) {
    EXPECT_EQ(resolve_attention_kernel("sdpa"), AttentionKernel::kSdpa);
  } else {
    try {
      resolve_attention_kernel("sdpa");
      ADD_FAILURE() << "sdpa accepted on LibTorch " << TORCH_VERSION;
    } catch (const agentrl::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("model.attention: sdpa needs LibTorch >= 2.1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(TORCH_VERSION), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(resolve_attention_kernel("flash"), agentrl::ConfigError);
}
