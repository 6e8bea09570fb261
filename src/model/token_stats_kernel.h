// Internal to the model layer (logprobs.cpp): fused CPU kernels of the
// log-prob loss over one block of logits z [c, V].
//
// What: the forward reads each row twice (its max, then one pass for the sums
// of e = exp(z - max), e (z - max) and e^2) and writes four numbers per row;
// the backward overwrites z with dL/dz in one read-write pass, from the row's
// log-sum-exp and entropy saved by the forward. The ATen path over the same
// block (log_softmax, exp, p log p, sum; recomputed in backward) makes 7-10
// passes and keeps three [c, V] temporaries: at the 0.5B shape (V = 151936)
// those passes were a quarter of a training step (docs/benchmarks.md).
//
// Numerics: float32 blocks run 8 floats at a time (GCC/Clang vector
// extensions; AVX2 + FMA copies chosen at run time where the CPU has them)
// and take exp from a polynomial (Cody-Waite range reduction, degree-7 Taylor
// on |r| <= ln2/2; below e^-87.33 the value is 0); each row's sums run in 8
// float lanes and are combined in double. float64 blocks use std::exp
// (gradient checks). Rows are split over ATen's intra-op threads.
//
// Shapes: z [c, V] contiguous, float32 or float64, CPU; targets [c] int64 in
// [0, V) (checked: std::out_of_range otherwise); every [c] vector has z's dtype
// and is contiguous.
//
// Thread-safety: calls on different tensors may run concurrently.
#pragma once

#include <torch/torch.h>

namespace agentrl::model::detail {

// Whether the fused kernels take this block: CPU, float32 or float64.
bool fused_stats_supported(const torch::Tensor& z);

struct RowStatsOut {
  torch::Tensor logprob;  // [c]: z[y] - lse
  torch::Tensor entropy;  // [c]: -sum p log p
  torch::Tensor prob_sq;  // [c]: sum p^2; may be undefined (not computed)
  torch::Tensor lse;      // [c]: log sum exp z, kept for the backward
};

// Fills the (preallocated) vectors of `out` for each row of z.
void fused_row_stats(const torch::Tensor& z, const torch::Tensor& targets, const RowStatsOut& out);

// z <- dL/dz in place, for L with dL/dlogprob = g_lp and dL/dentropy = g_ent
// (each [c], or undefined when not in the loss):
//   dL/dz_j = -p_j (g_lp + g_ent (log p_j + H)) + g_lp 1[j = y]
// with log p_j = z_j - lse and H the row's entropy, both from fused_row_stats.
void fused_logit_grad_(torch::Tensor& z, const torch::Tensor& targets, const torch::Tensor& lse,
                       const torch::Tensor& entropy, const torch::Tensor& g_lp, const torch::Tensor& g_ent);

}  // namespace agentrl::model::detail
