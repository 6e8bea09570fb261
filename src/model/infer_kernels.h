// Internal to the model layer (transformer.cpp, forward_cached): fused CPU
// kernels of the engine's cached forward, float32, without autograd.
//
// What: the engine's step on a small model is bound by the number of ATen
// ops, not their arithmetic (docs/benchmarks.md: the tiny shape's batch-1
// decode step spent 0.9 of 1.35 ms outside its GEMMs, in ~350 small ops).
// Each kernel here does in one pass what the ATen path does in several:
//   rms_norm        pow, mean, add, rsqrt, mul, mul               -> 1 op
//   add_rms_norm_   the residual add and the next norm            -> 1 op
//   rope_           narrow x2, neg, cat, mul, mul, add            -> 1 op
//   silu_mul        silu, mul                                     -> 1 op
//   kv_write        index_put_ of the step's keys and of its values -> 1 op
//   decode_attention  gather of the slots' keys and values, masks,
//                   products, sums, softmax                       -> 1 op
// and reads the KV cache in place (no gathered copy of the keys).
//
// Numerics: rope_ and kv_write give exactly the ATen path's floats (the same
// products and sums, each rounded once: this file is built without FMA
// contraction). rms_norm, silu_mul and decode_attention sum in another order
// and take exp from simd.h's exp_le0, so they differ from the ATen ops in the
// last bits (tests: within 1e-6 relative); the trainer recomputes log-probs with
// the ATen ops, and the rollout/trainer mismatch is reported per run
// (rollout/logprob_mismatch_*).
//
// Shapes: every tensor is float32, CPU and contiguous (see applies()); x
// [N, H] for the norms (any leading dims are flattened), weights [H];
// rope_'s x [N, heads, D] with cos/sin [N, D]; the KV cache [slots, Hkv, cap,
// D] as KvCache holds it. Errors: a shape that does not fit is a c10::Error
// (TORCH_CHECK), as for the ATen ops they replace.
//
// Thread-safety: calls on different output tensors may run concurrently;
// rows are split over ATen's intra-op threads.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace agentrl::model::detail {

// Whether the kernels take these tensors: every one defined, CPU, float32
// and contiguous.
bool infer_kernels_apply(std::initializer_list<torch::Tensor> ts);

// weight * (x / sqrt(mean(x^2, -1) + eps)) over the last dim.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// h += a (in place), then returns rms_norm(h): the residual add of a layer
// and the norm after it in one pass over the rows.
torch::Tensor add_rms_norm_(torch::Tensor& h, const torch::Tensor& a, const torch::Tensor& weight, double eps);

// x <- x * cos + rotate_half(x) * sin in place (HF's apply_rotary_pos_emb),
// with cos/sin shared by every head of a row.
void rope_(torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// silu(gate) * up.
torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up);

// K[slots[n], :, positions[n]] = k[n] and the same for V: k/v [N, Hkv, D].
void kv_write(torch::Tensor& K, torch::Tensor& V, const torch::Tensor& k, const torch::Tensor& v,
              const std::vector<int64_t>& slots, const std::vector<int64_t>& positions);

// One query per row: q [B, Hq, D]; row b attends to keys [0, lengths[b]) of
// slot slots[b] of K/V [slots, Hkv, cap, D], query head h to KV head
// h / (Hq / Hkv). softmax(q k^T / sqrt(D)) v, as HF's eager attention; the
// query heads of one KV head are computed together (its keys read once).
// Returns [B, Hq, D]. lengths[b] in [1, cap].
torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V,
                               const std::vector<int64_t>& slots, const std::vector<int64_t>& lengths);

}  // namespace agentrl::model::detail
