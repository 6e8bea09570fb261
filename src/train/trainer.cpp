// The RL loop, read top to bottom like CleanRL's: a RunContext is built once
// (process group, env suite, policy, optimizer, engine, estimator, filters);
// a TrainerState (trainer_state.h) is what changes per iteration and what a
// checkpoint restores; each iteration is
//   collect -> score (pi_old, pi_ref) -> advantages -> update -> evaluate / checkpoint.
#include "agentrl/train/trainer.h"

#include <csignal>
#include <filesystem>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/filter.h"
#include "agentrl/algo/policy_loss.h"
#include "agentrl/algo/trajectory_io.h"
#include "agentrl/core/collective.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/logging.h"
#include "agentrl/core/metrics.h"
#include "agentrl/dist/device_binding.h"
#include "agentrl/dist/process_group.h"
#include "agentrl/dist/zero_optimizer.h"
#include "agentrl/envs/registry.h"
#include "agentrl/model/lora.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/rollout/demos.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/train/checkpoint.h"
#include "agentrl/train/collect.h"
#include "agentrl/train/evaluator.h"
#include "agentrl/train/master_weights.h"
#include "agentrl/train/optim.h"
#include "agentrl/train/policy.h"
#include "agentrl/train/ppo_update.h"
#include "agentrl/train/run_setup.h"
#include "agentrl/train/sft.h"

namespace fs = std::filesystem;

namespace agentrl::train {

std::atomic<bool>& Trainer::stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
extern "C" void on_stop_signal(int) { Trainer::stop_requested().store(true); }
}  // namespace

void install_stop_signal_handlers() {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
}

namespace {

// Everything a run builds once.
struct RunContext {
  ExperimentConfig cfg;           // this rank's config: model.device is the rank's device
  std::string configured_device;  // model.device as the user wrote it
  TrainOptions opt;
  dist::Rendezvous rv;
  std::unique_ptr<dist::ProcessGroup> pg;  // null in a one-process run
  std::unique_ptr<Collective> collective;
  std::unique_ptr<dist::GradientSynchronizer> grad_sync;
  RunPaths paths;
  std::shared_ptr<const envs::EnvSuite> suite;
  std::string train_split, eval_split;
  Policy policy;
  model::TransformerLM ref{nullptr};
  std::unique_ptr<MasterWeights> masters;  // fp32 masters of a bf16/fp16 policy (else the policy's parameters)
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::unique_ptr<rollout::GenerationEngine> engine;
  std::shared_ptr<rollout::AgentContext> train_ctx, eval_ctx;
  std::unique_ptr<algo::AdvantageEstimator> estimator;
  std::vector<std::unique_ptr<algo::TrajectoryFilter>> filters;
  std::unique_ptr<MetricsLogger> metrics;
  std::unique_ptr<CheckpointManager> checkpoints;
  DistHooks hooks;
  std::string last_checkpoint;

