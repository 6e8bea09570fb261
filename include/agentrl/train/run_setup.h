// Building blocks of the trainers: run directory, metrics sinks, agent
// contexts, resume-config checks, model copies. Kept apart from trainer.cpp so the RL loop itself
// stays short and readable.
//
// Thread-safety: trainer thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/algo/filter.h"
#include "agentrl/core/collective.h"
#include "agentrl/core/metrics.h"
#include "agentrl/envs/env.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/rollout/generator.h"
#include "agentrl/rollout/train_batch.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/policy.h"
#include "agentrl/train/trainer_state.h"

namespace agentrl::train {

struct RunPaths {
  std::string run_dir, config, log, metrics, tb, checkpoints, rollouts;
};

// Creates <output_dir>/<name>/{checkpoints,rollouts,tb}, starts logging to
// the console and log.txt, sets LibTorch threads, writes config.yaml.
// Rank 0 owns console, log.txt, config.yaml and metrics; rank r > 0 logs to
// log_rank<r>.txt only.
RunPaths prepare_run(const ExperimentConfig& cfg, int rank = 0, int world_size = 1);

// Console + metrics.jsonl + TensorBoard sinks. When resuming at step N the
// JSONL keeps only lines with step <= N.
std::unique_ptr<MetricsLogger> make_run_metrics(const ExperimentConfig& cfg, const RunPaths& paths,
                                                int64_t resume_step);

// Refuses to resume when the checkpoint's config differs from `cfg` in a key
// outside resume_allowed_changes(); the ConfigError names every such key
// with both values. A key the checkpoint's config lacks (added since) is no
// difference when this run has its default; a key of removed_config_keys()
// that only the checkpoint names is none either.
void check_resume_config(const ExperimentConfig& cfg, const std::string& checkpoint_dir);
const std::vector<std::string>& removed_config_keys();

std::shared_ptr<rollout::AgentContext> make_agent_context(const ExperimentConfig& cfg, const Policy& policy,
                                                          bool eval);

// Behaviour (engine) vs recomputed pi_old log-prob mismatch on loss tokens
// (only when pi_old was recomputed), the rollout's mean token entropy, and
// with choice-mode rollouts the share of loss tokens sampled under a mask.
void add_mismatch_metrics(const rollout::TrainBatch& batch, bool recomputed, std::map<std::string, double>& metrics);

// A deep copy of a model (frozen reference policy).
model::TransformerLM clone_model(model::TransformerLM& model);
// dst's weights := src's (same architecture, any dtype/device).
void copy_model_weights(model::TransformerLM& src, model::TransformerLM& dst);

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace agentrl::train
