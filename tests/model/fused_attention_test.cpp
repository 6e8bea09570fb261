// agentrl's fused CPU attention kernel (src/model/fused_attention.h) against
// the explicit formula in float64: outputs and the gradients of q, k and v,
// for causal, padded, packed and arbitrary masks, tile edges included.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "../../src/model/fused_attention.h"
#include "agentrl/model/attention.h"
#include "tiny_model.h"

using namespace agentrl::model;
using agentrl::model::test_util::max_abs_diff;

namespace {

// softmax(q k^T / sqrt(D) + mask) v with K/V repeated per query head, in
// float64; rows that allow no key give zeros.
torch::Tensor reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& allowed) {
  const int64_t G = q.size(1) / k.size(1);
  auto kr = k.repeat_interleave(G, 1), vr = v.repeat_interleave(G, 1);
  auto scores = torch::matmul(q, kr.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(3)));
  auto m = allowed.unsqueeze(1);
  scores = scores.masked_fill(m.logical_not(), -1e300);
  auto p = torch::softmax(scores, -1) * m.any(-1, true);
  return torch::matmul(p, vr);
}

// A causal mask of B rows over T tokens: row 1 left-padded by `pad` (its
// padding rows see themselves), row 2 (if any) two packed segments split at
// T / 2.
torch::Tensor causal_mask(int64_t B, int64_t T, int64_t pad) {
  auto allowed = torch::ones({T, T}, torch::kBool).tril().unsqueeze(0).repeat({B, 1, 1});
  if (B > 1) {
    allowed[1].narrow(1, 0, pad).fill_(false);
    allowed[1].narrow(0, 0, pad).narrow(1, 0, pad).copy_(torch::eye(pad, torch::kBool));
  }
  if (B > 2) allowed[2].narrow(0, T / 2, T - T / 2).narrow(1, 0, T / 2).fill_(false);
  return allowed;
}

struct Grads {
  torch::Tensor out, dq, dk, dv;
};

// Output and gradients under the loss sum(out * w).
Grads run(const torch::Tensor& q0, const torch::Tensor& k0, const torch::Tensor& v0, const torch::Tensor& allowed,
          const torch::Tensor& w, bool fused) {
  auto q = q0.detach().clone().requires_grad_(true), k = k0.detach().clone().requires_grad_(true);
  auto v = v0.detach().clone().requires_grad_(true);
  auto out = fused ? agentrl::model::detail::fused_attention(q, k, v, allowed) : reference(q, k, v, allowed);
  (out * w.to(out.scalar_type())).sum().backward();
  return {out.detach(), q.grad(), k.grad(), v.grad()};
}

// Fused (float32) against the float64 reference, each tensor relative to its
// largest entry.
void expect_close(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& allowed,
                  const std::string& what) {
  torch::manual_seed(7);
  auto w = torch::randn(q.sizes(), torch::kFloat64);
  auto want = run(q.to(torch::kFloat64), k.to(torch::kFloat64), v.to(torch::kFloat64), allowed, w, false);
  auto got = run(q, k, v, allowed, w, true);
  auto rel = [](const torch::Tensor& a, const torch::Tensor& b) {
    return max_abs_diff(a, b) / std::max(1.0, b.abs().max().item<double>());
  };
  EXPECT_LT(rel(got.out, want.out), 2e-6) << what << ": output";
  EXPECT_LT(rel(got.dq, want.dq), 1e-5) << what << ": dq";
  EXPECT_LT(rel(got.dk, want.dk), 1e-5) << what << ": dk";
  EXPECT_LT(rel(got.dv, want.dv), 1e-5) << what << ": dv";
}

}  // namespace

TEST(FusedAttention, EqualsTheFormulaWithItsGradientsForCausalPaddedAndPackedRowsAtTileEdges) {
  torch::manual_seed(1);
  // T around the 8-row and 64-key tiles; D = 8 .. 64; grouped and not.
  for (int64_t T : {1, 7, 8, 63, 65, 130}) {
    for (auto [Hq, Hkv, D] : std::vector<std::array<int64_t, 3>>{{4, 2, 8}, {3, 3, 32}, {6, 2, 64}}) {
      const int64_t B = 3, pad = std::min<int64_t>(T - 1, 5);
      auto q = torch::randn({B, Hq, T, D}), k = torch::randn({B, Hkv, T, D}), v = torch::randn({B, Hkv, T, D});
      expect_close(q, k, v, causal_mask(B, T, pad),
                   "T " + std::to_string(T) + ", Hq " + std::to_string(Hq) + ", D " + std::to_string(D));
    }
  }
}

