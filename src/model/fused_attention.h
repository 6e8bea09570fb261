// Internal to the model layer (attention.cpp): softmax(q k^T * scale + mask) v
// with its backward, float32 on the CPU, without a score tensor in memory.
//
// What: LibTorch 1.13 has no fused attention, and the explicit path
// (attention.cpp's attend_block) writes a [rows, keys] score tensor per head
// and reads it back in the mask add, the softmax, both products and their
// backward. This kernel tiles queries (16 rows) against keys (64 at a time)
// with an online
// softmax (Dao et al. 2022, FlashAttention; its backward as FlashAttention-2:
// the probabilities are recomputed from each row's saved log-sum-exp), so
// no tile leaves the core's cache. Key tiles outside the range of keys a row
// block may see (from the mask: a causal row's keys end at its position,
// a packed segment's start at its first token) are skipped.
//
// Attention alone, causal, 2048 tokens: forward 2.5x and forward + backward
// 1.55x the explicit path; a CPU recipe's model 1.2-1.7x (docs/benchmarks.md,
// "Training: a fused attention kernel"). The engine's prefill runs it too
// (chunk_attention, cached_attention): 1.2-7.4x the explicit path's tokens/s
// on 512-2048-token prompts ("Engine prefill on the fused attention kernel").
//
// Numerics: scores are dot products over the head dim in order, scaled once;
// exp is simd.h's exp_le0; values are summed in key order. The result equals
// the formula up to float rounding (tests/model/fused_attention_test: outputs
// within 2e-6 and gradients within 1e-5 of float64, relative to the largest
// entry). Each (batch row, query head) is computed by one
// thread in a fixed order: the same inputs give the same bits whatever the
// thread count.
//
// Shapes: q [B, Hq, Q, D], k/v [B, Hkv, K, D] (Hq % Hkv == 0; query head h
// reads KV head h / (Hq / Hkv)), allowed [B, Q, K] bool (true = may attend).
// Returns [B, Hq, Q, D]; differentiable in q, k and v (not twice). A row that
// allows no key gets zeros (and zero gradients).
//
// Errors: tensors the kernel does not take (fused_attention_supported) are a
// c10::Error (TORCH_CHECK). Thread-safety: pure; (batch row, query head)
// pairs are split over ATen's intra-op threads.
#pragma once

#include <torch/torch.h>

namespace agentrl::model::detail {

// Whether fused_attention takes q: a CPU float32 tensor of rank 4 whose head
// dim is a multiple of 8 (k, v and allowed are checked by the call).
bool fused_attention_supported(const torch::Tensor& q);

torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& allowed);

}  // namespace agentrl::model::detail
