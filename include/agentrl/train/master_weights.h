// Mixed-precision training state: fp32 master copies of a low-precision
// (bfloat16 / float16) model's parameters.
//
// Why: LibTorch's AdamW keeps its moments in the parameter's dtype and adds
// the update to the parameter itself. A bf16 weight has 8 significant bits,
// so an update of lr 1e-6 is below half a unit in the last place for nearly
// every weight and rounds away: training silently does not update. As in
// mixed-precision training (Micikevicius et al. 2018; PyTorch FSDP's
// MixedPrecision, Megatron's fp32 main params), the optimizer instead steps
// fp32 masters with fp32 moments; gradients are accumulated into fp32
// master gradients after every backward; after each step the masters are
// rounded into the model's compute weights.
//
// For an fp32 model the masters ARE the model's parameters: params() returns
// them, accumulate_gradients() and copy_to_model() do nothing, zero_grad()
// zeroes the model's gradients. So fp32 training is bit-for-bit what it was.
//
// Users: the RL trainer (ppo_update) and SFT; the optimizer (make_adamw) and
// the gradient synchronisers run over params(). Checkpoints store the masters
// (an fp32 model directory), so resume of a bf16 run is bit-exact.
//
// Thread-safety: trainer thread only. copy_to_model() writes the weights the
// generation engine reads: call it under the engine's weight lock.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace agentrl::train {

class MasterWeights {
 public:
  // Masters for the trainable parameters (requires_grad) of `module`, in
  // named_parameters() order: all of a TransformerLM's, or only the adapters
  // of a LoRA model (whose frozen base is never stepped). The trainable
  // parameters share one floating dtype; masters are made when it is not
  // float32 (fp32 adapters on a bf16 base need none), on their device.
  explicit MasterWeights(torch::nn::Module& module);
  MasterWeights(const MasterWeights&) = delete;
  MasterWeights& operator=(const MasterWeights&) = delete;

  // True when the model is not fp32 and separate fp32 masters exist.
  bool enabled() const { return enabled_; }
  // The tensors the optimizer steps: the fp32 masters, or the model's own
  // parameters when disabled. Same order as the module's trainable parameters.
  const std::vector<torch::Tensor>& params() const { return masters_; }
  // The names of params(), as in module.named_parameters().
  const std::vector<std::string>& names() const { return names_; }

  // Adds every model gradient into its master's fp32 gradient and releases
  // the model's (so the next backward starts from zero). Call after each
  // backward of a gradient-accumulation loop; no-op when disabled.
  void accumulate_gradients();
  // Resets the gradients of the masters and of the model.
  void zero_grad();
  // model weight := master, rounded to the model's dtype (no-op when disabled).
  void copy_to_model();
  // Sets the masters from fp32 `values` (by name, e.g. a checkpoint's fp32
  // model) and rounds them into the model. Throws FormatError naming a
  // missing or wrongly shaped tensor. When disabled, copies into the model.
  void load(const std::map<std::string, torch::Tensor>& values);
  // The masters by name (for checkpoints); the model's parameters when disabled.
  std::map<std::string, torch::Tensor> named() const;

 private:
  bool enabled_ = false;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> model_params_;
  std::vector<torch::Tensor> masters_;
};

// Loads the masters from the HF model directory `model_dir` (a checkpoint's
// model/, written by save_policy with these masters: float32 tensors under
// the parameter names). No-op when `masters` is disabled (the model was
// loaded from the same directory). Throws FormatError / IoError.
void load_master_weights(MasterWeights& masters, const std::string& model_dir);

}  // namespace agentrl::train
