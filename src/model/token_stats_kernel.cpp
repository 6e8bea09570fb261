#include "token_stats_kernel.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "simd.h"

namespace agentrl::model::detail {
namespace {

// Float32 rows run 8 floats at a time (simd.h; AVX2 in the target("avx2,fma")
// copies below, chosen at run time): the loops hold exp, which compilers do
// not auto-vectorise. float64 rows (gradient checks) stay scalar.
using namespace simd;

// exp_le0 (simd.h): callers pass z - max or z - lse.

struct RowSums {
  double m = 0;                // the row max
  double s = 0, sz = 0, s2 = 0;  // sum e, sum e (z - m), sum e^2 with e = exp(z - m)
};

AGENTRL_ALWAYS_INLINE RowSums row_sums_body(const float* z, int64_t V) {
  float m = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  if (V >= kW) {
    vf acc = load(z);
    for (j = kW; j + kW <= V; j += kW) {
      const vf v = load(z + j);
      acc = select(acc < v, v, acc);
    }
    for (int l = 0; l < kW; ++l) m = std::max(m, acc[l]);
  }
  for (; j < V; ++j) m = std::max(m, z[j]);
  vf s{}, sz{}, s2{};
  const vf mv = splat(m);
  for (j = 0; j + kW <= V; j += kW) {
    const vf d = load(z + j) - mv;
    const vf e = exp_le0(d);
    s += e;
    sz += e * d;
    s2 += e * e;
  }
  RowSums r;
  r.m = m, r.s = lane_sum(s), r.sz = lane_sum(sz), r.s2 = lane_sum(s2);
  for (; j < V; ++j) {
    const float d = z[j] - m, e = exp_le0(d);
    r.s += e, r.sz += double(e) * d, r.s2 += double(e) * e;
  }
  return r;
}

AGENTRL_ALWAYS_INLINE void row_grad_body(float* z, int64_t V, float lse, float a, float g_ent) {
  const vf lsev = splat(lse), av = splat(a), gv = splat(g_ent);
  int64_t j = 0;
  for (; j + kW <= V; j += kW) {
    const vf lp = load(z + j) - lsev;
    store(z + j, -exp_le0(lp) * (av + gv * lp));
  }
  for (; j < V; ++j) {
    const float lp = z[j] - lse;
    z[j] = -exp_le0(lp) * (a + g_ent * lp);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) RowSums row_sums_avx2(const float* z, int64_t V) { return row_sums_body(z, V); }
__attribute__((target("avx2,fma"))) void row_grad_avx2(float* z, int64_t V, float lse, float a, float g_ent) {
  row_grad_body(z, V, lse, a, g_ent);
}
#else
RowSums row_sums_avx2(const float* z, int64_t V) { return row_sums_body(z, V); }
void row_grad_avx2(float* z, int64_t V, float lse, float a, float g_ent) { row_grad_body(z, V, lse, a, g_ent); }
#endif

RowSums row_sums(const float* z, int64_t V) { return have_avx2_fma() ? row_sums_avx2(z, V) : row_sums_body(z, V); }

RowSums row_sums(const double* z, int64_t V) {
  RowSums r;
  r.m = *std::max_element(z, z + V);
  for (int64_t j = 0; j < V; ++j) {
    const double d = z[j] - r.m, e = std::exp(d);
    r.s += e, r.sz += e * d, r.s2 += e * e;
  }
  return r;
}

// -p_j (g_lp + g_ent (log p_j + H)) = -p_j (a + g_ent log p_j), a = g_lp + g_ent H
void row_grad(float* z, int64_t V, float lse, float a, float g_ent) {
  if (have_avx2_fma()) {
    row_grad_avx2(z, V, lse, a, g_ent);
  } else {
    row_grad_body(z, V, lse, a, g_ent);
  }
}

void row_grad(double* z, int64_t V, double lse, double a, double g_ent) {
  for (int64_t j = 0; j < V; ++j) {
    const double lp = z[j] - lse;
    z[j] = -std::exp(lp) * (a + g_ent * lp);
  }
}

// Rows per task: enough elements that a thread's share outweighs its start.
int64_t grain_rows(int64_t V) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(V, 1)); }

void check_block(const torch::Tensor& z, const torch::Tensor& targets, const char* who) {
  TORCH_CHECK(fused_stats_supported(z) && z.dim() == 2 && z.is_contiguous(), who,
              ": logits must be a contiguous [c, V] float32/float64 CPU tensor");
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == z.size(0) && targets.scalar_type() == torch::kInt64 &&
                  targets.is_contiguous(),
              who, ": targets must be a contiguous [c] int64 tensor");
  if (targets.numel() == 0) return;
  const int64_t lo = targets.min().item<int64_t>(), hi = targets.max().item<int64_t>();
  if (lo < 0 || hi >= z.size(1)) {
    throw std::out_of_range(std::string(who) + ": target id " + std::to_string(lo < 0 ? lo : hi) +
                            " outside the vocabulary [0, " + std::to_string(z.size(1)) + ")");
  }
}

