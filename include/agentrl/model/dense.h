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
//
// Optionally with a LoRA adapter (Hu et al. 2021, arXiv 2106.09685; attached
// by model/lora.h, parameters "lora_A" [r,in] and "lora_B" [out,r]):
//   y = x W^T + b + scaling * (dropout(x) A^T) B^T
// computed in the adapter's dtype (fp32 adapters on a bf16 base), unless the
// adapter is switched off or merged into W.
struct LoraAdapter {
  torch::Tensor A, B;  // undefined: no adapter
  double scaling = 0;
  double dropout = 0;
  bool enabled = true;  // off: the base layer (the KL reference policy)
  bool merged = false;  // scaling * B A has been added to W
  // Whether DenseImpl::forward adds the adapter's term (present, on, not merged).
  bool active() const { return A.defined() && enabled && !merged; }
};

class DenseImpl : public torch::nn::Module {
 public:
  DenseImpl(int64_t in, int64_t out, bool bias);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
  LoraAdapter lora;
};
TORCH_MODULE(Dense);

}  // namespace agentrl::model
