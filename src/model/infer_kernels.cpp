#include "infer_kernels.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "simd.h"

namespace agentrl::model::detail {
namespace {

// Reductions (sums of squares, dot products) run in 8 float lanes (simd.h):
// compilers do not vectorise a float sum on their own, its order being part
// of the result. Elementwise loops are left to the compiler's vectoriser.
using namespace simd;

AGENTRL_ALWAYS_INLINE float dot(const float* a, const float* b, int64_t n) {
  vf acc{};
  int64_t i = 0;
  for (; i + kW <= n; i += kW) acc += load(a + i) * load(b + i);
  float s = lane_sum(acc);
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// Items per task so that a task holds ~32k floats of work: a batch-1 decode
// row (a few hundred floats) stays on the calling thread, where handing it to
// another thread would cost more than the row.
int64_t grain(int64_t floats_per_item) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, floats_per_item)); }

// y = w * (x * r), r = 1 / sqrt(mean(x^2) + eps): HF's order of roundings.
inline void norm_row(const float* x, const float* w, float* y, int64_t H, float eps) {
  const float r = 1.0f / std::sqrt(dot(x, x, H) / static_cast<float>(H) + eps);
  for (int64_t i = 0; i < H; ++i) y[i] = w[i] * (x[i] * r);
}

void check_norm(const torch::Tensor& x, const torch::Tensor& w) {
  TORCH_CHECK(infer_kernels_apply({x, w}), "rms_norm kernel: tensors must be CPU float32 contiguous");
  TORCH_CHECK(x.dim() >= 1 && w.dim() == 1 && w.size(0) == x.size(-1), "rms_norm kernel: weight [", w.sizes(),
              "] does not match x ", x.sizes());
}

}  // namespace

bool infer_kernels_apply(std::initializer_list<torch::Tensor> ts) {
  for (const auto& t : ts)
    if (!t.defined() || !t.device().is_cpu() || t.scalar_type() != torch::kFloat32 || !t.is_contiguous()) return false;
  return true;
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  check_norm(x, weight);
  const int64_t H = x.size(-1), N = x.numel() / std::max<int64_t>(1, H);
  auto y = torch::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, N, grain(H), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) norm_row(xp + n * H, wp, yp + n * H, H, static_cast<float>(eps));
  });
  return y;
}

torch::Tensor add_rms_norm_(torch::Tensor& h, const torch::Tensor& a, const torch::Tensor& weight, double eps) {
  check_norm(h, weight);
  TORCH_CHECK(infer_kernels_apply({a}) && a.sizes() == h.sizes(), "add_rms_norm_ kernel: a ", a.sizes(),
              " must be CPU float32 contiguous of h's shape ", h.sizes());
  const int64_t H = h.size(-1), N = h.numel() / std::max<int64_t>(1, H);
  auto y = torch::empty_like(h);
  float* hp = h.data_ptr<float>();
  const float* ap = a.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, N, grain(H), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      float* row = hp + n * H;
      const float* add = ap + n * H;
      for (int64_t i = 0; i < H; ++i) row[i] += add[i];
      norm_row(row, wp, yp + n * H, H, static_cast<float>(eps));
    }
  });
  return y;
}

// No FMA contraction of x1*c - x2*s here (with -mfma or -march=native a
// compiler may fuse it and round once, unlike the ATen ops): the result must
// equal the trainer's rotation bit for bit. A function attribute, not a
// per-file flag: the model layer shares one precompiled header.
#if defined(__clang__)
#define AGENTRL_NO_FP_CONTRACT
#define AGENTRL_NO_FP_CONTRACT_BODY _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define AGENTRL_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#define AGENTRL_NO_FP_CONTRACT_BODY
#else
#define AGENTRL_NO_FP_CONTRACT
#define AGENTRL_NO_FP_CONTRACT_BODY
#endif

namespace {

// x * cos + cat(-x2, x1) * sin for the heads of one row: each product
// rounded, then the sum, as the ATen ops round them (x1*c + (-x2)*s equals
// x1*c - x2*s exactly).
AGENTRL_NO_FP_CONTRACT void rope_row(float* x, const float* c, const float* s, int64_t heads, int64_t D) {
  AGENTRL_NO_FP_CONTRACT_BODY
  const int64_t half = D / 2;
  for (int64_t h = 0; h < heads; ++h) {
    float* r = x + h * D;
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = r[i], x2 = r[i + half];
      r[i] = x1 * c[i] - x2 * s[i];
      r[i + half] = x2 * c[i + half] + x1 * s[i + half];
    }
  }
}

}  // namespace