template <class T>
const T* data_or_null(const torch::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

}  // namespace

bool fused_stats_supported(const torch::Tensor& z) {
  return z.device().is_cpu() && (z.scalar_type() == torch::kFloat32 || z.scalar_type() == torch::kFloat64);
}

void fused_row_stats(const torch::Tensor& z, const torch::Tensor& targets, const RowStatsOut& out) {
  check_block(z, targets, "fused_row_stats");
  const int64_t c = z.size(0), V = z.size(1);
  AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "fused_row_stats", [&] {
    const scalar_t* zp = z.data_ptr<scalar_t>();
    const int64_t* yp = targets.data_ptr<int64_t>();
    scalar_t* lp = out.logprob.data_ptr<scalar_t>();
    scalar_t* ent = out.entropy.data_ptr<scalar_t>();
    scalar_t* lse = out.lse.data_ptr<scalar_t>();
    scalar_t* psq = out.prob_sq.defined() ? out.prob_sq.data_ptr<scalar_t>() : nullptr;
    at::parallel_for(0, c, grain_rows(V), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const scalar_t* row = zp + i * V;
        const RowSums r = row_sums(row, V);
        const double log_s = std::log(r.s);
        lse[i] = static_cast<scalar_t>(r.m + log_s);
        lp[i] = static_cast<scalar_t>((double(row[yp[i]]) - r.m) - log_s);
        ent[i] = static_cast<scalar_t>(log_s - r.sz / r.s);
        if (psq) psq[i] = static_cast<scalar_t>(r.s2 / (r.s * r.s));
      }
    });
  });
}

void fused_logit_grad_(torch::Tensor& z, const torch::Tensor& targets, const torch::Tensor& lse,
                       const torch::Tensor& entropy, const torch::Tensor& g_lp, const torch::Tensor& g_ent) {
  check_block(z, targets, "fused_logit_grad_");
  const int64_t c = z.size(0), V = z.size(1);
  AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "fused_logit_grad_", [&] {
    scalar_t* zp = z.data_ptr<scalar_t>();
    const int64_t* yp = targets.data_ptr<int64_t>();
    const scalar_t* lsep = lse.data_ptr<scalar_t>();
    const scalar_t* entp = entropy.data_ptr<scalar_t>();
    const scalar_t* glp = data_or_null<scalar_t>(g_lp);
    const scalar_t* gent = data_or_null<scalar_t>(g_ent);
    at::parallel_for(0, c, grain_rows(V), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const scalar_t g_lp_i = glp ? glp[i] : scalar_t(0), g_ent_i = gent ? gent[i] : scalar_t(0);
        scalar_t* row = zp + i * V;
        row_grad(row, V, lsep[i], g_lp_i + g_ent_i * entp[i], g_ent_i);
        row[yp[i]] += g_lp_i;
      }
    });
  });
}

}  // namespace agentrl::model::detail
