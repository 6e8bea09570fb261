#include "fused_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "simd.h"

namespace agentrl::model::detail {

namespace {

using namespace simd;

constexpr int64_t kRows = 16;      // query rows per tile
constexpr int64_t kKeys = 64;      // keys per tile: a score row is 8 vectors
constexpr int kVecs = kKeys / kW;  // vectors of a tile's score row
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kInf = std::numeric_limits<float>::infinity();

typedef uint8_t vb8 __attribute__((vector_size(8)));

// What one call computes; the forward fills out/lse, the backward dq and
// the per-query-head partials dk/dv ([B, Hq, K, D], summed over the G heads
// of a KV head by the caller).
struct Args {
  const float* q;
  const float* k;
  const float* v;
  const uint8_t* allowed;  // [B, Q, K], 0/1
  const int32_t* lo;       // [B * Q]: each row's first allowed key
  const int32_t* hi;       // [B * Q]: its last allowed key + 1 (lo >= hi: none)
  int64_t Hq, Hkv, Q, K, D, Kpad;
  float scale;
  float* out;
  float* lse;
  const float* dout;
  float* dq;
  float* dk;
  float* dv;
};

// Lanes of 8 mask bytes: all ones where the key may be seen.
AGENTRL_ALWAYS_INLINE vi mask_lanes(const uint8_t* m) {
  vb8 b;
  std::memcpy(&b, m, sizeof b);
  return __builtin_convertvector(b, vi) != 0;
}

AGENTRL_ALWAYS_INLINE vf vmax(vf a, vf b) { return select(a < b, b, a); }

// A tile product's left operand: element (row r, k index i) at p[r * row +
// i * col], so that a transposed operand is read in place.
struct Lhs {
  const float* p;
  int64_t row, col;
};

// C[R rows, NV vectors] (+)= A[R, k] B[k, NV * 8]: B and C row-major with
// leading dims ldb, ldc. Each A element is broadcast once for the NV vectors
// of its row, each B vector loaded once for the R rows: R * NV accumulators
// stay in registers (R = 3, NV = 4: 12 of AVX2's 16).
template <int R, int NV>
AGENTRL_ALWAYS_INLINE void gemm_block(Lhs A, const float* B, int64_t ldb, float* C, int64_t ldc, int64_t k,
                                      bool accumulate) {
  vf c[R][NV];
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NV; ++n) c[r][n] = accumulate ? load(C + r * ldc + n * kW) : vf{};
  for (int64_t i = 0; i < k; ++i) {
    vf a[R];
    for (int r = 0; r < R; ++r) a[r] = splat(A.p[r * A.row + i * A.col]);
    const float* b = B + i * ldb;
    for (int n = 0; n < NV; ++n) {
      const vf bn = load(b + n * kW);
      for (int r = 0; r < R; ++r) c[r][n] += a[r] * bn;
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NV; ++n) store(C + r * ldc + n * kW, c[r][n]);
}

template <int NV>
AGENTRL_ALWAYS_INLINE void gemm_rows(Lhs A, const float* B, int64_t ldb, float* C, int64_t ldc, int64_t rows, int64_t k,
                                     bool accumulate) {
  int64_t r = 0;
  for (; r + 3 <= rows; r += 3)
    gemm_block<3, NV>({A.p + r * A.row, A.row, A.col}, B, ldb, C + r * ldc, ldc, k, accumulate);
  if (rows - r == 2) gemm_block<2, NV>({A.p + r * A.row, A.row, A.col}, B, ldb, C + r * ldc, ldc, k, accumulate);
  if (rows - r == 1) gemm_block<1, NV>({A.p + r * A.row, A.row, A.col}, B, ldb, C + r * ldc, ldc, k, accumulate);
}

// C[rows, cols] (+)= A[rows, k] B[k, cols], cols a multiple of 8: the
// tile products of both passes (scores, P V, dS K, dS^T q, P^T dO).
AGENTRL_ALWAYS_INLINE void small_gemm(Lhs A, const float* B, int64_t ldb, float* C, int64_t ldc, int64_t rows,
                                      int64_t k, int64_t cols, bool accumulate) {
  int64_t n = 0;
  for (; n + 4 * kW <= cols; n += 4 * kW) gemm_rows<4>(A, B + n, ldb, C + n, ldc, rows, k, accumulate);
  if (cols - n >= 2 * kW) {
    gemm_rows<2>(A, B + n, ldb, C + n, ldc, rows, k, accumulate);
    n += 2 * kW;
  }
  if (cols - n >= kW) gemm_rows<1>(A, B + n, ldb, C + n, ldc, rows, k, accumulate);
}

// The row's mask bytes for keys [c0, c0 + kKeys): in place, or for the last
// tile a copy in pad with zeros past K.
AGENTRL_ALWAYS_INLINE const uint8_t* tile_mask(const uint8_t* row, int64_t c0, int64_t K, uint8_t* pad) {
  if (c0 + kKeys <= K) return row + c0;
  std::memset(pad, 0, kKeys);
  std::memcpy(pad, row + c0, static_cast<size_t>(K - c0));
  return pad;
}

// A row of raw scores scaled, -inf where the mask forbids the key; returns
// the row's largest.
AGENTRL_ALWAYS_INLINE float mask_scale(float* s, const uint8_t* m, float scale) {
  const vf ninf = splat(kNegInf), sc = splat(scale);
  vf mv = ninf;
  for (int v = 0; v < kVecs; ++v) {
    const vf x = select(mask_lanes(m + v * kW), load(s + v * kW) * sc, ninf);
    store(s + v * kW, x);
    mv = vmax(mv, x);
  }
  float best = mv[0];
  for (int w = 1; w < kW; ++w) best = std::max(best, mv[w]);
  return best;
}

// xt: x [K, D] transposed tile by tile, [Kpad / kKeys][D][kKeys], zeros
// past K. Tile-major, so that a tile's D rows of 64 keys lie together: rows
// Kpad apart would map to the same few L1 sets.
void pack_transposed(const float* x, int64_t K, int64_t D, int64_t Kpad, float* xt) {
  std::fill(xt + (K / kKeys) * kKeys * D, xt + Kpad * D, 0.0f);
  for (int64_t j = 0; j < K; ++j) {
    float* col = xt + (j / kKeys) * kKeys * D + j % kKeys;
    for (int64_t d = 0; d < D; ++d) col[d * kKeys] = x[j * D + d];
  }
}

// The transposed tile of keys [c0, c0 + kKeys): [D][kKeys].
AGENTRL_ALWAYS_INLINE const float* tile_of(const float* xt, int64_t c0, int64_t D) { return xt + c0 * D; }

// The keys rows [r0, r0 + nr) may see, as whole tiles: [first, last).
AGENTRL_ALWAYS_INLINE void tile_range(const int32_t* lo, const int32_t* hi, int64_t r0, int64_t nr, int64_t& first,
                                      int64_t& last) {
  first = std::numeric_limits<int64_t>::max(), last = 0;
  for (int64_t r = r0; r < r0 + nr; ++r)
    if (lo[r] < hi[r]) first = std::min<int64_t>(first, lo[r]), last = std::max<int64_t>(last, hi[r]);
  if (last == 0) first = 0;
  first = first / kKeys * kKeys;
}

// Per-call scratch of one thread: the keys and values transposed tile by
// tile (pack_transposed, D * Kpad floats each), one tile's output rows
// (acc, [kRows, D]) and its score (then probability) and dO . v (then dS)
// rows.
struct Scratch {
  std::vector<float> Kt, Vt, acc;
  alignas(32) float S[kRows][kKeys];
  alignas(32) float dP[kRows][kKeys];
};

// One (batch row, query head): online softmax over the key tiles, each
// row's output and log-sum-exp.
AGENTRL_ALWAYS_INLINE void forward_unit(const Args& a, int64_t b, int64_t h, Scratch& w) {
  const int64_t G = a.Hq / a.Hkv, Q = a.Q, K = a.K, D = a.D;
  const int64_t kv = (b * a.Hkv + h / G) * K * D, qo = (b * a.Hq + h) * Q * D;
  const float* V = a.v + kv;
  float* Kt = w.Kt.data();
  pack_transposed(a.k + kv, K, D, a.Kpad, Kt);
  const uint8_t* mask = a.allowed + b * Q * K;
  const int32_t *lo = a.lo + b * Q, *hi = a.hi + b * Q;
  uint8_t pad[kKeys];
  float* acc = w.acc.data();  // [kRows, D]
  for (int64_t r0 = 0; r0 < Q; r0 += kRows) {
    const int64_t nr = std::min(kRows, Q - r0);
    float m[kRows], l[kRows];
    std::fill(m, m + kRows, kNegInf);
    std::fill(l, l + kRows, 0.0f);
    std::fill(acc, acc + nr * D, 0.0f);
    int64_t first, last;
    tile_range(lo, hi, r0, nr, first, last);
    for (int64_t c0 = first; c0 < last; c0 += kKeys) {
      const int64_t nc = std::min(kKeys, K - c0);
      small_gemm({a.q + qo + r0 * D, D, 1}, tile_of(Kt, c0, D), kKeys, &w.S[0][0], kKeys, nr, D, kKeys, false);
      for (int64_t r = 0; r < nr; ++r) {
        float* s = w.S[r];
        const float tile_max = mask_scale(s, tile_mask(mask + (r0 + r) * K, c0, K, pad), a.scale);
        if (tile_max == kNegInf) {  // nothing seen in this tile: the row is unchanged
          std::fill(s, s + kKeys, 0.0f);
          continue;
        }
        const float mn = std::max(m[r], tile_max);
        const float alpha = exp_le0(m[r] - mn);  // 0 for the first tile seen (m = -inf)
        vf sum{};
        for (int v = 0; v < kVecs; ++v) {
          const vf e = exp_le0(load(s + v * kW) - mn);
          store(s + v * kW, e);
          sum += e;
        }
        l[r] = l[r] * alpha + lane_sum(sum);
        m[r] = mn;
        if (alpha != 1.0f)
          for (int64_t d = 0; d < D; ++d) acc[r * D + d] *= alpha;
      }
      small_gemm({&w.S[0][0], kKeys, 1}, V + c0 * D, D, acc, D, nr, nc, D, true);
    }
    for (int64_t r = 0; r < nr; ++r) {
      const int64_t i = r0 + r;
      const bool any = l[r] > 0.0f;
      const float inv = any ? 1.0f / l[r] : 0.0f;
      for (int64_t d = 0; d < D; ++d) a.out[qo + i * D + d] = acc[r * D + d] * inv;
      a.lse[(b * a.Hq + h) * Q + i] = any ? m[r] + std::log(l[r]) : kInf;
    }
  }
}

// One (batch row, query head)'s gradients (FlashAttention-2's backward):
// P = exp(s - lse) recomputed per tile, dS = P (dO . v - dO . o) * scale;
// dq += dS k, dk += dS^T q, dv += P^T dO.
AGENTRL_ALWAYS_INLINE void backward_unit(const Args& a, int64_t b, int64_t h, Scratch& w) {
  const int64_t G = a.Hq / a.Hkv, Q = a.Q, K = a.K, D = a.D;
  const int64_t kv = (b * a.Hkv + h / G) * K * D, qo = (b * a.Hq + h) * Q * D, part = (b * a.Hq + h) * K * D;
  const float* Kr = a.k + kv;
  float *Kt = w.Kt.data(), *Vt = w.Vt.data();
  pack_transposed(Kr, K, D, a.Kpad, Kt);
  pack_transposed(a.v + kv, K, D, a.Kpad, Vt);
  const uint8_t* mask = a.allowed + b * Q * K;
  const int32_t *lo = a.lo + b * Q, *hi = a.hi + b * Q;
  const float *q = a.q + qo, *dO = a.dout + qo, *O = a.out + qo, *lse = a.lse + (b * a.Hq + h) * Q;
  float *dq = a.dq + qo, *dk = a.dk + part, *dv = a.dv + part;
  uint8_t pad[kKeys];
  for (int64_t r0 = 0; r0 < Q; r0 += kRows) {
    const int64_t nr = std::min(kRows, Q - r0);
    float delta[kRows];
    for (int64_t r = 0; r < nr; ++r) {
      float s = 0.0f;
      for (int64_t d = 0; d < D; ++d) s += dO[(r0 + r) * D + d] * O[(r0 + r) * D + d];
      delta[r] = s;
    }
    int64_t first, last;
    tile_range(lo, hi, r0, nr, first, last);
    for (int64_t c0 = first; c0 < last; c0 += kKeys) {
      const int64_t nc = std::min(kKeys, K - c0);
      small_gemm({q + r0 * D, D, 1}, tile_of(Kt, c0, D), kKeys, &w.S[0][0], kKeys, nr, D, kKeys, false);
      small_gemm({dO + r0 * D, D, 1}, tile_of(Vt, c0, D), kKeys, &w.dP[0][0], kKeys, nr, D, kKeys, false);
      for (int64_t r = 0; r < nr; ++r) {
        float *s = w.S[r], *dp = w.dP[r];
        mask_scale(s, tile_mask(mask + (r0 + r) * K, c0, K, pad), a.scale);
        const vf L = splat(lse[r0 + r]), dl = splat(delta[r]), sc = splat(a.scale);
        for (int v = 0; v < kVecs; ++v) {
          const vf pv = exp_le0(load(s + v * kW) - L);
          store(s + v * kW, pv);                                   // P
          store(dp + v * kW, pv * (load(dp + v * kW) - dl) * sc);  // dS, scaled
        }
      }
      // dq rows += dS k; dk, dv rows of the tile += dS^T q, P^T dO (the
      // transposes read in place: row stride 1, k stride kKeys).
      small_gemm({&w.dP[0][0], kKeys, 1}, Kr + c0 * D, D, dq + r0 * D, D, nr, nc, D, true);
      small_gemm({&w.dP[0][0], 1, kKeys}, q + r0 * D, D, dk + c0 * D, D, nc, nr, D, true);
      small_gemm({&w.S[0][0], 1, kKeys}, dO + r0 * D, D, dv + c0 * D, D, nc, nr, D, true);
    }
  }
}

// Units [begin, end) of (batch row, query head) pairs, with their scratch.
template <bool kBackward>
AGENTRL_ALWAYS_INLINE void run_units(const Args& a, int64_t begin, int64_t end) {
  auto w = std::make_unique<Scratch>();
  w->Kt.resize(static_cast<size_t>(a.D * a.Kpad));
  if (kBackward) w->Vt.resize(w->Kt.size());
  w->acc.resize(static_cast<size_t>(kRows * a.D));
  for (int64_t u = begin; u < end; ++u) {
    if (kBackward) {
      backward_unit(a, u / a.Hq, u % a.Hq, *w);
    } else {
      forward_unit(a, u / a.Hq, u % a.Hq, *w);
    }
  }
}

using UnitsFn = void (*)(const Args&, int64_t, int64_t);

template <bool kBackward>
void units_plain(const Args& a, int64_t begin, int64_t end) {
  run_units<kBackward>(a, begin, end);
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <bool kBackward>
__attribute__((target("avx2,fma"))) void units_avx2(const Args& a, int64_t begin, int64_t end) {
  run_units<kBackward>(a, begin, end);
}
#else
template <bool kBackward>
void units_avx2(const Args& a, int64_t begin, int64_t end) {
  run_units<kBackward>(a, begin, end);
}
#endif

template <bool kBackward>
UnitsFn pick_units() {
  return have_avx2_fma() ? units_avx2<kBackward> : units_plain<kBackward>;
}

// Each row's first allowed key and last allowed key + 1 (both 0: none), as
// an int32 tensor [2, rows]: row 0 the firsts, row 1 the ends. The forward
// computes them and saves them for the backward.
torch::Tensor key_ranges(const torch::Tensor& mask, int64_t rows, int64_t K) {
  auto ranges = torch::empty({2, rows}, torch::kInt32);
  const uint8_t* allowed = reinterpret_cast<const uint8_t*>(mask.data_ptr<bool>());
  int32_t *lo = ranges.data_ptr<int32_t>(), *hi = lo + rows;
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint8_t* m = allowed + i * K;
      int64_t f = 0, e = K;
      while (f < K && !m[f]) ++f;
      while (e > f && !m[e - 1]) --e;
      lo[i] = static_cast<int32_t>(f < K ? f : 0);
      hi[i] = static_cast<int32_t>(f < K ? e : 0);
    }
  });
  return ranges;
}

