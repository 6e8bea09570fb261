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

void check_resume_config(const ExperimentConfig& cfg, const std::string& checkpoint_dir) {
  const auto path = (fs::path(checkpoint_dir) / "config.yaml").string();
  std::map<std::string, std::string> old_keys, new_keys;
  flatten(YAML::Load(read_file(path)), "", old_keys);
  auto& c = const_cast<ExperimentConfig&>(cfg);
  flatten(YAML::Load(config::to_yaml(c)), "", new_keys);
  const auto& allowed = resume_allowed_changes();
  std::string diffs;
  std::set<std::string> keys;
  for (auto& [k, v] : old_keys) keys.insert(k);
  for (auto& [k, v] : new_keys) keys.insert(k);
  for (const auto& k : keys) {
    const std::string a = old_keys.count(k) ? old_keys[k] : "<absent>";
    const std::string b = new_keys.count(k) ? new_keys[k] : "<absent>";
    if (a == b || std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
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
  ctx->sampling.top_p = eval ? 1.0 : cfg.rollout.top_p;
  ctx->sampling.top_k = eval ? 0 : cfg.rollout.top_k;
  return ctx;
}

std::vector<envs::Task> TaskCursor::next(const envs::TaskSource& tasks, int64_t n) {
  std::vector<envs::Task> out;
  while (static_cast<int64_t>(out.size()) < n) {
    auto order = tasks.ordered(split, mix_seed(seed, static_cast<uint64_t>(epoch)));
    if (order.empty()) throw ConfigError("env split '" + split + "' has no tasks");
    while (position < static_cast<int64_t>(order.size()) && static_cast<int64_t>(out.size()) < n)
      out.push_back(order[static_cast<size_t>(position++)]);
    if (position >= static_cast<int64_t>(order.size())) {
      ++epoch;
      position = 0;
    }
  }
  return out;
}

std::vector<rollout::Trajectory> collect_groups(rollout::Generator& generator,
                                                std::shared_ptr<const envs::EnvSuite> suite,
                                                std::shared_ptr<const rollout::AgentContext> ctx,
                                                const std::vector<std::unique_ptr<algo::TrajectoryFilter>>& filters,
                                                const ExperimentConfig& cfg, TaskCursor& cursor, int64_t iteration,
                                                std::map<std::string, double>& metrics, const RunPaths& paths,
                                                Collective& collective) {
  const int rank = collective.rank(), world = collective.world_size();
  const int64_t want = cfg.rollout.tasks_per_iteration;
  const bool refill = std::find(cfg.algorithm.filters.begin(), cfg.algorithm.filters.end(), "zero_variance") !=
                      cfg.algorithm.filters.end();
  std::vector<rollout::Trajectory> kept, dumped;
  std::set<int64_t> kept_groups;
  rollout::RolloutStats total;
  std::map<std::string, double> filter_metrics;
  int64_t next_group = 0;
  const int64_t my_want = (rank + 1) * want / world - rank * want / world;  // this rank's share of groups
  int64_t missing = want;  // groups still wanted over all ranks (identical on every rank)
  for (int64_t attempt = 0;; ++attempt) {
    const int64_t n_tasks =
        attempt == 0 ? want
                     : static_cast<int64_t>(std::ceil(cfg.algorithm.zero_variance.oversample_factor *
                                                      static_cast<double>(missing)));
    auto tasks = cursor.next(suite->tasks(), n_tasks);
    auto all_specs = rollout::make_group_episodes(tasks, cfg.rollout.group_size,
                                                  static_cast<uint64_t>(cfg.runtime.seed), iteration * 64 + attempt);
    std::vector<rollout::EpisodeSpec> specs;
    for (auto& sp : all_specs) {
      const int64_t g = sp.group_id;
      if (g < rank * n_tasks / world || g >= (rank + 1) * n_tasks / world) continue;
      sp.group_id += next_group;
      specs.push_back(std::move(sp));
    }
    next_group += n_tasks;
    rollout::RolloutPool pool(generator, suite, ctx);
    rollout::RolloutStats st;
    auto trajs = pool.run(specs, &st);
    total.episodes += st.episodes;
    total.failed += st.failed;
    total.timed_out += st.timed_out;
    total.turns += st.turns;
    total.invalid_turns += st.invalid_turns;
    total.void_turns += st.void_turns;
    total.generated_tokens += st.generated_tokens;
    total.successes += st.successes;
    total.reward_sum += st.reward_sum;
    total.wall_seconds += st.wall_seconds;
    total.generation_seconds += st.generation_seconds;
    total.env_seconds += st.env_seconds;
    if (cfg.rollout.dump_trajectories) dumped.insert(dumped.end(), trajs.begin(), trajs.end());
    // A failed episode (env crash, timeout) is excluded; its group keeps the
    // remaining samples.
    trajs.erase(std::remove_if(trajs.begin(), trajs.end(), [](const auto& t) { return t.failed; }), trajs.end());
    algo::FilterContext fc;
    fc.training = true;
    for (const auto& rep : algo::apply_filters(filters, trajs, fc)) {
      filter_metrics["filter/" + rep.filter + "/dropped_groups"] += static_cast<double>(rep.dropped_groups);
      filter_metrics["filter/" + rep.filter + "/masked_trajectories"] += static_cast<double>(rep.masked_trajectories);
      filter_metrics["filter/" + rep.filter + "/flagged_trajectories"] += static_cast<double>(rep.flagged_trajectories);
    }
    for (auto& t : trajs) {
      if (static_cast<int64_t>(kept_groups.size()) >= my_want && !kept_groups.count(t.group_id)) continue;
      kept_groups.insert(t.group_id);
      kept.push_back(std::move(t));
    }
    // All ranks agree on how many groups are still missing.
    std::vector<double> have{static_cast<double>(kept_groups.size())};
    collective.all_reduce_sum(have);
    missing = want - static_cast<int64_t>(have[0]);
    if (missing <= 0 || !refill || attempt >= cfg.algorithm.zero_variance.max_retries) break;
  }
  std::vector<double> sums{double(total.episodes), double(total.failed), double(total.timed_out), double(total.turns),
                           double(total.invalid_turns), double(total.void_turns), double(total.generated_tokens),
                           double(total.successes), total.reward_sum, total.generation_seconds, total.env_seconds};
  collective.all_reduce_sum(sums);
  total.episodes = int64_t(sums[0]);
  total.failed = int64_t(sums[1]);
  total.timed_out = int64_t(sums[2]);
  total.turns = int64_t(sums[3]);
  total.invalid_turns = int64_t(sums[4]);
  total.void_turns = int64_t(sums[5]);
  total.generated_tokens = int64_t(sums[6]);
  total.successes = int64_t(sums[7]);
  total.reward_sum = sums[8];
  total.generation_seconds = sums[9] / world;
  total.env_seconds = sums[10];
  std::vector<double> kept_counts{double(kept_groups.size()), double(kept.size())};
  collective.all_reduce_sum(kept_counts);
  for (auto& [k, v] : filter_metrics) {
    std::vector<double> x{v};
    collective.all_reduce_sum(x);
    v = x[0];
  }
  auto rs = total.scalars();
  metrics.insert(rs.begin(), rs.end());
  metrics.insert(filter_metrics.begin(), filter_metrics.end());
  metrics["rollout/trained_groups"] = kept_counts[0];
  metrics["rollout/trained_trajectories"] = kept_counts[1];
  if (cfg.rollout.dump_trajectories) {
    std::string name = "iter_" + std::to_string(iteration) + (world > 1 ? "_rank" + std::to_string(rank) : "") + ".jsonl";
    rollout::write_trajectories_jsonl((fs::path(paths.rollouts) / name).string(), dumped);
  }
  return kept;
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
}

void copy_model_weights(model::TransformerLM& src, model::TransformerLM& dst) {
  torch::NoGradGuard g;
  auto dst_params = dst->named_parameters();
  for (const auto& p : src->named_parameters()) dst_params[p.key()].copy_(p.value());
}

model::TransformerLM clone_model(model::TransformerLM& src) {
  model::TransformerLM copy(src->args());
  copy->to(src->device(), src->dtype());
  copy_model_weights(src, copy);
  copy->eval();
  for (auto& p : copy->parameters()) p.set_requires_grad(false);
  return copy;
}

}  // namespace agentrl::train
