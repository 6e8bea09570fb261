#include "agentrl/model/dense.h"

namespace agentrl::model {

DenseImpl::DenseImpl(int64_t in, int64_t out, bool with_bias) {
  weight = register_parameter("weight", torch::empty({out, in}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor DenseImpl::forward(const torch::Tensor& x) {
  auto y = torch::nn::functional::linear(x, weight, bias.defined() ? bias : torch::Tensor());
  if (!lora.active()) return y;
  auto h = x.to(lora.A.scalar_type());
  if (lora.dropout > 0 && is_training()) h = torch::dropout(h, lora.dropout, /*train=*/true);
  auto delta = torch::nn::functional::linear(torch::nn::functional::linear(h, lora.A), lora.B) * lora.scaling;
  return y + delta.to(y.scalar_type());
}

}  // namespace agentrl::model
