#include "agentrl/train/experiment_config.h"

#include "agentrl/core/error.h"
#include "agentrl/core/logging.h"
#include "agentrl/model/attention.h"

namespace agentrl::train {

using config::Range;

void RuntimeConfig::visit(config::Visitor& v) {
  v.field("output_dir", output_dir, "directory holding run directories");
  v.field("name", name, "run name: the run directory is <output_dir>/<name>");
  v.field("seed", seed, "master seed of the run", Range::at_least(0));
  v.field("num_threads", num_threads, "LibTorch intra-op threads (0 = number of cores)", Range::at_least(0));
  v.field("log_level", log_level, "console log level", {"trace", "debug", "info", "warn", "error"});
}

void EnvSelectionConfig::visit(config::Visitor& v) {
  v.field("name", name, "environment to train on (a registered env name)");
  v.field("train_split", train_split, "split to sample training tasks from (\"\" = env default)");
  v.field("eval_split", eval_split, "split for evaluation (\"\" = env default)");
}

void TokenizerConfig::visit(config::Visitor& v) {
  v.field("path", path, "tokenizer directory (\"\" = the model directory)");
  v.field("chat_template", chat_template, "chat template", {"auto", "chatml", "llama3", "plain"});
  v.field("train", train, "train a SentencePiece tokenizer on env text (from-scratch policies)");
  v.field("vocab_size", vocab_size, "vocabulary size of a trained tokenizer", Range::at_least(64));
  v.field("corpus_episodes", corpus_episodes, "expert episodes whose text is the tokenizer corpus", Range::at_least(1));
  v.field("model_type", model_type, "SentencePiece model type of a trained tokenizer", {"unigram", "bpe"});
  v.field("vocab_size_is_limit", vocab_size_is_limit,
          "treat vocab_size as an upper bound: a corpus that supports fewer pieces gets fewer (the size is logged)");
  v.field("symbols", symbols, "extra pieces the trained tokenizer keeps whole (e.g. [\"<action>\", \"</action>\"])");
  v.field("env_symbols", env_symbols,
          "also keep every identifier the env's pages show and its actions copy as one piece (WebShop: the "
          "catalog's ASINs), so that a small policy copies one token instead of ten characters");
  v.field("split_digits", split_digits,
          "every digit its own piece (false: digit runs are split from other text but may merge, so a number is "
          "fewer, more distinctive pieces to copy)");
}

void OptimConfig::visit(config::Visitor& v) {
  v.field("lr", lr, "peak learning rate (AdamW)", Range::open_closed(0, 1));
  v.field("weight_decay", weight_decay, "decoupled weight decay", Range::closed(0, 1));
  v.field("beta1", beta1, "AdamW beta1", Range::closed(0, 0.999999));
  v.field("beta2", beta2, "AdamW beta2", Range::closed(0, 0.999999));
  v.field("eps", eps, "AdamW epsilon", Range::positive());
  v.field("schedule", schedule, "learning-rate schedule after warmup", {"constant", "linear", "cosine"});
  v.field("warmup_steps", warmup_steps, "linear warmup steps", Range::at_least(0));
  v.field("min_lr_ratio", min_lr_ratio, "final LR as a fraction of lr (linear/cosine)", Range::closed(0, 1));
}

void TrainerConfig::visit(config::Visitor& v) {
  v.field("iterations", iterations, "RL iterations", Range::at_least(0));
  v.field("eval_every", eval_every, "evaluate every N iterations (0 = only at the end)", Range::at_least(0));
  v.field("eval_episodes", eval_episodes, "episodes per evaluation (0 = whole eval split)", Range::at_least(0));
  v.field("eval_sampled_per_task", eval_sampled_per_task,
          "also evaluate the sampling policy: episodes per eval task at rollout.temperature (0 = off)",
          Range::at_least(0));
  v.field("save_every", save_every, "checkpoint every N iterations (0 = only at the end)", Range::at_least(0));
  v.field("keep_checkpoints", keep_checkpoints, "checkpoints kept (older ones are deleted)", Range::at_least(1));
  v.field("micro_batch_tokens", micro_batch_tokens, "padded tokens per forward/backward micro-batch",
          Range::at_least(16));
  v.field("max_nonfinite_steps", max_nonfinite_steps, "consecutive non-finite steps before the run stops",
          Range::at_least(1));
  v.field("recompute_old_logprobs", recompute_old_logprobs,
          "rescore rollout tokens for pi_old (false: use the engine's log-probs, which the same weights produced)");
  v.section("optim", optim, "optimizer of the RL updates");
}

void SftConfig::visit(config::Visitor& v) {
  v.field("enabled", enabled, "run supervised fine-tuning before RL");
  v.field("data", data, "JSONL chat conversations (\"\" = expert demonstrations of the env)");
  v.field("demo_episodes", demo_episodes, "expert episodes to train on when data is \"\"", Range::at_least(1));
  v.field("demo_mistake_rate", demo_mistake_rate,
          "per expert step, probability that the demonstration first sends a mistaken command (one number of the "
          "expert's command changed, e.g. a wrong object instance) and then recovers; mistakes stay in the context "
          "but are not trained on",
          Range{0.0, 1.0, false, true});
  v.field("epochs", epochs, "passes over the SFT data", Range::at_least(1));
  v.field("batch_tokens", batch_tokens, "padded tokens per optimizer step", Range::at_least(16));
  v.field("max_seq_tokens", max_seq_tokens, "longer conversations are truncated", Range::at_least(16));
  v.field("observation_loss_weight", observation_loss_weight,
          "loss weight on what the env returned in expert demonstrations (inline or full context: the "
          "observations after the first prompt; window: every turn's prompt): an auxiliary world-modelling loss "
          "next to the action loss; 0 = actions only, as RL trains",
          Range::closed(0.0, 1.0));
  v.section("optim", optim, "optimizer of the SFT stage");
}

void DistConfig::visit(config::Visitor& v) {
  v.field("shard_optimizer", shard_optimizer,
          "ZeRO-1: shard the AdamW state over the data-parallel ranks (resume needs the same world size)");
  v.field("timeout_s", timeout_s,
          "seconds a collective (and the rendezvous) may wait for the other ranks before the run fails; ranks wait "
          "in a barrier while rank 0 evaluates and writes checkpoints (PyTorch's default: 30 minutes)",
          Range::at_least(1));
}

const std::vector<std::string>& resume_allowed_changes() {
  static const std::vector<std::string> keys = {
      "trainer.iterations", "trainer.eval_every", "trainer.eval_episodes", "trainer.eval_sampled_per_task",
      "trainer.save_every", "trainer.keep_checkpoints", "runtime.num_threads", "runtime.log_level",
      "rollout.dump_trajectories", "rollout.concurrency", "rollout.episode_timeout_s", "dist.timeout_s"};
  return keys;
}

void ExperimentConfig::visit(config::Visitor& v) {
  v.section("runtime", runtime, "run directory, seed, threads, logging");
  v.section("env", env, "which environment to train on");
  v.section("model", model, "policy model");
  v.section("tokenizer", tokenizer, "tokenizer and chat template");
  v.section("engine", engine, "generation engine");
  v.section("rollout", rollout, "episodes per iteration, sampling, context handling");
  v.section("prompt", prompt, "prompt templates of the agent loop");
  v.section("algorithm", algorithm, "advantage estimator and trajectory filters");
  v.section("actor", actor, "policy loss");
  v.section("trainer", trainer, "RL loop, checkpoints, evaluation");
  v.section("sft", sft, "supervised warm start");
  v.section("dist", dist, "data-parallel training (agentrl launch)");
  envs.visit(v);
}

namespace {

// Rules that tie keys of different sections together (each key's own type
// and range are checked while loading).
void check_consistency(const ExperimentConfig& c, const std::string& path) {
  const auto& actor = c.actor;
  if (actor.loss_agg == "seq-mean-token-sum-norm" && actor.loss_agg_norm_length <= 0)
    throw ConfigError(path + ": actor.loss_agg seq-mean-token-sum-norm needs a constant divisor: set "
                      "actor.loss_agg_norm_length (e.g. rollout.max_new_tokens x rollout.max_turns = " +
                      std::to_string(c.rollout.max_new_tokens * c.rollout.max_turns) + ")");
  if (actor.choice_mass_coef > 0 && !c.rollout.constrain_actions)
    throw ConfigError(path + ": actor.choice_mass_coef is " + fmt::format("{}", actor.choice_mass_coef) +
                      " but rollout.constrain_actions is false: the term only acts on choice-mode rollouts; set "
                      "rollout.constrain_actions: true or actor.choice_mass_coef: 0");
  const auto& lora = c.model.lora;
  if (!lora.enabled && !lora.path.empty())
    throw ConfigError(path + ": model.lora.path is '" + lora.path +
                      "' but model.lora.enabled is false; set model.lora.enabled: true to train that adapter");
  if (lora.enabled && lora.target_modules.empty())
    throw ConfigError(path + ": model.lora.target_modules is empty; expected at least one of q_proj, k_proj, "
                      "v_proj, o_proj, gate_proj, up_proj, down_proj");
  if (c.sft.observation_loss_weight > 0 && !c.sft.data.empty())
    throw ConfigError(path + ": sft.observation_loss_weight applies to the env's expert demonstrations, but sft.data "
                      "is '" + c.sft.data + "' (chat conversations have no env output); set it to 0 or sft.data to \"\"");
  try {
    model::resolve_attention_kernel(c.model.attention);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  if (c.algorithm.adv_estimator == "drgrpo" && actor.loss_agg != "seq-mean-token-sum-norm")
    log().warn("{}: algorithm.adv_estimator drgrpo with actor.loss_agg {}: Dr.GRPO (arXiv 2503.20783) also "
               "removes the per-response length normalisation; use seq-mean-token-sum-norm with "
               "actor.loss_agg_norm_length",
               path, actor.loss_agg);
}

}  // namespace

ExperimentConfig load_experiment_config(const std::string& path, const std::vector<std::string>& overrides) {
  ExperimentConfig c;
  config::load(c, path, overrides);
  check_consistency(c, path);
  return c;
}

}  // namespace agentrl::train