  bool root() const { return rv.rank == 0; }
  // model.lora: adapters train on a frozen base; the KL reference is the base
  // (adapters off), not a second copy.
  bool lora() const { return cfg.model.lora.enabled; }
  void barrier() {
    if (pg) pg->barrier();
  }
  // ZeRO-1 shards the optimizer over this group (dist.shard_optimizer).
  dist::ProcessGroup* shard_over() const { return cfg.dist.shard_optimizer ? pg.get() : nullptr; }
  // The config as the user wrote it: what checkpoints save and resume compares.
  ExperimentConfig user_config() const {
    ExperimentConfig c = cfg;
    c.model.device = configured_device;
    return c;
  }
  WeightLock lock() {
    return [this] { return engine->lock_weights(); };
  }
};

// ---- Setup -----------------------------------------------------------------

// The rank layout, this rank's device (one rank per GPU, made current before
// any CUDA work) and the process group of a multi-process run.
void join_process_group(RunContext& c) {
  c.rv = dist::rendezvous_from_env();
  c.configured_device = c.cfg.model.device;
  c.cfg.model.device = dist::bind_rank_device(c.cfg.model.device, c.rv.world_size, c.rv.local_rank).str();
  if (c.rv.world_size == 1) {
    c.collective = std::make_unique<LocalCollective>();
    return;
  }
  const auto device = model::resolve_device(c.cfg.model.device);
  const std::chrono::milliseconds timeout = std::chrono::seconds(c.cfg.dist.timeout_s);
  c.pg = c.opt.make_process_group ? c.opt.make_process_group(c.rv, device, timeout)
                                  : std::make_unique<dist::ProcessGroup>(c.rv, device, timeout);
  c.collective = std::make_unique<dist::C10dCollective>(*c.pg);
}

// The optimizer steps the fp32 masters of a bf16/fp16 policy (the policy's
// own parameters in fp32); gradients are synchronised on what it steps.
void init_optimizer(RunContext& c) {
  c.masters = std::make_unique<MasterWeights>(*c.policy.model);
  c.optimizer = make_adamw(c.masters->params(), c.cfg.trainer.optim, c.shard_over());
  if (c.pg) c.grad_sync = std::make_unique<dist::GradientSynchronizer>(*c.pg, c.masters->params());
  if (c.masters->enabled())
    log().info("mixed precision: {} compute weights, fp32 master weights and AdamW state",
               c10::toString(c.policy.model->dtype()));
}

// Restores policy, reference, optimizer, trainer state and metrics history.
void resume_from(RunContext& c, TrainerState& st, const std::string& path) {
  check_resume_config(c.user_config(), path);
  st = read_trainer_state(path, std::move(st));
  // With LoRA: the base (model/, or model.path when the checkpoint holds none)
  // and the checkpoint's adapter/.
  c.policy = c.lora() ? load_policy_from(c.cfg, path) : load_policy_dir(c.cfg, (fs::path(path) / "model").string());
  if (fs::exists(fs::path(path) / "ref_model"))
    c.ref = load_policy_dir(c.cfg, (fs::path(path) / "ref_model").string()).model;
  init_optimizer(c);
  load_master_weights(*c.masters, (fs::path(path) / "model").string());
  load_optimizer_state(*c.optimizer, path);
  // The metrics history is the checkpoint's: lines written after it (by the
  // run that died) are dropped so every step appears exactly once.
  auto hist = fs::path(path) / "metrics.jsonl";
  write_file_atomic(c.paths.metrics, fs::exists(hist) ? read_file(hist.string()) : std::string());
  log().info("resumed from {} (iteration {})", path, st.iteration);
}

// A fresh run: rank 0 trains the tokenizer (if configured) and builds the
// policy; the other ranks load what it wrote and take its parameters.
void start_fresh(RunContext& c) {
  if (c.checkpoints->latest())
    throw ConfigError("run directory " + c.paths.run_dir + " already has checkpoints: pass --resume auto to "
                      "continue it, or choose another runtime.name");
  if (c.root()) {
    fs::remove(c.paths.metrics);
    c.policy = build_initial_policy(c.cfg, *c.suite, c.paths.run_dir);
    c.barrier();
  } else {
    c.barrier();
    ExperimentConfig rank_cfg = c.cfg;
    if (rank_cfg.tokenizer.train) {
      rank_cfg.tokenizer.train = false;
      rank_cfg.tokenizer.path = (fs::path(c.paths.run_dir) / "tokenizer").string();
    }
    c.policy = build_initial_policy(rank_cfg, *c.suite, c.paths.run_dir);
  }
  attach_policy_lora(c.policy, c.cfg);
  if (c.pg) dist::broadcast_parameters(*c.pg, *c.policy.model, 0);
  init_optimizer(c);
}

// Scalar sums over ranks and the gradient synchronisation of the update.
DistHooks make_dist_hooks(RunContext& c) {
  DistHooks hooks;
  if (!c.pg) return hooks;
  hooks.sum = [&c](double x) {
    std::vector<double> v{x};
    c.collective->all_reduce_sum(v);
    return v[0];
  };
  hooks.min = [&c](double x) {
    std::vector<double> v{x};
    c.collective->all_reduce_min(v);
    return v[0];
  };
  hooks.max = [&c](double x) {
    std::vector<double> v{x};
    c.collective->all_reduce_max(v);
    return v[0];
  };
  hooks.sync_gradients = [&c] {
    if (auto* zero = dynamic_cast<dist::ShardedAdamW*>(c.optimizer.get())) zero->reduce_gradients();
    else c.grad_sync->all_reduce(/*average=*/false);
  };
  if (c.shard_over()) hooks.sum_grad_sq = hooks.sum;
  return hooks;
}

// Everything training keeps on the device exists before the engine sizes its
// KV cache from the memory left (engine.kv_memory_fraction): the reference
// (the policy RL starts from: after SFT its weights are copied in again) and
// AdamW's moments, which LibTorch would create at the first step. The engine
// decodes on the live policy parameters.
void build_rollout(RunContext& c) {
  const auto& cfg = c.cfg;
  if (cfg.actor.kl.enabled && !c.ref && !c.lora()) c.ref = clone_model(c.policy.model);
  if (cfg.engine.kv_memory_fraction > 0) materialize_optimizer_state(*c.optimizer);
  c.engine = std::make_unique<rollout::GenerationEngine>(c.policy.model, c.policy.tokenizer, cfg.engine,
                                                         c.policy.chat->stop_token_ids());
  c.train_ctx = make_agent_context(cfg, c.policy, /*eval=*/false);
  c.eval_ctx = make_agent_context(cfg, c.policy, /*eval=*/true);
  c.estimator = algo::make_estimator(cfg.algorithm);
  c.filters = algo::make_filters(cfg.algorithm);
}

// Builds the whole context; returns the step a resumed run continues after
// (-1 for a fresh run).
int64_t build_run(RunContext& c, TrainerState& st) {
  join_process_group(c);
  c.paths = prepare_run(c.user_config(), c.rv.rank, c.rv.world_size);
  c.suite = envs::make_env_suite(c.cfg.env.name, c.cfg.envs);
  c.train_split = c.cfg.env.train_split.empty() ? c.suite->train_split() : c.cfg.env.train_split;
  c.eval_split = c.cfg.env.eval_split.empty() ? c.suite->eval_split() : c.cfg.env.eval_split;
  c.checkpoints = std::make_unique<CheckpointManager>(c.paths.checkpoints, c.cfg.trainer.keep_checkpoints);
  st = initial_trainer_state(c.cfg.runtime.seed, c.train_split);
  int64_t resume_step = -1;
  if (auto path = CheckpointManager::resolve(c.paths.checkpoints, c.opt.resume)) {
    resume_from(c, st, *path);
    resume_step = st.iteration;
  } else {
    start_fresh(c);
  }
  c.hooks = make_dist_hooks(c);
  c.policy.model->eval();
  c.metrics = c.root() ? make_run_metrics(c.cfg, c.paths, resume_step) : std::make_unique<MetricsLogger>();
  build_rollout(c);
  return resume_step;
}

// ---- Checkpoints and evaluation ------------------------------------------------

// A LoRA checkpoint holds the adapters; the frozen base only when the config
// cannot name it: a from-scratch base, or one an SFT stage folded its
// adapters into. A base loaded from model.path stays there (a 7B base is not
// copied into every checkpoint).
bool lora_base_in_checkpoint(const ExperimentConfig& cfg) { return cfg.model.path.empty() || cfg.sft.enabled; }

// Rank 0 writes checkpoint `st.iteration` (with ZeRO-1 every rank first stages
// its optimizer shard); all ranks meet in a barrier afterwards.
void save_checkpoint(RunContext& c, const TrainerState& st) {
  stage_optimizer_state(*c.optimizer, *c.checkpoints, st.iteration);
  if (!c.root()) {
    c.barrier();
    c.last_checkpoint = (fs::path(c.paths.checkpoints) / ("step_" + std::to_string(st.iteration))).string();
    return;
  }
  auto write = [&](const std::string& dir) {
    if (c.lora()) {
      save_policy_adapter(c.policy, c.cfg, (fs::path(dir) / "adapter").string());
      if (lora_base_in_checkpoint(c.cfg)) save_policy(c.policy, (fs::path(dir) / "model").string());
    } else {
      save_policy(c.policy, (fs::path(dir) / "model").string(), c.masters.get());
    }
    if (c.ref) {
      Policy ref_view = c.policy;
      ref_view.model = c.ref;
      save_policy(ref_view, (fs::path(dir) / "ref_model").string());
    }
    write_optimizer_state(*c.optimizer, *c.checkpoints, st.iteration, dir);
    auto user_cfg = c.user_config();
    write_file_atomic((fs::path(dir) / "config.yaml").string(), config::to_yaml(user_cfg));
    if (fs::exists(c.paths.metrics)) fs::copy_file(c.paths.metrics, fs::path(dir) / "metrics.jsonl");
    write_trainer_state(st, dir);
  };
  c.last_checkpoint = c.checkpoints->save(st.iteration, write);
  log().info("checkpoint written: {}", c.last_checkpoint);
  c.barrier();
}

// Greedy (eval sampling settings) evaluation, and with
// trainer.eval_sampled_per_task > 0 also the sampling policy that RL trains.
// Scalars go into `scalars`; a non-empty `file` writes the reports to
// run_dir/FILE.json and run_dir/FILE_sampled.json. Rank 0 only.
EvalReport run_evaluation(RunContext& c, const std::string& file, std::map<std::string, double>& scalars) {
  const auto& cfg = c.cfg;
  const auto seed = static_cast<uint64_t>(cfg.runtime.seed);
  auto eval = evaluate(*c.engine, c.suite, c.eval_ctx, c.eval_split, cfg.trainer.eval_episodes, seed);
  auto es = eval.scalars();
  scalars.insert(es.begin(), es.end());
  if (!file.empty())
    write_file_atomic((fs::path(c.paths.run_dir) / (file + ".json")).string(), eval.to_json().dump(2));
  if (cfg.trainer.eval_sampled_per_task > 0) {
    auto sampled = evaluate(*c.engine, c.suite, c.train_ctx, c.eval_split, cfg.trainer.eval_episodes, seed,
                            cfg.trainer.eval_sampled_per_task);
    auto ss = sampled.scalars("eval_sampled/");
    scalars.insert(ss.begin(), ss.end());
    if (!file.empty())
      write_file_atomic((fs::path(c.paths.run_dir) / (file + "_sampled.json")).string(), sampled.to_json().dump(2));
  }
  return eval;
}

// ---- SFT warm start ------------------------------------------------------------

std::vector<SftSequence> sft_data(RunContext& c) {
  const auto& cfg = c.cfg;
  if (!cfg.sft.data.empty()) return sft_sequences_from_jsonl(cfg.sft.data, *c.policy.chat, cfg.sft.max_seq_tokens);
  auto demos = rollout::expert_trajectories(*c.suite, c.train_split, cfg.sft.demo_episodes,
                                            mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0xDE70), c.train_ctx,
                                            cfg.sft.demo_mistake_rate);
  auto data = sft_sequences_from_trajectories(demos, cfg.sft.max_seq_tokens,
                                              static_cast<float>(cfg.sft.observation_loss_weight));
  int64_t mistakes = 0;
  for (const auto& d : demos)
    for (const auto& turn : d.turns) mistakes += turn.demo_mistake;
  log().info("SFT on {} expert demonstrations ({} sequences, {} mistake turns)", demos.size(), data.size(), mistakes);
  return data;
}

