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

// Builds the initial policy of a fresh run: model.path if set, else a random
// init of model.init; the tokenizer from tokenizer.path / model.path, or
// trained on expert-episode text of `suite` into <run_dir>/tokenizer when
// tokenizer.train is set.
Policy build_initial_policy(const ExperimentConfig& cfg, const envs::EnvSuite& suite, const std::string& run_dir);

// Writes the policy as an HF directory (config, safetensors, tokenizer files),
// in the model's dtype; with enabled `masters` (a bf16/fp16 run), the fp32
// masters in float32, so that resume restores them bit for bit.
void save_policy(Policy& policy, const std::string& dir, const MasterWeights* masters = nullptr);

// Text the tokenizer of a from-scratch policy is trained on: prompts and
// expert responses of `episodes` expert episodes.
std::string collect_env_text(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                             const rollout::PromptConfig& prompt, uint64_t seed);

}  // namespace agentrl::train
