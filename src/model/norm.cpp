#include "agentrl/model/norm.h"

namespace agentrl::model {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  // HF Qwen2RMSNorm.forward: upcast, normalise, cast back, then scale.
  const auto compute = x.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  auto xf = x.to(compute);
  auto var = xf.pow(2).mean(-1, /*keepdim=*/true);
  auto y = (xf * torch::rsqrt(var + eps)).to(x.scalar_type());
  return weight * y;
}

}  // namespace agentrl::model

namespace agentrl::model {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_) : eps(eps_) {
  weight = register_parameter("weight", torch::ones({dim}));
}

}  // namespace agentrl::model
