// LoRA adapters on a TransformerLM (Hu et al. 2021, arXiv 2106.09685), with
// PEFT's semantics and defaults (peft/tuners/lora): for each targeted linear
// layer W [out,in], A [r,in] drawn like PEFT's kaiming_uniform_(a=sqrt(5))
// (uniform in +-1/sqrt(in)), B [out,r] zero, so the adapted model starts equal
// to the base; scaling alpha / r (alpha / sqrt(r) with rsLoRA, Kalajdzievski
// 2023, arXiv 2312.03732).
//
// attach_lora freezes every base parameter (requires_grad false): only the
// adapters train. The adapters are module parameters named
// "<layer>.lora_A" / "<layer>.lora_B" (e.g.
// "model.layers.0.self_attn.q_proj.lora_A"). Switching them off gives the
// base model (the KL reference without a second copy of the weights);
// merging adds scaling * B A into W for faster forwards and must be undone
// (unmerge) before the adapters change again.
//
// Users: the trainer (config section model.lora, train/policy.h), its
// checkpoints and `agentrl export` (PEFT format: model/lora_peft.h).
//
// Errors: ConfigError naming the option and the expected value. Thread-safety:
// like the model: not concurrently with forwards or updates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "agentrl/model/transformer.h"

namespace agentrl::model {

// PEFT's init_lora_weights: true (A kaiming-uniform) or "gaussian" (A normal
// with std 1 / r); B is zero either way.
enum class LoraInit { kDefault, kGaussian };

struct LoraOptions {
  int64_t rank = 8;       // PEFT's r
  double alpha = 8;       // PEFT's lora_alpha
  double dropout = 0.0;   // on the adapter's input, in training mode only
  bool use_rslora = false;
  // Module names (the last component, PEFT's matching) to adapt.
  std::vector<std::string> target_modules = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                             "down_proj"};
  LoraInit init = LoraInit::kDefault;
  uint64_t seed = 0;          // of A's draw (per layer, by name: order-independent)
  torch::Dtype dtype = torch::kFloat32;  // adapter dtype (fp32 adapters on a bf16 base)
};

// Attaches an adapter to every Dense whose name ends in a target and freezes
// all base parameters; returns the number of adapted layers. Call after the
// base weights are loaded or initialised. Throws ConfigError when a target
// matches no layer (listing the model's linear layers), when rank < 1 or
// rank > min(in, out) of a targeted layer, or when the model already has
// adapters.
int64_t attach_lora(TransformerLMImpl& model, const LoraOptions& options);

// Adapter parameters (A then B of each adapted layer, in module order).
std::vector<torch::Tensor> lora_parameters(torch::nn::Module& model);
// Named adapter parameters ("model.layers.0.self_attn.q_proj.lora_A", ...).
std::vector<std::pair<std::string, torch::Tensor>> named_lora_parameters(torch::nn::Module& model);

// Switches every adapter on or off. Throws Error while adapters are merged.
void set_lora_enabled(torch::nn::Module& model, bool enabled);
// W += scaling * B A for every adapter (no-op for merged ones); unmerge
// subtracts it again (exact up to the base dtype's rounding: in bf16 the
// round trip can change W by one ulp, which is why the trainer keeps them
// unmerged).
void merge_lora(torch::nn::Module& model);
void unmerge_lora(torch::nn::Module& model);

// Adds every adapter's scaling * B A into its base weight for good (the base
// then is the adapted model) and starts the adapters again: A redrawn from
// `seed` like attach_lora, B zero, so the model's output is unchanged. The
// trainer does this after an SFT stage, so that RL's KL reference (adapters
// off) is the SFT policy. Throws Error while adapters are merged or off.
void fold_lora_into_base(torch::nn::Module& model, uint64_t seed);

// True for the name of an adapter parameter ("….lora_A" / "….lora_B"). HF
// model directories hold the base weights only: save_pretrained and
// load_state_dict skip these (adapters travel in PEFT's format).
bool is_lora_parameter_name(const std::string& name);

// Switches the adapters off for its lifetime (the base model: the KL
// reference) and on again at the end. Not for concurrent forwards.
class LoraOffScope {
 public:
  explicit LoraOffScope(torch::nn::Module& model) : model_(model) { set_lora_enabled(model_, false); }
  ~LoraOffScope() { set_lora_enabled(model_, true); }
  LoraOffScope(const LoraOffScope&) = delete;
  LoraOffScope& operator=(const LoraOffScope&) = delete;

 private:
  torch::nn::Module& model_;
};

}  // namespace agentrl::model
