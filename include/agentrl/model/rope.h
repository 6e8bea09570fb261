// Rotary position embedding (Su et al. 2021, RoFormer) in Hugging Face's
// "rotate_half" convention (modeling_llama.py): the head dimension is split
// into two halves [x1, x2] and
//   rope(x) = x * cos + rotate_half(x) * sin,  rotate_half(x) = [-x2, x1]
// with cos/sin = cos/sin(pos * [inv_freq, inv_freq]),
// inv_freq[i] = 1 / theta^(2i/d) (HF modeling_rope_utils
// _compute_default_rope_parameters), modified by rope_scaling:
//   linear: inv_freq / factor
//   llama3: per-frequency smooth interpolation (_compute_llama3_parameters).
// The angles are computed in float32 like HF (float64 when asked for, for
// gradient checks) and cos/sin are cast to the activation dtype.
//
// Thread-safety: pure functions.
#pragma once

#include <torch/torch.h>

#include <utility>

#include "agentrl/model/model_args.h"

namespace agentrl::model {

// [head_dim/2] inverse frequencies on CPU, dtype float32 or float64.
// Throws ConfigError for an unknown rope_scaling type or bad factor.
torch::Tensor rope_inv_freq(const ModelArgs& args, int64_t head_dim, torch::Dtype dtype = torch::kFloat32);

// positions: any shape [...] int64; returns (cos, sin), each [..., head_dim],
// in `out_dtype`, on positions' device.
std::pair<torch::Tensor, torch::Tensor> rope_cos_sin(const torch::Tensor& positions, const torch::Tensor& inv_freq,
                                                     torch::Dtype out_dtype);

// x: [..., T, head_dim]; cos/sin broadcastable to x (e.g. [B,1,T,D] or [T,D]).
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

}  // namespace agentrl::model