Args make_args(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& allowed,
               const torch::Tensor& ranges) {
  Args a{};
  a.q = q.data_ptr<float>(), a.k = k.data_ptr<float>(), a.v = v.data_ptr<float>();
  a.allowed = reinterpret_cast<const uint8_t*>(allowed.data_ptr<bool>());
  a.lo = ranges.data_ptr<int32_t>(), a.hi = a.lo + ranges.size(1);
  a.Hq = q.size(1), a.Hkv = k.size(1), a.Q = q.size(2), a.K = k.size(2), a.D = q.size(3);
  a.Kpad = (a.K + kKeys - 1) / kKeys * kKeys;
  a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.D)));
  return a;
}

void check_operands(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const torch::Tensor& allowed) {
  TORCH_CHECK(fused_attention_supported(q),
              "fused attention: q must be CPU float32 [B, Hq, Q, D] with D a multiple of 8, got ", q.sizes(), " ",
              q.scalar_type(), " on ", q.device());
  TORCH_CHECK(k.dim() == 4 && k.sizes() == v.sizes() && k.size(0) == q.size(0) && k.size(3) == q.size(3) &&
                  k.size(1) > 0 && q.size(1) % k.size(1) == 0 && k.scalar_type() == torch::kFloat32 &&
                  v.scalar_type() == torch::kFloat32 && k.device().is_cpu() && v.device().is_cpu(),
              "fused attention: k ", k.sizes(), " / v ", v.sizes(), " do not fit q ", q.sizes());
  TORCH_CHECK(allowed.scalar_type() == torch::kBool && allowed.dim() == 3 && allowed.size(0) == q.size(0) &&
                  allowed.size(1) == q.size(2) && allowed.size(2) == k.size(2) && allowed.device().is_cpu(),
              "fused attention: allowed must be CPU bool [B, Q, K] = [", q.size(0), ", ", q.size(2), ", ", k.size(2),
              "], got ", allowed.sizes(), " ", allowed.scalar_type());
}

