#include "agentrl/model/dense.h"

namespace agentrl::model {

DenseImpl::DenseImpl(int64_t in, int64_t out, bool with_bias) {
  weight = register_parameter("weight", torch::empty({out, in}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor DenseImpl::forward(const torch::Tensor& x) {
  return torch::nn::functional::linear(x, weight, bias.defined() ? bias : torch::Tensor());
}

}  // namespace agentrl::model
