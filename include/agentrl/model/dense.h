// The linear layer of every projection of the transformer (attention q/k/v/o,
// MLP gate/up/down, the token embedding used as a table, the LM head).
//
// Thread-safety: like any torch::nn::Module: forward may run concurrently
// with itself; not with parameter updates.
#pragma once

#include <torch/torch.h>

namespace agentrl::model {

// Bias-optional linear layer y = x W^T + b with HF's parameter names
// "weight" [out,in] and "bias" [out]. Unlike torch::nn::Linear the
// parameters are created uninitialised (no costly random init of weights a
// checkpoint is about to overwrite); TransformerLM::init_weights fills them.
class DenseImpl : public torch::nn::Module {
 public:
  DenseImpl(int64_t in, int64_t out, bool bias);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
};
TORCH_MODULE(Dense);

}  // namespace agentrl::model