// Every rank runs the same deterministic SFT (rank 0's result is broadcast);
// RL then starts with fresh moments, masters from the SFT weights and the
// SFT policy as its reference. Rank 0 evaluates the SFT policy (step 0).
// False when a stop signal ended SFT early (nothing else is done then).
bool run_sft_stage(RunContext& c, TrainerState& st) {
  const auto& cfg = c.cfg;
  auto data = sft_data(c);
  Rng sft_rng(mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0x5F7));
  SftReport rep;
  {
    auto guard = c.engine->lock_weights();
    rep = run_sft(c.policy.model, data, cfg.sft, cfg.model.logprob_chunk_tokens, sft_rng,
                  [](int64_t step, const std::map<std::string, double>& m) {
                    if (step % 100 == 0)
                      log().info("SFT step {} | loss {:.4f} | epoch {}", step, m.at("sft/loss"),
                                 static_cast<int64_t>(m.at("sft/epoch")));
                  },
                  // SIGTERM/SIGINT stop SFT at the next step on every rank
                  // (a long SFT would otherwise run to its end first).
                  [&c] { return c.hooks.sum(Trainer::stop_requested().load() ? 1.0 : 0.0) > 0; });
    if (rep.interrupted) {
      // No checkpoint: a partly trained SFT policy is no state to resume
      // from; the next run starts over (--resume auto finds nothing).
      log().warn("interrupted during SFT (step {}): no checkpoint written; the next run starts over", rep.steps);
      return false;
    }
    // With LoRA the SFT adapters become part of the base, and RL trains fresh
    // ones: its reference (the base) is then the SFT policy, as without LoRA.
    if (c.lora()) model::fold_lora_into_base(*c.policy.model, mix_seed(lora_options(cfg).seed, 0x5F7));
  }
  st.sft_done = true;
  if (c.pg) dist::broadcast_parameters(*c.pg, *c.policy.model, 0);
  init_optimizer(c);
  if (cfg.engine.kv_memory_fraction > 0) materialize_optimizer_state(*c.optimizer);
  if (c.ref) copy_model_weights(c.policy.model, c.ref);
  if (c.root()) {
    std::map<std::string, double> scalars;
    auto eval = run_evaluation(c, "eval_sft", scalars);
    scalars["sft/first_epoch_loss"] = rep.first_epoch_loss;
    scalars["sft/last_epoch_loss"] = rep.last_epoch_loss;
    scalars["sft/steps"] = static_cast<double>(rep.steps);
    c.metrics->log(0, scalars);
    const auto sampled = scalars.find("eval_sampled/success_rate");
    log().info("after SFT: {} success {:.3f}{} (loss {:.3f} -> {:.3f})", c.eval_split, eval.success_rate,
               sampled == scalars.end() ? std::string() : fmt::format(", sampled {:.3f}", sampled->second),
               rep.first_epoch_loss, rep.last_epoch_loss);
  }
  c.barrier();
  return true;
}

