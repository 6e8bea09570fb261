#include "agentrl/model/rope.h"

#include <cmath>
#include <vector>

#include "agentrl/core/error.h"

namespace agentrl::model {

torch::Tensor rope_inv_freq(const ModelArgs& args, int64_t head_dim, torch::Dtype dtype) {
  if (head_dim % 2 != 0) throw ConfigError("head_dim must be even for RoPE, got " + std::to_string(head_dim));
  // HF: 1 / base^(arange(0, d, 2).float() / d), evaluated in `dtype`.
  auto idx = torch::arange(0, head_dim, 2, torch::TensorOptions().dtype(torch::kInt64)).to(dtype);
  auto inv = 1.0 / torch::pow(torch::tensor(args.rope_theta, torch::TensorOptions().dtype(dtype)), idx / head_dim);
  const auto& rs = args.rope_scaling;
  if (rs.type == "none" || rs.type == "default") return inv;
  if (!(rs.factor > 0)) throw ConfigError("rope_scaling.factor must be > 0, got " + std::to_string(rs.factor));
  if (rs.type == "linear") return inv / rs.factor;
  if (rs.type == "llama3") {
    // HF _compute_llama3_parameters: keep high frequencies, divide low ones
    // by factor, interpolate smoothly in between.
    const double old_ctx = static_cast<double>(rs.original_max_position_embeddings);
    const double low_wavelen = old_ctx / rs.low_freq_factor;
    const double high_wavelen = old_ctx / rs.high_freq_factor;
    if (!(rs.high_freq_factor > rs.low_freq_factor))
      throw ConfigError("rope_scaling llama3 needs high_freq_factor > low_freq_factor");
    auto wavelen = 2.0 * M_PI / inv;
    auto scaled = torch::where(wavelen > low_wavelen, inv / rs.factor, inv);
    auto smooth = (old_ctx / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
    auto smoothed = (1 - smooth) * scaled / rs.factor + smooth * scaled;
    auto is_medium = (wavelen >= high_wavelen).logical_and(wavelen <= low_wavelen);
    return torch::where(is_medium, smoothed, scaled);
  }
  throw ConfigError("unsupported rope_scaling type '" + rs.type + "' (expected none, linear or llama3)");
}

std::pair<torch::Tensor, torch::Tensor> rope_cos_sin(const torch::Tensor& positions, const torch::Tensor& inv_freq,
                                                     torch::Dtype out_dtype) {
  auto inv = inv_freq.to(positions.device());
  auto freqs = positions.to(inv.scalar_type()).unsqueeze(-1) * inv;  // [..., D/2]
  auto emb = torch::cat({freqs, freqs}, -1);                          // [..., D]
  return {emb.cos().to(out_dtype), emb.sin().to(out_dtype)};
}

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  auto x1 = x.narrow(-1, 0, half);
  auto x2 = x.narrow(-1, half, half);
  auto rotated = torch::cat({-x2, x1}, -1);
  return x * cos + rotated * sin;
}

}  // namespace agentrl::model