void rope_(torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  TORCH_CHECK(infer_kernels_apply({x, cos, sin}), "rope kernel: tensors must be CPU float32 contiguous");
  TORCH_CHECK(x.dim() == 3 && x.size(2) % 2 == 0 && cos.sizes() == sin.sizes() && cos.dim() == 2 &&
                  cos.size(0) == x.size(0) && cos.size(1) == x.size(2),
              "rope kernel: x ", x.sizes(), " needs [N, heads, even D] and cos/sin [N, D], got ", cos.sizes());
  const int64_t N = x.size(0), heads = x.size(1), D = x.size(2);
  float* xp = x.data_ptr<float>();
  const float* cp = cos.data_ptr<float>();
  const float* sp = sin.data_ptr<float>();
  at::parallel_for(0, N, grain(heads * D), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) rope_row(xp + n * heads * D, cp + n * D, sp + n * D, heads, D);
  });
}

namespace {

// y = silu(g) * u = g * sigmoid(g) * u, 8 lanes at a time: sigmoid from
// e = exp(-|g|) <= 1 (simd.h's exp_le0; the scalar std::exp loop was 3-5x
// ATen's vectorised silu), 1 / (1 + e) for g >= 0 and e / (1 + e) below.
AGENTRL_ALWAYS_INLINE vf silu_mul_lanes(vf g, vf u) {
  const vi neg = g < vf{};
  const vf e = exp_le0(select(neg, g, -g));
  const vf sig = select(neg, e, splat(1.0f)) / (1.0f + e);
  return g * sig * u;
}

AGENTRL_ALWAYS_INLINE void silu_mul_body(const float* g, const float* u, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kW <= n; i += kW) store(y + i, silu_mul_lanes(load(g + i), load(u + i)));
  if (i < n) {  // the tail through one zero-padded vector
    float gt[kW] = {}, ut[kW] = {}, yt[kW];
    std::memcpy(gt, g + i, sizeof(float) * static_cast<size_t>(n - i));
    std::memcpy(ut, u + i, sizeof(float) * static_cast<size_t>(n - i));
    store(yt, silu_mul_lanes(load(gt), load(ut)));
    std::memcpy(y + i, yt, sizeof(float) * static_cast<size_t>(n - i));
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) void silu_mul_avx2(const float* g, const float* u, float* y, int64_t n) {
  silu_mul_body(g, u, y, n);
}
#else
void silu_mul_avx2(const float* g, const float* u, float* y, int64_t n) { silu_mul_body(g, u, y, n); }
#endif

}  // namespace

torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up) {
  TORCH_CHECK(infer_kernels_apply({gate, up}) && gate.sizes() == up.sizes(), "silu_mul kernel: gate ", gate.sizes(),
              " and up ", up.sizes(), " must be CPU float32 contiguous of one shape");
  auto y = torch::empty_like(gate);
  const float* g = gate.data_ptr<float>();
  const float* u = up.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const bool avx2 = have_avx2_fma();
  at::parallel_for(0, gate.numel(), 32768, [&](int64_t b, int64_t e) {
    if (avx2) {
      silu_mul_avx2(g + b, u + b, yp + b, e - b);
    } else {
      silu_mul_body(g + b, u + b, yp + b, e - b);
    }
  });
  return y;
}

void kv_write(torch::Tensor& K, torch::Tensor& V, const torch::Tensor& k, const torch::Tensor& v,
              const std::vector<int64_t>& slots, const std::vector<int64_t>& positions) {
  TORCH_CHECK(infer_kernels_apply({K, V, k, v}), "kv_write kernel: tensors must be CPU float32 contiguous");
  const int64_t N = k.size(0), S = K.size(0), Hkv = K.size(1), cap = K.size(2), D = K.size(3);
  TORCH_CHECK(K.sizes() == V.sizes() && k.sizes() == v.sizes() && k.dim() == 3 && k.size(1) == Hkv &&
                  k.size(2) == D && static_cast<int64_t>(slots.size()) == N &&
                  static_cast<int64_t>(positions.size()) == N,
              "kv_write kernel: k ", k.sizes(), " does not fit the cache ", K.sizes(), " or the ", slots.size(),
              " slots");
  for (int64_t n = 0; n < N; ++n)
    TORCH_CHECK(slots[n] >= 0 && slots[n] < S && positions[n] >= 0 && positions[n] < cap, "kv_write kernel: row ",
                n, " goes to slot ", slots[n], " position ", positions[n], " outside the cache ", K.sizes());
  float* Kp = K.data_ptr<float>();
  float* Vp = V.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < Hkv; ++h) {
      const int64_t dst = ((slots[n] * Hkv + h) * cap + positions[n]) * D, src = (n * Hkv + h) * D;
      std::memcpy(Kp + dst, kp + src, D * sizeof(float));
      std::memcpy(Vp + dst, vp + src, D * sizeof(float));
    }
}