// ---- One RL iteration --------------------------------------------------------

// 2. pi_old and pi_ref on the exact rollout tokens (old_logprobs = the
//    engine's unless trainer.recompute_old_logprobs).
rollout::TrainBatch score(RunContext& c, const std::vector<rollout::Trajectory>& batch,
                          std::map<std::string, double>& m) {
  const auto& cfg = c.cfg;
  auto train_batch = rollout::build_train_batch(batch);
  if (cfg.trainer.recompute_old_logprobs)
    train_batch.old_logprobs = score_batch(c.policy.model, train_batch, cfg.trainer.micro_batch_tokens,
                                           cfg.model.logprob_chunk_tokens, false)
                                   .logprobs;
  if (c.ref) {
    train_batch.ref_logprobs =
        score_batch(c.ref, train_batch, cfg.trainer.micro_batch_tokens, cfg.model.logprob_chunk_tokens, false)
            .logprobs;
  } else if (c.lora() && cfg.actor.kl.enabled) {  // the reference is the base: the adapters switched off
    auto guard = c.engine->lock_weights();
    model::LoraOffScope base_only(*c.policy.model);
    train_batch.ref_logprobs = score_batch(c.policy.model, train_batch, cfg.trainer.micro_batch_tokens,
                                           cfg.model.logprob_chunk_tokens, false)
                                   .logprobs;
  }
  add_mismatch_metrics(train_batch, cfg.trainer.recompute_old_logprobs, m);
  return train_batch;
}

