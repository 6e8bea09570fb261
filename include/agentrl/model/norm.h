// RMSNorm (Zhang & Sennrich 2019), as in HF's Qwen2RMSNorm / LlamaRMSNorm:
//   y = weight * (x / sqrt(mean(x^2, -1) + eps))
// computed in float32 (or float64 when x is float64) and cast back to x's
// dtype before the weight multiply, exactly like HF.
//
// Thread-safety: pure function.
#pragma once

#include <torch/torch.h>

namespace agentrl::model {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// Module form with HF's parameter name "weight" [dim] (initialised to 1).
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x) { return rms_norm(x, weight, eps); }
  torch::Tensor weight;
  double eps;
};
TORCH_MODULE(RMSNorm);

}  // namespace agentrl::model