TEST(FusedAttention, TakesArbitraryMasksFewerQueriesThanKeysAndRowsThatSeeNothing) {
  torch::manual_seed(2);
  const int64_t B = 2, Hq = 4, Hkv = 2, Q = 9, K = 150, D = 16;
  auto q = torch::randn({B, Hq, Q, D}), k = torch::randn({B, Hkv, K, D}), v = torch::randn({B, Hkv, K, D});
  auto allowed = torch::rand({B, Q, K}) < 0.3;
  allowed[0][3].fill_(false);  // a row that sees no key: zeros, no gradient
  allowed[1][4].fill_(false);
  allowed[1][4][149] = true;  // only the last key (the last, partial tile)
  allowed[1][5].fill_(false);
  allowed[1][5].narrow(0, 64, 64).fill_(true);  // one whole middle tile
  expect_close(q, k, v, allowed, "random mask");
  auto out = agentrl::model::detail::fused_attention(q, k, v, allowed);
  EXPECT_EQ(out[0].select(1, 3).abs().max().item<float>(), 0.0f);
}

TEST(FusedAttention, SameBitsWhateverTheThreadCount) {
  torch::manual_seed(3);
  const int64_t B = 2, Hq = 4, Hkv = 2, T = 200, D = 32;
  auto q = torch::randn({B, Hq, T, D}), k = torch::randn({B, Hkv, T, D}), v = torch::randn({B, Hkv, T, D});
  auto allowed = causal_mask(B, T, 17);
  auto w = torch::randn({B, Hq, T, D});
  const int before = at::get_num_threads();
  std::vector<Grads> runs;
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    runs.push_back(run(q, k, v, allowed, w, true));
  }
  at::set_num_threads(before);
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_TRUE(torch::equal(runs[i].out, runs[0].out)) << i;
    EXPECT_TRUE(torch::equal(runs[i].dq, runs[0].dq)) << i;
    EXPECT_TRUE(torch::equal(runs[i].dk, runs[0].dk)) << i;
    EXPECT_TRUE(torch::equal(runs[i].dv, runs[0].dv)) << i;
  }
}

TEST(FusedAttention, TheKernelEnumRoutesFloat32CpuThroughItAndEverythingElseThroughTheExplicitPath) {
  torch::manual_seed(4);
  const int64_t B = 1, Hq = 2, Hkv = 1, T = 20, D = 8;
  auto q = torch::randn({B, Hq, T, D}), k = torch::randn({B, Hkv, T, D}), v = torch::randn({B, Hkv, T, D});
  auto allowed = causal_mask(B, T, 0);
  auto fused = grouped_attention(q, k, v, allowed, 256, AttentionKernel::kFused);
  EXPECT_TRUE(torch::equal(fused, agentrl::model::detail::fused_attention(q, k, v, allowed)));
  EXPECT_LT(max_abs_diff(fused, grouped_attention(q, k, v, allowed, 256, AttentionKernel::kEager)), 1e-6);
  // float64 (and head dims the kernel lacks) take the explicit path.
  auto q64 = q.to(torch::kFloat64), k64 = k.to(torch::kFloat64), v64 = v.to(torch::kFloat64);
  EXPECT_FALSE(agentrl::model::detail::fused_attention_supported(q64));
  EXPECT_TRUE(torch::equal(grouped_attention(q64, k64, v64, allowed, 256, AttentionKernel::kFused),
                           grouped_attention(q64, k64, v64, allowed, 256, AttentionKernel::kEager)));
  EXPECT_FALSE(agentrl::model::detail::fused_attention_supported(torch::randn({1, 2, 3, 12})));
  EXPECT_THROW(agentrl::model::detail::fused_attention(q, k, v, allowed.narrow(2, 0, 5)), c10::Error);
}
