#include "agentrl/train/run_setup.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/logging.h"
#include "agentrl/core/rng.h"
#include "agentrl/rollout/rollout_pool.h"
#include "agentrl/rollout/trajectory_io.h"

namespace fs = std::filesystem;

namespace agentrl::train {

RunPaths prepare_run(const ExperimentConfig& cfg, int rank, int world_size) {
  RunPaths p;
  p.run_dir = (fs::path(cfg.runtime.output_dir) / cfg.runtime.name).string();
  p.config = (fs::path(p.run_dir) / "config.yaml").string();
  p.log = (fs::path(p.run_dir) / "log.txt").string();
  p.metrics = (fs::path(p.run_dir) / "metrics.jsonl").string();
  p.tb = (fs::path(p.run_dir) / "tb").string();
  p.checkpoints = (fs::path(p.run_dir) / "checkpoints").string();
  p.rollouts = (fs::path(p.run_dir) / "rollouts").string();
  for (const auto& d : {p.run_dir, p.tb, p.checkpoints, p.rollouts}) ensure_dir(d);
  LogOptions lo;
  lo.level = cfg.runtime.log_level;
  lo.rank = rank;
  lo.world_size = world_size;
  lo.file = rank == 0 ? p.log : (fs::path(p.run_dir) / ("log_rank" + std::to_string(rank) + ".txt")).string();
  lo.console = rank == 0;
  init_logging(lo);
  const int threads = cfg.runtime.num_threads > 0 ? static_cast<int>(cfg.runtime.num_threads)
                                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  auto& c = const_cast<ExperimentConfig&>(cfg);  // to_yaml visits (reads) the struct
  if (rank == 0) write_file_atomic(p.config, config::to_yaml(c));
  log().info("run directory {} ({} threads)", p.run_dir, threads);
  return p;
}

std::unique_ptr<MetricsLogger> make_run_metrics(const ExperimentConfig&, const RunPaths& paths, int64_t resume_step) {
  auto m = std::make_unique<MetricsLogger>();
  m->add_sink(std::make_unique<ConsoleSink>(std::vector<std::string>{
      "rollout/success_rate", "rollout/reward_mean", "eval/success_rate", "eval_sampled/success_rate",
      "actor/pg_loss", "actor/entropy", "actor/grad_norm", "time/iteration_s"}));
  m->add_sink(std::make_unique<JsonlSink>(paths.metrics, resume_step));
  m->add_sink(std::make_unique<TensorBoardSink>(paths.tb));
  return m;
}

namespace {

void flatten(const YAML::Node& n, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) flatten(kv.second, prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>(), out);
  } else {
    YAML::Emitter e;
    e << YAML::Flow << n;
    out[prefix] = e.c_str();
  }
}

}  // namespace

const std::vector<std::string>& removed_config_keys() {
  // Keys that were accepted but never read, removed since (a checkpoint may
  // still name them).
  static const std::vector<std::string> keys = {"algorithm.gamma", "actor.micro_batch_rows"};
  return keys;
}

void check_resume_config(const ExperimentConfig& cfg, const std::string& checkpoint_dir) {
  const auto path = (fs::path(checkpoint_dir) / "config.yaml").string();
  std::map<std::string, std::string> old_keys, new_keys, default_keys;
  flatten(YAML::Load(read_file(path)), "", old_keys);
  auto& c = const_cast<ExperimentConfig&>(cfg);
  flatten(YAML::Load(config::to_yaml(c)), "", new_keys);
  ExperimentConfig defaults;
  flatten(YAML::Load(config::to_yaml(defaults)), "", default_keys);
  const auto& allowed = resume_allowed_changes();
  const auto& removed = removed_config_keys();
  std::string diffs;
  std::set<std::string> keys;
  for (auto& [k, v] : old_keys) keys.insert(k);
  for (auto& [k, v] : new_keys) keys.insert(k);
  for (const auto& k : keys) {
    const std::string a = old_keys.count(k) ? old_keys[k] : "<absent>";
    const std::string b = new_keys.count(k) ? new_keys[k] : "<absent>";
    if (a == b || std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    // A checkpoint written before a key existed ran with that key's default.
    if (a == "<absent>" && default_keys.count(k) && default_keys[k] == b) continue;
    if (b == "<absent>" && std::find(removed.begin(), removed.end(), k) != removed.end()) continue;
    diffs += "\n  " + k + ": checkpoint has " + a + ", this run has " + b;
  }
  if (!diffs.empty())
    throw ConfigError("refusing to resume from " + checkpoint_dir + ": the config differs in keys that are not allowed "
                      "to change on resume:" + diffs);
}

std::shared_ptr<rollout::AgentContext> make_agent_context(const ExperimentConfig& cfg, const Policy& policy,
                                                          bool eval) {
  auto ctx = std::make_shared<rollout::AgentContext>();
  ctx->rollout = cfg.rollout;
  ctx->prompt = cfg.prompt;
  ctx->tokenizer = policy.tokenizer;
  ctx->chat = policy.chat;
  ctx->sampling.temperature = eval ? cfg.rollout.eval_temperature : cfg.rollout.temperature;
  ctx->sampling.top_p = eval ? cfg.rollout.eval_top_p : cfg.rollout.top_p;
  ctx->sampling.top_k = eval ? 0 : cfg.rollout.top_k;
  ctx->constrain_actions = eval ? cfg.rollout.eval_constrain_actions : cfg.rollout.constrain_actions;
  return ctx;
}

void add_mismatch_metrics(const rollout::TrainBatch& b, bool recomputed, std::map<std::string, double>& m) {
  auto mask = b.loss_mask;
  const double n = mask.sum().item<double>();
  if (n == 0) return;
  if (recomputed) {
    auto diff = (b.old_logprobs - b.behaviour_logprobs).abs() * mask;
    m["rollout/logprob_mismatch_mean"] = diff.sum().item<double>() / n;
    m["rollout/logprob_mismatch_max"] = diff.max().item<double>();
  }
  m["rollout/entropy_mean"] = (b.rollout_entropies * mask).sum().item<double>() / n;
  if (!b.allowed_tokens.empty()) {  // choice-mode rollouts: the share of loss tokens sampled under a mask
    auto lm = mask.accessor<float, 2>();
    double constrained = 0;
    for (size_t r = 0; r < b.allowed_tokens.size(); ++r)
      for (const auto& [t, ids] : b.allowed_tokens[r]) constrained += lm[static_cast<int64_t>(r)][t];
    m["rollout/constrained_token_rate"] = constrained / n;
  }
}

void copy_model_weights(model::TransformerLM& src, model::TransformerLM& dst) {
  torch::NoGradGuard g;
  auto dst_params = dst->named_parameters();
  for (const auto& p : src->named_parameters()) dst_params[p.key()].copy_(p.value());
}

model::TransformerLM clone_model(model::TransformerLM& src) {
  model::TransformerLM copy(src->args());
  copy->to(src->device(), src->dtype());
  copy->set_attention_kernel(src->attention_kernel());
  copy_model_weights(src, copy);
  copy->eval();
  for (auto& p : copy->parameters()) p.set_requires_grad(false);
  return copy;
}

}  // namespace agentrl::train