// 3. Advantages A(i, t) per turn (after the KL reward penalty, when KL is a
//    reward term), broadcast to the generated tokens.
void advantages(RunContext& c, const TrainerState& st, std::vector<rollout::Trajectory>& batch,
                rollout::TrainBatch& train_batch, std::map<std::string, double>& m) {
  const auto& kl = c.cfg.actor.kl;
  if (kl.enabled && kl.use_as == "reward") {
    const double coef = st.counters.kl_coef >= 0 ? st.counters.kl_coef : kl.coef;
    m["actor/kl_reward_penalty"] = algo::apply_kl_reward_penalty(batch, train_batch, coef, kl.type);
  }
  algo::AdvantageResult result;
  auto adv = algo::estimate_and_assign(*c.estimator, batch, train_batch, *c.collective, &result);
  m.insert(adv.begin(), adv.end());
  if (c.cfg.rollout.dump_trajectories)  // beside collect's dump of this iteration (st.iteration + 1)
    algo::write_advantages_jsonl(rollout_dump_path(c.paths, st.iteration + 1, c.collective->rank(),
                                                   c.collective->world_size(), ".advantages.jsonl"),
                                 batch, result);
}

// 4. The PPO update; on a fatal error a checkpoint of the last good state is
//    written first. Then Ziegler et al.'s adaptive KL controller follows the
//    measured KL.
void update(RunContext& c, TrainerState& st, const rollout::TrainBatch& train_batch, int64_t batch_size,
            std::map<std::string, double>& m) {
  const auto& cfg = c.cfg;
  const int64_t total_steps = cfg.trainer.iterations * cfg.actor.ppo_epochs * cfg.actor.mini_batches;
  std::map<std::string, double> upd;
  try {
    upd = ppo_update(c.policy.model, *c.masters, *c.optimizer, train_batch, cfg, total_steps, st.counters, st.rng,
                     c.lock(), c.hooks);
  } catch (const Error&) {
    log().error("stopping: writing a checkpoint of the last good state");
    save_checkpoint(c, st);
    throw;
  }
  m.insert(upd.begin(), upd.end());
  if (cfg.actor.kl.enabled && cfg.actor.kl.adaptive.enabled) {
    algo::KlController kl(cfg.actor.kl);
    if (st.counters.kl_coef >= 0) kl.set_value(st.counters.kl_coef);
    const double measured = m.count("actor/kl_reward_penalty") ? m["actor/kl_reward_penalty"] : m["actor/kl"];
    kl.update(measured, static_cast<double>(batch_size));
    st.counters.kl_coef = kl.value();
    m["actor/kl_coef"] = kl.value();
  }
}