namespace {

// The G query rows that share one KV head against its keys [0, L): o_g =
// softmax(q_g K^T * scale) V. Each key and value row is read once for all G
// rows (grouped-query attention: G = Hq / Hkv). Scores are dot products in 8
// lanes, exp is simd.h's exp_le0 on 8 scores at a time (the attention with
// its scalar std::exp took 11% of the perf samples of a tiny-shape engine run
// at batch 64, prefill included), the weighted values
// are summed in key order. p: scratch of at least G * L floats.
AGENTRL_ALWAYS_INLINE void attend_group(const float* q, const float* K, const float* V, int64_t L, int64_t D, int64_t G,
                                        float scale, float* p, float* o) {
  for (int64_t j = 0; j < L; ++j)
    for (int64_t g = 0; g < G; ++g) p[g * L + j] = dot(q + g * D, K + j * D, D) * scale;
  for (int64_t g = 0; g < G; ++g) {
    float* pg = p + g * L;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < L; ++j) m = std::max(m, pg[j]);
    vf sums{};
    int64_t j = 0;
    for (; j + kW <= L; j += kW) {
      const vf e = exp_le0(load(pg + j) - m);
      store(pg + j, e);
      sums += e;
    }
    float sum = lane_sum(sums);
    for (; j < L; ++j) sum += (pg[j] = exp_le0(pg[j] - m));
    const float inv = 1.0f / sum;
    for (j = 0; j < L; ++j) pg[j] *= inv;
    std::fill(o + g * D, o + (g + 1) * D, 0.0f);
  }
  for (int64_t j = 0; j < L; ++j) {
    const float* v = V + j * D;
    for (int64_t g = 0; g < G; ++g) {
      const float w = p[g * L + j];
      float* og = o + g * D;
      int64_t d = 0;
      for (; d + kW <= D; d += kW) store(og + d, load(og + d) + w * load(v + d));
      for (; d < D; ++d) og[d] += w * v[d];
    }
  }
}

// Rows [begin, end) of (sequence, KV head) pairs; the plain and the AVX2
// copies of the same arithmetic (no FMA contraction in either).
struct AttendArgs {
  const float* q;
  const float* K;
  const float* V;
  float* o;
  const int64_t* slots;
  const int64_t* lengths;
  int64_t Hq, Hkv, cap, D;
  float scale;
};
AGENTRL_ALWAYS_INLINE void attend_pairs(const AttendArgs& a, int64_t begin, int64_t end, float* p) {
  const int64_t G = a.Hq / a.Hkv;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t b = i / a.Hkv, h = i % a.Hkv;
    const int64_t base = (a.slots[b] * a.Hkv + h) * a.cap * a.D, row = (b * a.Hq + h * G) * a.D;
    attend_group(a.q + row, a.K + base, a.V + base, a.lengths[b], a.D, G, a.scale, p, a.o + row);
  }
}
void attend_pairs_plain(const AttendArgs& a, int64_t begin, int64_t end, float* p) { attend_pairs(a, begin, end, p); }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) void attend_pairs_avx2(const AttendArgs& a, int64_t begin, int64_t end, float* p) {
  attend_pairs(a, begin, end, p);
}
#else
void attend_pairs_avx2(const AttendArgs& a, int64_t begin, int64_t end, float* p) { attend_pairs(a, begin, end, p); }
#endif

}  // namespace

torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V,
                               const std::vector<int64_t>& slots, const std::vector<int64_t>& lengths) {
  TORCH_CHECK(infer_kernels_apply({q, K, V}), "decode_attention kernel: tensors must be CPU float32 contiguous");
  const int64_t B = q.size(0), Hq = q.size(1), D = q.size(2);
  const int64_t S = K.size(0), Hkv = K.size(1), cap = K.size(2);
  TORCH_CHECK(q.dim() == 3 && K.dim() == 4 && K.sizes() == V.sizes() && K.size(3) == D && Hq % Hkv == 0 &&
                  static_cast<int64_t>(slots.size()) == B && static_cast<int64_t>(lengths.size()) == B,
              "decode_attention kernel: q ", q.sizes(), " does not fit the cache ", K.sizes(), " or the ",
              slots.size(), " slots");
  int64_t longest = 1;
  for (int64_t b = 0; b < B; ++b) {
    TORCH_CHECK(slots[b] >= 0 && slots[b] < S && lengths[b] >= 1 && lengths[b] <= cap, "decode_attention kernel: row ",
                b, " reads slot ", slots[b], " length ", lengths[b], " outside the cache ", K.sizes());
    longest = std::max(longest, lengths[b]);
  }
  const int64_t G = Hq / Hkv;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  auto out = torch::empty({B, Hq, D}, q.options());
  const AttendArgs args{q.data_ptr<float>(),
                        K.data_ptr<float>(),
                        V.data_ptr<float>(),
                        out.data_ptr<float>(),
                        slots.data(),
                        lengths.data(),
                        Hq,
                        Hkv,
                        cap,
                        D,
                        scale};
  const bool avx2 = have_avx2_fma();
  at::parallel_for(0, B * Hkv, grain(2 * G * longest * D), [&](int64_t begin, int64_t end) {
    std::vector<float> p(static_cast<size_t>(G * longest));
    if (avx2) {
      attend_pairs_avx2(args, begin, end, p.data());
    } else {
      attend_pairs_plain(args, begin, end, p.data());
    }
  });
  return out;
}

}  // namespace agentrl::model::detail