// The autograd node: saves q, k, v, the mask, the output, each row's
// log-sum-exp and key range; the backward recomputes the probabilities tile by tile.
struct FusedAttentionFn : public torch::autograd::Function<FusedAttentionFn> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& allowed) {
    auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous(), mc = allowed.contiguous();
    const int64_t B = q.size(0), Hq = q.size(1), Q = q.size(2);
    auto out = torch::empty(q.sizes(), q.options());
    auto lse = torch::empty({B, Hq, Q}, q.options());
    auto ranges = key_ranges(mc, B * Q, kc.size(2));
    Args a = make_args(qc, kc, vc, mc, ranges);
    a.out = out.data_ptr<float>(), a.lse = lse.data_ptr<float>();
    const UnitsFn fn = pick_units<false>();
    at::parallel_for(0, B * Hq, 1, [&](int64_t begin, int64_t end) { fn(a, begin, end); });
    ctx->save_for_backward({qc, kc, vc, mc, out, lse, ranges});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &mask = saved[3], &out = saved[4], &lse = saved[5],
               &ranges = saved[6];
    auto dout = grads[0].contiguous();
    const int64_t B = q.size(0), Hq = q.size(1), Hkv = k.size(1), K = k.size(2), D = q.size(3);
    auto dq = torch::zeros_like(q);
    auto dk = torch::zeros({B, Hq, K, D}, q.options()), dv = torch::zeros({B, Hq, K, D}, q.options());
    Args a = make_args(q, k, v, mask, ranges);
    a.out = out.data_ptr<float>(), a.lse = lse.data_ptr<float>();
    a.dout = dout.data_ptr<float>(), a.dq = dq.data_ptr<float>(), a.dk = dk.data_ptr<float>();
    a.dv = dv.data_ptr<float>();
    const UnitsFn fn = pick_units<true>();
    at::parallel_for(0, B * Hq, 1, [&](int64_t begin, int64_t end) { fn(a, begin, end); });
    // The G query heads of a KV head each left their share of its gradient.
    if (Hq != Hkv) {
      dk = dk.view({B, Hkv, Hq / Hkv, K, D}).sum(2);
      dv = dv.view({B, Hkv, Hq / Hkv, K, D}).sum(2);
    }
    return {dq, dk, dv, torch::Tensor()};
  }
};

}  // namespace

bool fused_attention_supported(const torch::Tensor& q) {
  if (!q.defined() || q.dim() != 4 || q.scalar_type() != torch::kFloat32 || !q.device().is_cpu()) return false;
  return q.size(3) > 0 && q.size(3) % kW == 0;
}

torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& allowed) {
  check_operands(q, k, v, allowed);
  if (q.numel() == 0 || k.size(2) == 0) return torch::zeros(q.sizes(), q.options());
  return FusedAttentionFn::apply(q, k, v, allowed);
}

}  // namespace agentrl::model::detail