// 5. Parameter agreement across ranks (every 10 iterations and at the end),
//    then evaluation by rank 0 when due.
void check_and_evaluate(RunContext& c, const TrainerState& st, bool last, TrainSummary& summary,
                        std::map<std::string, double>& m) {
  if (c.pg && (st.iteration % 10 == 0 || last)) {
    if (!dist::parameters_in_sync(*c.pg, *c.policy.model))
      throw Error("parameters differ across ranks after iteration " + std::to_string(st.iteration));
    log().info("parameter hash after iteration {}: {:016x}", st.iteration, dist::parameter_hash(*c.policy.model));
  }
  const int64_t every = c.cfg.trainer.eval_every;
  if (last || (every > 0 && st.iteration % every == 0)) {
    if (c.root()) {
      auto eval = run_evaluation(c, last ? "eval" : "", m);
      if (last) summary.final_eval_success = eval.success_rate;
    }
    c.barrier();
  }
}

enum class Next { kContinue, kStop };

// Steps 2-4 of an iteration on a non-empty batch: pi_old / pi_ref, the
// advantages, the update; adds the iteration's timings to `m`.
void train_on_batch(RunContext& c, TrainerState& st, std::vector<rollout::Trajectory>& batch, double rollout_s,
                    std::chrono::steady_clock::time_point t_iter, std::map<std::string, double>& m) {
  auto t0 = std::chrono::steady_clock::now();
  auto train_batch = score(c, batch, m);
  const double old_s = seconds_since(t0);
  advantages(c, st, batch, train_batch, m);
  t0 = std::chrono::steady_clock::now();
  update(c, st, train_batch, static_cast<int64_t>(batch.size()), m);
  const double update_s = seconds_since(t0);
  const double iter_s = seconds_since(t_iter);
  m["time/old_logprob_s"] = old_s;
  m["time/update_s"] = update_s;
  m["time/other_s"] = iter_s - rollout_s - old_s - update_s;
  m["time/iteration_s"] = iter_s;
  m["perf/train_tokens_per_s"] = train_batch.attention_mask.sum().item<double>() / std::max(1e-9, update_s);
}

