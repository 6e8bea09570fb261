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
