// ExperimentConfig: the root of a run's YAML configuration.
//
// Composes the typed sections of every layer (model, engine, rollout,
// prompt, algorithm, actor, trainer, sft, ...) plus one section per
// registered environment (`alfworld:`, `webshop:`, ...). `agentrl config
// show --doc` prints every key with its type, default, range and doc.
//
// Thread-safety: a plain value; read-only after loading.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/algo/algo_config.h"
#include "agentrl/core/config.h"
#include "agentrl/model/model_config.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/rollout/rollout_config.h"

namespace agentrl::train {

struct RuntimeConfig {
  std::string output_dir = "runs";  // runs/<name>/...
  std::string name = "default";
  int64_t seed = 0;
  int64_t num_threads = 0;  // LibTorch intra-op threads; 0 = number of cores
  std::string log_level = "info";
  void visit(config::Visitor& v);
};

struct EnvSelectionConfig {
  std::string name = "alfworld";  // a registered env
  std::string train_split = "";   // "" = the env's default train split
  std::string eval_split = "";    // "" = the env's default eval split
  void visit(config::Visitor& v);
};

struct TokenizerConfig {
  std::string path = "";             // tokenizer dir; "" = the model dir
  std::string chat_template = "auto";  // auto | chatml | llama3 | plain
  // From-scratch policies: train a SentencePiece model on env text first.
  bool train = false;
  int64_t vocab_size = 1024;
  int64_t corpus_episodes = 300;  // expert episodes whose text forms the corpus
  std::string model_type = "unigram";  // unigram | bpe
  bool vocab_size_is_limit = false;  // vocab_size is an upper bound (small corpora)
  std::vector<std::string> symbols;  // extra pieces kept whole (e.g. "<action>")
  bool env_symbols = false;          // also keep the env's identifiers whole (EnvSuite::identifiers)
  bool split_digits = true;          // every digit its own piece
  void visit(config::Visitor& v);
};

struct OptimConfig {
  double lr = 1e-6;
  double weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  std::string schedule = "constant";  // constant | linear | cosine
  int64_t warmup_steps = 0;
  double min_lr_ratio = 0.0;  // final LR = lr * min_lr_ratio for linear/cosine
  void visit(config::Visitor& v);
};

struct TrainerConfig {
  int64_t iterations = 100;
  int64_t eval_every = 10;     // 0 = only at the end
  int64_t eval_episodes = 64;  // held-out episodes per evaluation (0 = whole split)
  // > 0: each evaluation also runs this many episodes per held-out task with
  // the training sampling settings (metrics eval_sampled/*).
  int64_t eval_sampled_per_task = 0;
  int64_t save_every = 10;     // 0 = only at the end
  int64_t keep_checkpoints = 3;
  int64_t micro_batch_tokens = 8192;  // padded tokens per forward/backward
  int64_t max_nonfinite_steps = 3;    // consecutive skipped steps before the run stops
  // false: pi_old is the engine's log-probs of the rollout (same weights, no
  // second forward pass); true: the trainer rescores the rollout tokens.
  bool recompute_old_logprobs = true;
  OptimConfig optim;
  void visit(config::Visitor& v);
};

struct SftConfig {
  bool enabled = false;
  std::string data = "";        // JSONL chat conversations; "" = expert demos of the env
  int64_t demo_episodes = 200;  // expert episodes when data is ""
  double demo_mistake_rate = 0.0;  // per step: a mistaken command first, then the expert's (not trained on)
  int64_t epochs = 3;
  int64_t batch_tokens = 8192;  // padded tokens per optimizer step
  int64_t max_seq_tokens = 2048;
  double observation_loss_weight = 0.0;  // loss weight on env output in expert demos (sft.h)
  OptimConfig optim;
  void visit(config::Visitor& v);
};

// Data-parallel training (`agentrl launch`); ignored in a single process.
struct DistConfig {
  // ZeRO-1: each rank keeps the AdamW state of ~1/world of the parameters.
  // A sharded checkpoint resumes only with the world size that wrote it.
  bool shard_optimizer = false;
  // Collective / rendezvous timeout. Longer than rank 0's evaluation and
  // checkpoint writes, during which the other ranks wait in a barrier.
  int64_t timeout_s = 1800;
  void visit(config::Visitor& v);
};

// Keys that may differ between a checkpoint's config and the resuming run.
const std::vector<std::string>& resume_allowed_changes();

struct ExperimentConfig {
  RuntimeConfig runtime;
  EnvSelectionConfig env;
  model::PolicyConfig model;
  TokenizerConfig tokenizer;
  rollout::EngineOptions engine;
  rollout::RolloutConfig rollout;
  rollout::PromptConfig prompt;
  algo::AlgorithmConfig algorithm;
  algo::ActorConfig actor;
  TrainerConfig trainer;
  SftConfig sft;
  DistConfig dist;
  config::ExtensionSections envs;  // one section per registered env

  void visit(config::Visitor& v);
};

// Loads FILE with its defaults chain and key=value overrides.
ExperimentConfig load_experiment_config(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace agentrl::train
