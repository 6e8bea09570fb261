#include "few_rows_linear.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "infer_kernels.h"
#include "simd.h"

namespace agentrl::model::detail {
namespace {

using namespace simd;

// W rows a thread task's unit holds in the panel form: a multiple of both
// panel blocks (12 and 6 rows).
constexpr int64_t kPanelBlock = 12;
// How far ahead in its row the panel form asks for W: 4 cache lines.
constexpr int64_t kPrefetchFloats = 64;
// The height of the panel that holds the next of `remaining` rows: 16, or 8
// where at most 8 remain. pack_panels and panel_body walk the panels by it.
constexpr int64_t panel_height(int64_t remaining) { return remaining > 8 ? 16 : 8; }

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

// ---- The panel form, for more than kLaneFormMaxRows rows ----
// x is packed k-major in panels of R = 8 or 16 rows (xt[k * R + r] = x[m0 +
// r][k], zero past M), so that one k brings R rows in MP = R / 8 vectors.
// Each W element of a block of NB rows is broadcast and multiplied with them:
// NB x MP accumulators, no horizontal sums, one vector load per 8 rows and
// one broadcast per W element (the lane form above loads x once per W tile).
// Output (m, n) is one chain of multiply-adds over k = 0..K-1 in order, then
// the bias: its bits depend on neither the panel it sits in nor the threads.

// out[j * R + r] = sum_k xt[k * R + r] w[j * K + k] for NB rows of W.
// `prefetch`: each of the NB rows asks for its line kPrefetchFloats ahead,
// and `next`: past a row's end, for the same row of the next block of
// kPanelBlock rows (which must exist). The block reads NB rows at once, more
// streams than the hardware prefetcher is sure to follow: all products of a
// 0.5B-shape decode step at 8 rows took 77-81 ms with it, 84-85 ms without
// (three interleaved runs; the tiny shape's steps, in L3, did not tell).
template <bool kFma, int NB, int MP>
AGENTRL_ALWAYS_INLINE void panel_block(const float* xt, const float* w, int64_t K, float* out, bool prefetch,
                                       bool next) {
  vf acc[NB][MP];
#pragma GCC unroll 16
  for (int j = 0; j < NB; ++j)
#pragma GCC unroll 2
    for (int p = 0; p < MP; ++p) acc[j][p] = vf{};
  for (int64_t k = 0; k < K; ++k) {
    if (prefetch && (k & 15) == 0) {
      const int64_t a = k + kPrefetchFloats;
      if (a < K) {
#pragma GCC unroll 16
        for (int j = 0; j < NB; ++j) __builtin_prefetch(w + j * K + a);
      } else if (next) {
#pragma GCC unroll 16
        for (int j = 0; j < NB; ++j) __builtin_prefetch(w + (kPanelBlock + j) * K + (a - K));
      }
    }
    vf xv[MP];
#pragma GCC unroll 2
    for (int p = 0; p < MP; ++p) xv[p] = load(xt + k * (kW * MP) + kW * p);
#pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) {
      const float e = w[j * K + k];
      const vf b = {e, e, e, e, e, e, e, e};
#pragma GCC unroll 2
      for (int p = 0; p < MP; ++p) acc[j][p] = madd<kFma>(b, xv[p], acc[j][p]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < NB; ++j)
#pragma GCC unroll 2
    for (int p = 0; p < MP; ++p) store(out + j * kW * MP + kW * p, acc[j][p]);
}

// Rows [m0, m0 + rows) of y, columns [n, n + NB), from one panel's `out`.
template <int NB, int R>
AGENTRL_ALWAYS_INLINE void panel_store(const float* out, int64_t rows, const float* bias, float* y, int64_t N) {
  for (int64_t r = 0; r < rows; ++r)
    for (int j = 0; j < NB; ++j) y[r * N + j] = bias ? out[j * R + r] + bias[j] : out[j * R + r];
}

// One panel of R = 8 * MP rows against W rows [n, n + NB): blocks of 12
// (8-row panels: 12 x 1 accumulators) or 6 (16-row panels: 6 x 2) W rows,
// the remainder one row at a time.
template <bool kFma, int MP>
AGENTRL_ALWAYS_INLINE void panel_rows(const float* xt, int64_t rows, const float* w, int64_t K, const float* bias,
                                      float* y, int64_t N, int64_t n, int64_t n1, bool prefetch, bool next) {
  static_assert(kPanelBlock % 12 == 0, "a block of W rows splits into 12- and 6-row blocks");
  constexpr int R = kW * MP, NB = MP == 1 ? 12 : 6;
  alignas(32) float out[NB * R];
  for (; n + NB <= n1; n += NB) {
    panel_block<kFma, NB, MP>(xt, w + n * K, K, out, prefetch, next);
    panel_store<NB, R>(out, rows, bias ? bias + n : nullptr, y + n, N);
  }
  for (; n < n1; ++n) {
    panel_block<kFma, 1, MP>(xt, w + n * K, K, out, false, false);
    panel_store<1, R>(out, rows, bias ? bias + n : nullptr, y + n, N);
  }
}

// Output features [n0, n1) for all panels: W rows in blocks of kPanelBlock
// (a multiple of both panel blocks), each block against every panel while
// it is in cache; the first panel, which reads the block from memory,
// prefetches.
template <bool kFma>
AGENTRL_ALWAYS_INLINE void panel_body(const float* xt, int64_t M, const float* w, int64_t K, const float* bias,
                                      float* y, int64_t N, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; n += kPanelBlock) {
    const int64_t nb = std::min(n1, n + kPanelBlock);
    const bool next = nb + kPanelBlock <= n1;
    int64_t m0 = 0;
    const float* xp = xt;
    while (m0 < M) {
      const int64_t R = panel_height(M - m0), rows = std::min(R, M - m0);
      if (R == 16) {
        panel_rows<kFma, 2>(xp, rows, w, K, bias, y + m0 * N, N, n, nb, m0 == 0, next);
      } else {
        panel_rows<kFma, 1>(xp, rows, w, K, bias, y + m0 * N, N, n, nb, m0 == 0, next);
      }
      xp += R * K;
      m0 += R;
    }
  }
}

void body_plain(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y, int64_t N,
                int64_t n0, int64_t n1) {
  body<false>(x, M, w, K, bias, y, N, n0, n1);
}
void panel_body_plain(const float* xt, int64_t M, const float* w, int64_t K, const float* bias, float* y, int64_t N,
                      int64_t n0, int64_t n1) {
  panel_body<false>(xt, M, w, K, bias, y, N, n0, n1);
}

#ifdef AGENTRL_HAVE_FMA_BUILTIN
__attribute__((target("avx2,fma"))) void body_avx2(const float* x, int64_t M, const float* w, int64_t K,
                                                   const float* bias, float* y, int64_t N, int64_t n0, int64_t n1) {
  body<true>(x, M, w, K, bias, y, N, n0, n1);
}
__attribute__((target("avx2,fma"))) void panel_body_avx2(const float* xt, int64_t M, const float* w, int64_t K,
                                                         const float* bias, float* y, int64_t N, int64_t n0,
                                                         int64_t n1) {
  panel_body<true>(xt, M, w, K, bias, y, N, n0, n1);
}
#else
void body_avx2(const float* x, int64_t M, const float* w, int64_t K, const float* bias, float* y, int64_t N, int64_t n0,
               int64_t n1) {
  body<false>(x, M, w, K, bias, y, N, n0, n1);
}
void panel_body_avx2(const float* xt, int64_t M, const float* w, int64_t K, const float* bias, float* y, int64_t N,
                     int64_t n0, int64_t n1) {
  panel_body<false>(xt, M, w, K, bias, y, N, n0, n1);
}
#endif

// x [M, K] packed into panels of panel_height rows (panel_body's order),
// k-major, zero past M.
void pack_panels(const float* x, int64_t M, int64_t K, float* xt) {
  for (int64_t m0 = 0; m0 < M;) {
    const int64_t R = panel_height(M - m0), rows = std::min(R, M - m0);
    for (int64_t k = 0; k < K; ++k) {
      float* dst = xt + k * R;
      for (int64_t r = 0; r < rows; ++r) dst[r] = x[(m0 + r) * K + k];
      for (int64_t r = rows; r < R; ++r) dst[r] = 0.0f;
    }
    xt += R * K;
    m0 += R;
  }
}

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
  if (M <= kLaneFormMaxRows) {
    at::parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
      if (avx2) {
        body_avx2(xp, M, wp, K, bp, yp, N, n0, n1);
      } else {
        body_plain(xp, M, wp, K, bp, yp, N, n0, n1);
      }
    });
    return y;
  }
  // The panel form: x packed once (at most 64 x K floats, reused by the
  // calling thread), then tasks of whole blocks of kPanelBlock W rows.
  thread_local std::vector<float> packed;
  packed.resize(static_cast<size_t>((M + 15) / 16 * 16 * K));
  pack_panels(xp, M, K, packed.data());
  const float* xt = packed.data();
  const int64_t blocks = (N + kPanelBlock - 1) / kPanelBlock;
  at::parallel_for(0, blocks, (grain + kPanelBlock - 1) / kPanelBlock, [&](int64_t b0, int64_t b1) {
    const int64_t n0 = b0 * kPanelBlock, n1 = std::min(N, b1 * kPanelBlock);
    if (avx2) {
      panel_body_avx2(xt, M, wp, K, bp, yp, N, n0, n1);
    } else {
      panel_body_plain(xt, M, wp, K, bp, yp, N, n0, n1);
    }
  });
  return y;
}

}  // namespace agentrl::model::detail
