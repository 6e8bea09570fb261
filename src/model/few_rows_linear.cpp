#include "few_rows_linear.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "infer_kernels.h"
#include "simd.h"

namespace agentrl::model::detail {
namespace {

using namespace simd;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AGENTRL_HAVE_FMA_BUILTIN 1
#endif

// c + a * b, fused (one rounding) in the AVX2 + FMA copy. The build does not
// contract a * b + c on its own (ISO C++ mode: -ffp-contract=off).
template <bool kFma>
AGENTRL_ALWAYS_INLINE vf madd(vf a, vf b, vf c) {
#ifdef AGENTRL_HAVE_FMA_BUILTIN
  if constexpr (kFma) return __builtin_ia32_vfmaddps256(a, b, c);
#endif
  return a * b + c;
}

// y[m][r] = sum_k x[m][k] w[r][k] (+ bias[r]) for NR rows of W and MR rows
// of x (row strides K; y's row stride N). Each output has its own
// accumulator, summed over k in the same order whatever NR and MR are: the
// tiling changes the speed, not the bits.
template <bool kFma, int NR, int MR>
AGENTRL_ALWAYS_INLINE void tile(const float* x, const float* w, int64_t K, const float* bias, float* y, int64_t N,
                                bool prefetch) {
  vf acc[NR][MR];
  for (int r = 0; r < NR; ++r)
    for (int m = 0; m < MR; ++m) acc[r][m] = vf{};
  int64_t k = 0;
  for (; k + kW <= K; k += kW) {
    vf wv[NR];
    if (prefetch)
      for (int r = 0; r < NR; ++r) __builtin_prefetch(w + (NR + r) * K + k);
    for (int r = 0; r < NR; ++r) wv[r] = load(w + r * K + k);
    for (int m = 0; m < MR; ++m) {
      const vf xv = load(x + m * K + k);
      for (int r = 0; r < NR; ++r) acc[r][m] = madd<kFma>(wv[r], xv, acc[r][m]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int m = 0; m < MR; ++m) {
      float s = lane_sum(acc[r][m]);
      for (int64_t t = k; t < K; ++t) s += w[r * K + t] * x[m * K + t];
      y[m * N + r] = bias ? s + bias[r] : s;
    }
}

// NR rows of W against all M rows of x, in tiles of 4 x rows: the W rows are
// read from memory by the first tile and from cache by the others.
template <bool kFma, int NR>
AGENTRL_ALWAYS_INLINE void w_rows(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y,
                                  int64_t N, bool prefetch) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4) tile<kFma, NR, 4>(x + m * K, w, K, bias, y + m * N, N, prefetch && m == 0);
  const float* xm = x + m * K;
  float* ym = y + m * N;
  switch (M - m) {
    case 3: tile<kFma, NR, 3>(xm, w, K, bias, ym, N, prefetch && m == 0); break;
    case 2: tile<kFma, NR, 2>(xm, w, K, bias, ym, N, prefetch && m == 0); break;
    case 1: tile<kFma, NR, 1>(xm, w, K, bias, ym, N, prefetch && m == 0); break;
    default: break;
  }
}

// Output features [n0, n1). Up to 2 x rows, 4 W rows a tile (more
// independent accumulators for the FMA pipeline); from 3 x rows on, 2 (the
// tile's accumulators and loads stay within the 16 vector registers).
// `prefetch`: the first x tile of each W tile also asks for the next W
// tile's lines, so that reading W from memory overlaps the arithmetic
// (0.5B-shape lm head at 8 rows: 51-55 -> 31 ms); for a matrix that stays in
// cache it only costs instructions.
template <bool kFma, int NR>
AGENTRL_ALWAYS_INLINE void features(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y,
                                   int64_t N, int64_t n0, int64_t n1, bool prefetch) {
  int64_t n = n0;
  for (; n + NR <= n1; n += NR)
    w_rows<kFma, NR>(x, M, w + n * K, K, bias ? bias + n : nullptr, y + n, N, prefetch && n + 2 * NR <= n1);
  for (; n < n1; ++n) w_rows<kFma, 1>(x, M, w + n * K, K, bias ? bias + n : nullptr, y + n, N, false);
}

template <bool kFma>
AGENTRL_ALWAYS_INLINE void body(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y,
                                int64_t N, int64_t n0, int64_t n1) {
  const bool prefetch = N * K * static_cast<int64_t>(sizeof(float)) > (int64_t{2} << 20);  // over 2 MiB
  if (M <= 2) {
    features<kFma, 4>(x, M, w, K, bias, y, N, n0, n1, prefetch);
  } else {
    features<kFma, 2>(x, M, w, K, bias, y, N, n0, n1, prefetch);
  }
}

void body_plain(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y, int64_t N,
                int64_t n0, int64_t n1) {
  body<false>(x, M, w, K, bias, y, N, n0, n1);
}

#ifdef AGENTRL_HAVE_FMA_BUILTIN
__attribute__((target("avx2,fma"))) void body_avx2(const float* x, int64_t M, const float* w, int64_t K,
                                                   const float* bias, float* y, int64_t N, int64_t n0, int64_t n1) {
  body<true>(x, M, w, K, bias, y, N, n0, n1);
}
#else
void body_avx2(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y, int64_t N,
               int64_t n0, int64_t n1) {
  body<false>(x, M, w, K, bias, y, N, n0, n1);
}
#endif

}  // namespace

bool few_rows_linear_applies(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias) {
  if (!infer_kernels_apply({x, w}) || (bias.defined() && !infer_kernels_apply({bias}))) return false;
  if (x.dim() != 2 || w.dim() != 2 || x.size(0) < 1 || x.size(0) > kFewRowsMax || x.size(1) != w.size(1)) return false;
  return !bias.defined() || (bias.dim() == 1 && bias.size(0) == w.size(0));
}

torch::Tensor few_rows_linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias) {
  TORCH_CHECK(few_rows_linear_applies(x, w, bias), "few_rows_linear: x ", x.sizes(), ", w ", w.sizes(),
              " and bias must be CPU float32 contiguous, x [M <= ", kFewRowsMax, ", K], w [N, K], bias [N]");
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* xp = x.data_ptr<float>();
  const float* wp = w.data_ptr<float>();
  const float* bp = bias.defined() ? bias.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  const bool avx2 = have_avx2_fma();
  // A task is ~256k weight-reads of work (one row of W costs its K reads and,
  // per 4 rows of x, about as much arithmetic): handing a smaller product to
  // a second thread costs more than it saves (a tiny-shape decode step of one
  // row went from 0.69 to 1.19 ms when every product was split).
  const int64_t per_row = std::max<int64_t>(1, K * (4 + M) / 4);
  const int64_t grain = std::max<int64_t>(4, (int64_t{1} << 18) / per_row);
  at::parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
    if (avx2) {
      body_avx2(xp, M, wp, K, bp, yp, N, n0, n1);
    } else {
      body_plain(xp, M, wp, K, bp, yp, N, n0, n1);
    }
  });
  return y;
}

}  // namespace agentrl::model::detail
