// Internal to the model layer: the 8-float vector type of the fused CPU
// kernels (token_stats_kernel.cpp, infer_kernels.cpp) and its helpers.
//
// What: GCC/Clang vector extensions, 8 floats at a time (two SSE registers by
// default, one AVX2 register inside target("avx2,fma") functions): for loops
// that compilers do not vectorise on their own (a float sum, whose order is
// part of the result; exp). The helpers are always inlined, so a
// target("avx2,fma") caller gets AVX2 code from them; the ABI note GCC gives
// for passing 32-byte vectors by value without AVX therefore does not apply
// and is silenced (-Wpsabi) for the files that include this header.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define AGENTRL_ALWAYS_INLINE inline __attribute__((always_inline))

namespace agentrl::model::detail::simd {

typedef float vf __attribute__((vector_size(32)));
typedef int32_t vi __attribute__((vector_size(32)));
constexpr int kW = 8;

AGENTRL_ALWAYS_INLINE vf splat(float x) { return vf{} + x; }
AGENTRL_ALWAYS_INLINE vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
AGENTRL_ALWAYS_INLINE void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
// mask ? a : b, with mask lanes all ones or all zeros (a vector comparison)
AGENTRL_ALWAYS_INLINE vf select(vi mask, vf a, vf b) { return (vf)(((vi)a & mask) | ((vi)b & ~mask)); }
AGENTRL_ALWAYS_INLINE float lane_sum(vf v) {
  float s = 0;
  for (int l = 0; l < kW; ++l) s += v[l];
  return s;
}

// exp(x) for x <= ~0, lane-wise: round x / ln 2 to n with the 1.5 * 2^23
// trick, r = x - n ln 2 in two steps (Cody-Waite), degree-7 Taylor of e^r on
// |r| <= ln2/2 (error < 1e-8 relative), times 2^n built in the exponent bits. Below -87.33 the result
// would be subnormal (< 2^-126): it is 0, a mass no float32 row sum sees.
AGENTRL_ALWAYS_INLINE vf exp_le0(vf x) {
  const vf low = splat(-87.33f), round = splat(12582912.0f);
  const vi under = x < low;
  const vf xc = select(under, low, x);
  const vf t = xc * 1.44269504088896341f + round;
  const vf n = t - round;  // in [-126, 0]
  const vf scale = (vf)(((vi)t - 0x4B400000 + 127) << 23);
  const vf r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
  vf p = splat(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return select(under, vf{}, p * scale);
}

AGENTRL_ALWAYS_INLINE float exp_le0(float x) { return exp_le0(splat(x))[0]; }

// Whether this CPU runs target("avx2,fma") code: the kernels call their AVX2
// + FMA copies when it does, their plain copies otherwise. Asked once.
inline bool have_avx2_fma() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

}  // namespace agentrl::model::detail::simd
