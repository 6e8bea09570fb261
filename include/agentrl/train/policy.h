// Policy: the tokenizer, chat template and TransformerLM a run trains,
// built from the config (loaded from an HF directory, or initialised from
// scratch with a tokenizer trained on env text).
//
// Thread-safety: build once on the trainer thread; the model is shared with
// the generation engine, which synchronises through lock_weights().
#pragma once

#include <memory>
#include <string>

#include "agentrl/envs/env.h"
#include "agentrl/model/lora.h"
#include "agentrl/model/transformer.h"
#include "agentrl/text/chat_template.h"
#include "agentrl/text/tokenizer.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/master_weights.h"

namespace agentrl::train {

struct Policy {
  std::shared_ptr<const text::Tokenizer> tokenizer;
  std::shared_ptr<const text::ChatTemplate> chat;
  std::string tokenizer_dir;  // where the tokenizer files live (copied into exports)
  model::TransformerLM model{nullptr};
  torch::Device device = torch::kCPU;
};

// Loads the policy saved in an HF directory (a checkpoint's model/ or an export).
Policy load_policy_dir(const ExperimentConfig& cfg, const std::string& model_dir);

// Loads a policy from what `path` is: a checkpoint (…/step_N: its model/, and
// with LoRA its adapter/ on model/ or, when the checkpoint holds no base, on
// cfg.model.path), a PEFT adapter directory (on cfg.model.path), or an HF
// model directory. Throws ConfigError when a LoRA base is needed and
// cfg.model.path is empty.
Policy load_policy_from(const ExperimentConfig& cfg, const std::string& path);

// model.lora as adapter options (A drawn from runtime.seed; fp32 adapters).
model::LoraOptions lora_options(const ExperimentConfig& cfg);
// With model.lora.enabled: attaches the adapters to the policy (freezing the
// base), continuing model.lora.path's PEFT adapter when set (its config must
// match model.lora: ConfigError naming the key otherwise). No-op when off.
void attach_policy_lora(Policy& policy, const ExperimentConfig& cfg);
// Attaches the adapters of the PEFT directory `adapter_dir` with its own
// config and loads their weights.
void attach_adapter_dir(Policy& policy, const std::string& adapter_dir);
// Writes the policy's adapters as a PEFT directory (base_model_name_or_path =
// model.path).
void save_policy_adapter(Policy& policy, const ExperimentConfig& cfg, const std::string& dir);

// The tokenizer and chat template of a fresh run, without the model:
// tokenizer.path, else model.path's tokenizer, else (tokenizer.train) one
// trained on expert-episode text of `suite` into <run_dir>/tokenizer.
// ConfigError when none is configured or tokenizer.train meets model.path.
Policy build_policy_tokenizer(const ExperimentConfig& cfg, const envs::EnvSuite& suite, const std::string& run_dir);

// Builds the initial policy of a fresh run: model.path if set, else a random
// init of model.init; the tokenizer from tokenizer.path / model.path, or
// trained on expert-episode text of `suite` into <run_dir>/tokenizer when
// tokenizer.train is set.
Policy build_initial_policy(const ExperimentConfig& cfg, const envs::EnvSuite& suite, const std::string& run_dir);

// Writes the policy as an HF directory (config, safetensors, tokenizer files;
// the base weights only when LoRA adapters are attached and not merged),
// in the model's dtype; with enabled `masters` (a bf16/fp16 run), the fp32
// masters in float32, so that resume restores them bit for bit.
void save_policy(Policy& policy, const std::string& dir, const MasterWeights* masters = nullptr);

// Text the tokenizer of a from-scratch policy is trained on: prompts and
// expert responses of `episodes` expert episodes.
std::string collect_env_text(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                             const rollout::PromptConfig& prompt, uint64_t seed);

}  // namespace agentrl::train