// One iteration: collect -> score -> advantages -> update -> evaluate /
// checkpoint. `done_here` counts the iterations this process ran.
Next run_iteration(RunContext& c, TrainerState& st, int64_t& done_here, TrainSummary& summary) {
  const auto& cfg = c.cfg;
  const int64_t it = st.iteration + 1;
  const auto t_iter = std::chrono::steady_clock::now();
  std::map<std::string, double> m;

  // 1. Rollout, with refills for groups that dynamic sampling drops.
  auto t0 = std::chrono::steady_clock::now();
  CollectInputs in{c.engine.get(), c.suite, c.train_ctx, &c.filters, &c.paths, c.collective.get()};
  auto batch = collect_groups(in, cfg, st.cursor, it, m);
  const double rollout_s = seconds_since(t0);
  m["time/rollout_s"] = rollout_s;
  if (c.hooks.sum(batch.empty() ? 0.0 : 1.0) == 0.0) {
    // Nothing to train on: no update, but the iteration still counts and
    // evaluates, checkpoints and stops on schedule (a run whose last
    // iterations were all filtered used to end without either).
    log().warn("iteration {}: no trainable trajectories (all failed or filtered)", it);
    m["time/iteration_s"] = seconds_since(t_iter);
  } else {
    train_on_batch(c, st, batch, rollout_s, t_iter, m);
  }
  st.iteration = it;
  ++done_here;

  const bool last = st.iteration == cfg.trainer.iterations;
  check_and_evaluate(c, st, last, summary, m);
  c.metrics->log(st.iteration, m);
  // Ranks stop together: a signal seen by any rank stops all of them.
  const bool stop = c.hooks.sum(Trainer::stop_requested().load() ? 1.0 : 0.0) > 0 ||
                    (c.opt.stop_after_iterations >= 0 && done_here >= c.opt.stop_after_iterations);
  if (last || stop || (cfg.trainer.save_every > 0 && st.iteration % cfg.trainer.save_every == 0))
    save_checkpoint(c, st);
  if (stop && !last) {
    summary.interrupted = Trainer::stop_requested().load();
    return Next::kStop;
  }
  return Next::kContinue;
}

}  // namespace

struct Trainer::State {
  RunContext ctx;
  TrainerState st;
};

Trainer::Trainer(ExperimentConfig cfg, TrainOptions options) : s_(std::make_unique<State>()) {
  s_->ctx.cfg = std::move(cfg);
  s_->ctx.opt = std::move(options);
}
Trainer::~Trainer() = default;

TrainSummary Trainer::run() {
  RunContext& c = s_->ctx;
  TrainerState& st = s_->st;
  const bool resumed = build_run(c, st) >= 0;
  TrainSummary summary;
  summary.run_dir = c.paths.run_dir;
  if (c.cfg.sft.enabled && !st.sft_done && !run_sft_stage(c, st)) {
    summary.interrupted = true;
    c.metrics->flush();
    return summary;
  }
  if (!resumed) save_checkpoint(c, st);

  int64_t done_here = 0;
  while (st.iteration < c.cfg.trainer.iterations) {
    if (c.hooks.sum(stop_requested().load() ? 1.0 : 0.0) > 0) {
      if (CheckpointManager::step_of(c.last_checkpoint) != st.iteration) save_checkpoint(c, st);
      summary.interrupted = true;
      break;
    }
    if (run_iteration(c, st, done_here, summary) == Next::kStop) break;
  }
  summary.iterations_done = st.iteration;
  summary.last_checkpoint = c.last_checkpoint;
  c.metrics->flush();
  return summary;
}

}  // namespace agentrl::train
