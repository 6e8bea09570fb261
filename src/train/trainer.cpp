#include "agentrl/train/trainer.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/filter.h"
#include "agentrl/algo/policy_loss.h"
#include "agentrl/core/collective.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/logging.h"
#include "agentrl/core/metrics.h"
#include "agentrl/dist/device_binding.h"
#include "agentrl/dist/process_group.h"
#include "agentrl/dist/zero_optimizer.h"
#include "agentrl/envs/registry.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/rollout/demos.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/rollout/rollout_pool.h"
#include "agentrl/rollout/trajectory_io.h"
#include "agentrl/train/checkpoint.h"
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

struct Trainer::State {
  ExperimentConfig cfg;
  TrainOptions opt;
  dist::Rendezvous rv;
  std::unique_ptr<dist::ProcessGroup> pg;
  std::unique_ptr<Collective> collective;
  std::unique_ptr<dist::GradientSynchronizer> grad_sync;
  bool root = true;
  RunPaths paths;
  std::shared_ptr<const envs::EnvSuite> suite;
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
  TaskCursor cursor;
  Rng rng{0};
  UpdateCounters counters;
  int64_t iteration = 0;
  bool sft_done = false;
  std::string configured_device;  // model.device as the user wrote it (cfg holds this rank's device)
  // The config as the user wrote it: what checkpoints save and resume compares.
  ExperimentConfig user_config() const {
    ExperimentConfig c = cfg;
    c.model.device = configured_device;
    return c;
  }
  std::string last_checkpoint;
};

Trainer::Trainer(ExperimentConfig cfg, TrainOptions options) : s_(std::make_unique<State>()) {
  s_->cfg = std::move(cfg);
  s_->opt = std::move(options);
}
Trainer::~Trainer() = default;

namespace {

nlohmann::json state_json(const Trainer&, int64_t iteration, bool sft_done, const TaskCursor& c, const Rng& rng,
                          const UpdateCounters& k) {
  nlohmann::json j;
  j["iteration"] = iteration;
  j["sft_done"] = sft_done;
  j["cursor"] = {{"split", c.split}, {"seed", c.seed}, {"epoch", c.epoch}, {"position", c.position}};
  j["rng"] = rng.state();
  j["counters"] = {{"optimizer_steps", k.optimizer_steps},
                   {"consecutive_skips", k.consecutive_skips},
                   {"kl_coef", k.kl_coef}};
  return j;
}

}  // namespace

TrainSummary Trainer::run() {
  State& s = *s_;
  auto& cfg = s.cfg;
  auto save_checkpoint = [&](State& s, const Trainer& self) {
    stage_optimizer_state(*s.optimizer, *s.checkpoints, s.iteration);  // ZeRO-1 shards of every rank
    if (!s.root) {
      if (s.pg) s.pg->barrier();
      s.last_checkpoint = (fs::path(s.paths.checkpoints) / ("step_" + std::to_string(s.iteration))).string();
      return;
    }
    auto write = [&](const std::string& dir) {
      save_policy(s.policy, (fs::path(dir) / "model").string(), s.masters.get());
      if (s.ref) {
        Policy ref_view = s.policy;
        ref_view.model = s.ref;
        save_policy(ref_view, (fs::path(dir) / "ref_model").string());
      }
      write_optimizer_state(*s.optimizer, *s.checkpoints, s.iteration, dir);
      auto user_cfg = s.user_config();
      write_file_atomic((fs::path(dir) / "config.yaml").string(), config::to_yaml(user_cfg));
      if (fs::exists(s.paths.metrics)) fs::copy_file(s.paths.metrics, fs::path(dir) / "metrics.jsonl");
      write_file_atomic((fs::path(dir) / "trainer_state.json").string(),
                        state_json(self, s.iteration, s.sft_done, s.cursor, s.rng, s.counters).dump(2));
    };
    s.last_checkpoint = s.checkpoints->save(s.iteration, write);
    log().info("checkpoint written: {}", s.last_checkpoint);
    if (s.pg) s.pg->barrier();
  };
  s.rv = dist::rendezvous_from_env();
  // One rank per GPU: this process's device, made current before any CUDA
  // work. The config keeps the device as the user wrote it (checkpoints save
  // that; a resumed run chooses again).
  s.configured_device = cfg.model.device;
  cfg.model.device = dist::bind_rank_device(cfg.model.device, s.rv.world_size, s.rv.local_rank).str();
  if (s.rv.world_size > 1) {
    const auto device = model::resolve_device(cfg.model.device);
    const std::chrono::milliseconds timeout = std::chrono::seconds(cfg.dist.timeout_s);
    s.pg = s.opt.make_process_group ? s.opt.make_process_group(s.rv, device, timeout)
                                    : std::make_unique<dist::ProcessGroup>(s.rv, device, timeout);
    s.collective = std::make_unique<dist::C10dCollective>(*s.pg);
  } else {
    s.collective = std::make_unique<LocalCollective>();
  }
  s.root = s.rv.rank == 0;
  auto barrier = [&s] {
    if (s.pg) s.pg->barrier();
  };
  dist::ProcessGroup* const shard_over = cfg.dist.shard_optimizer ? s.pg.get() : nullptr;  // ZeRO-1
  // The optimizer steps the fp32 masters of a bf16/fp16 policy (the policy's
  // own parameters in fp32); gradients are synchronised on what it steps.
  auto init_optimizer = [&] {
    s.masters = std::make_unique<MasterWeights>(*s.policy.model);
    s.optimizer = make_adamw(s.masters->params(), cfg.trainer.optim, shard_over);
    if (s.pg) s.grad_sync = std::make_unique<dist::GradientSynchronizer>(*s.pg, s.masters->params());
    if (s.masters->enabled())
      log().info("mixed precision: {} compute weights, fp32 master weights and AdamW state",
                 c10::toString(s.policy.model->dtype()));
  };
  s.paths = prepare_run(s.user_config(), s.rv.rank, s.rv.world_size);
  s.suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  const std::string train_split = cfg.env.train_split.empty() ? s.suite->train_split() : cfg.env.train_split;
  const std::string eval_split = cfg.env.eval_split.empty() ? s.suite->eval_split() : cfg.env.eval_split;
  s.checkpoints = std::make_unique<CheckpointManager>(s.paths.checkpoints, cfg.trainer.keep_checkpoints);
  s.rng = Rng(mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0x7A11));
  s.cursor.split = train_split;
  s.cursor.seed = mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0xC0C5);

  int64_t resume_step = -1;
  auto resume_path = CheckpointManager::resolve(s.paths.checkpoints, s.opt.resume);
  if (resume_path) {
    check_resume_config(s.user_config(), *resume_path);
    auto st = nlohmann::json::parse(read_file((fs::path(*resume_path) / "trainer_state.json").string()));
    s.policy = load_policy_dir(cfg, (fs::path(*resume_path) / "model").string());
    if (fs::exists(fs::path(*resume_path) / "ref_model"))
      s.ref = load_policy_dir(cfg, (fs::path(*resume_path) / "ref_model").string()).model;
    s.iteration = st.at("iteration").get<int64_t>();
    s.sft_done = st.at("sft_done").get<bool>();
    s.cursor.epoch = st.at("cursor").at("epoch").get<int64_t>();
    s.cursor.position = st.at("cursor").at("position").get<int64_t>();
    s.rng.set_state(st.at("rng").get<std::string>());
    s.counters.optimizer_steps = st.at("counters").at("optimizer_steps").get<int64_t>();
    s.counters.consecutive_skips = st.at("counters").at("consecutive_skips").get<int64_t>();
    s.counters.kl_coef = st.at("counters").at("kl_coef").get<double>();
    init_optimizer();
    load_master_weights(*s.masters, (fs::path(*resume_path) / "model").string());
    load_optimizer_state(*s.optimizer, *resume_path);
    // The metrics history is the checkpoint's: lines written after it (by the
    // run that died) are dropped so every step appears exactly once.
    auto hist = fs::path(*resume_path) / "metrics.jsonl";
    write_file_atomic(s.paths.metrics, fs::exists(hist) ? read_file(hist.string()) : std::string());
    resume_step = s.iteration;
    log().info("resumed from {} (iteration {})", *resume_path, s.iteration);
  } else {
    if (s.checkpoints->latest())
      throw ConfigError("run directory " + s.paths.run_dir + " already has checkpoints: pass --resume auto to "
                        "continue it, or choose another runtime.name");
    // A fresh run starts a fresh metrics history. Rank 0 trains the
    // tokenizer (if configured); the other ranks load what it wrote.
    if (s.root) {
      fs::remove(s.paths.metrics);
      s.policy = build_initial_policy(cfg, *s.suite, s.paths.run_dir);
      barrier();
    } else {
      barrier();
      ExperimentConfig c = cfg;
      if (c.tokenizer.train) {
        c.tokenizer.train = false;
        c.tokenizer.path = (fs::path(s.paths.run_dir) / "tokenizer").string();
      }
      s.policy = build_initial_policy(c, *s.suite, s.paths.run_dir);
    }
    if (s.pg) dist::broadcast_parameters(*s.pg, *s.policy.model, 0);
    init_optimizer();
  }
  DistHooks hooks;
  if (s.pg) {
    hooks.sum = [&s](double x) {
      std::vector<double> v{x};
      s.collective->all_reduce_sum(v);
      return v[0];
    };
    hooks.min = [&s](double x) {
      std::vector<double> v{x};
      s.collective->all_reduce_min(v);
      return v[0];
    };
    hooks.sync_gradients = [&s] {
      if (auto* zero = dynamic_cast<dist::ShardedAdamW*>(s.optimizer.get())) zero->reduce_gradients();
      else s.grad_sync->all_reduce(/*average=*/false);
    };
    if (shard_over) hooks.sum_grad_sq = hooks.sum;
  }
  s.policy.model->eval();
  s.metrics = s.root ? make_run_metrics(cfg, s.paths, resume_step) : std::make_unique<MetricsLogger>();

  // Generation engine on the live policy parameters.
  // Everything training keeps on the device exists before the engine sizes
  // its KV cache from the memory left (engine.kv_memory_fraction): the
  // reference (the policy RL starts from: after SFT its weights are copied
  // in again) and AdamW's moments, which LibTorch would create at the first step.
  if (cfg.actor.kl.enabled && !s.ref) s.ref = clone_model(s.policy.model);
  if (cfg.engine.kv_memory_fraction > 0) materialize_optimizer_state(*s.optimizer);
  s.engine = std::make_unique<rollout::GenerationEngine>(s.policy.model, s.policy.tokenizer, cfg.engine,
                                                         s.policy.chat->stop_token_ids());
  s.train_ctx = make_agent_context(cfg, s.policy, /*eval=*/false);
  s.eval_ctx = make_agent_context(cfg, s.policy, /*eval=*/true);
  s.estimator = algo::make_estimator(cfg.algorithm);
  s.filters = algo::make_filters(cfg.algorithm);
  const auto lock = [&s] { return s.engine->lock_weights(); };

  TrainSummary summary;
  summary.run_dir = s.paths.run_dir;

  // Greedy (eval sampling settings) evaluation, and with trainer.eval_sampled_per_task > 0
  // also the sampling policy that RL trains. Scalars go into `scalars`; a non-empty
  // `file` writes the reports to run_dir/FILE.json and run_dir/FILE_sampled.json.
  auto run_evaluation = [&](const std::string& file, std::map<std::string, double>& scalars) {
    const auto seed = static_cast<uint64_t>(cfg.runtime.seed);
    auto eval = evaluate(*s.engine, s.suite, s.eval_ctx, eval_split, cfg.trainer.eval_episodes, seed);
    auto es = eval.scalars();
    scalars.insert(es.begin(), es.end());
    if (!file.empty())
      write_file_atomic((fs::path(s.paths.run_dir) / (file + ".json")).string(), eval.to_json().dump(2));
    if (cfg.trainer.eval_sampled_per_task > 0) {
      auto sampled = evaluate(*s.engine, s.suite, s.train_ctx, eval_split, cfg.trainer.eval_episodes, seed,
                              cfg.trainer.eval_sampled_per_task);
      auto ss = sampled.scalars("eval_sampled/");
      scalars.insert(ss.begin(), ss.end());
      if (!file.empty())
        write_file_atomic((fs::path(s.paths.run_dir) / (file + "_sampled.json")).string(),
                          sampled.to_json().dump(2));
    }
    return eval;
  };

  // ---- SFT warm start ------------------------------------------------------
  if (cfg.sft.enabled && !s.sft_done) {
    std::vector<SftSequence> data;
    if (cfg.sft.data.empty()) {
      auto demos = rollout::expert_trajectories(*s.suite, train_split, cfg.sft.demo_episodes,
                                                mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0xDE70), s.train_ctx,
                                                cfg.sft.demo_mistake_rate);
      data = sft_sequences_from_trajectories(demos, cfg.sft.max_seq_tokens);
      int64_t mistakes = 0;
      for (const auto& d : demos)
        for (const auto& turn : d.turns) mistakes += turn.demo_mistake;
      log().info("SFT on {} expert demonstrations ({} sequences, {} mistake turns)", demos.size(), data.size(),
                 mistakes);
    } else {
      data = sft_sequences_from_jsonl(cfg.sft.data, *s.policy.chat, cfg.sft.max_seq_tokens);
    }
    Rng sft_rng(mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0x5F7));
    SftReport rep;
    {
      auto guard = lock();
      rep = run_sft(s.policy.model, data, cfg.sft, cfg.model.logprob_chunk_tokens, sft_rng,
                    [](int64_t step, const std::map<std::string, double>& m) {
                      if (step % 100 == 0)
                        log().info("SFT step {} | loss {:.4f} | epoch {}", step, m.at("sft/loss"),
                                   static_cast<int64_t>(m.at("sft/epoch")));
                    });
    }
    s.sft_done = true;
    // Every rank ran the same deterministic SFT; rank 0's result is the one.
    if (s.pg) dist::broadcast_parameters(*s.pg, *s.policy.model, 0);
    init_optimizer();  // RL starts with fresh moments (and masters from the SFT weights)
    if (cfg.engine.kv_memory_fraction > 0) materialize_optimizer_state(*s.optimizer);
    if (s.ref) copy_model_weights(s.policy.model, s.ref);  // the reference is the policy RL starts from
    if (s.root) {
      std::map<std::string, double> scalars;
      auto eval = run_evaluation("eval_sft", scalars);
      scalars["sft/first_epoch_loss"] = rep.first_epoch_loss;
      scalars["sft/last_epoch_loss"] = rep.last_epoch_loss;
      scalars["sft/steps"] = static_cast<double>(rep.steps);
      s.metrics->log(0, scalars);
      const auto sampled = scalars.find("eval_sampled/success_rate");
      log().info("after SFT: {} success {:.3f}{} (loss {:.3f} -> {:.3f})", eval_split, eval.success_rate,
                 sampled == scalars.end() ? std::string() : fmt::format(", sampled {:.3f}", sampled->second),
                 rep.first_epoch_loss, rep.last_epoch_loss);
    }
    barrier();
  }
  if (!resume_path) save_checkpoint(s, *this);

  // ---- RL ------------------------------------------------------------------
  const int64_t total_steps = cfg.trainer.iterations * cfg.actor.ppo_epochs * cfg.actor.mini_batches;
  int64_t done_here = 0;
  while (s.iteration < cfg.trainer.iterations) {
    if (hooks.sum(stop_requested().load() ? 1.0 : 0.0) > 0) {
      if (CheckpointManager::step_of(s.last_checkpoint) != s.iteration) save_checkpoint(s, *this);
      summary.interrupted = true;
      break;
    }
    const int64_t it = s.iteration + 1;
    auto t_iter = std::chrono::steady_clock::now();
    std::map<std::string, double> m;

    // 1. Rollout, with refills for groups that dynamic sampling drops.
    auto t0 = std::chrono::steady_clock::now();
    std::vector<rollout::Trajectory> batch =
        collect_groups(*s.engine, s.suite, s.train_ctx, s.filters, cfg, s.cursor, it, m, s.paths, *s.collective);
    const double rollout_s = seconds_since(t0);
    if (hooks.sum(batch.empty() ? 0.0 : 1.0) == 0.0) {
      log().warn("iteration {}: no trainable trajectories (all failed or filtered)", it);
      s.iteration = it;
      s.metrics->log(it, m);
      continue;
    }

    // 2. pi_old and pi_ref on the exact rollout tokens.
    t0 = std::chrono::steady_clock::now();
    auto train_batch = rollout::build_train_batch(batch);  // old_logprobs = the engine's
    if (cfg.trainer.recompute_old_logprobs)
      train_batch.old_logprobs = score_batch(s.policy.model, train_batch, cfg.trainer.micro_batch_tokens,
                                             cfg.model.logprob_chunk_tokens, false)
                                     .logprobs;
    if (s.ref)
      train_batch.ref_logprobs = score_batch(s.ref, train_batch, cfg.trainer.micro_batch_tokens,
                                             cfg.model.logprob_chunk_tokens, false)
                                     .logprobs;
    add_mismatch_metrics(train_batch, cfg.trainer.recompute_old_logprobs, m);
    const double old_s = seconds_since(t0);

    // 3. Advantages A(i, t) per turn (after the KL reward penalty, when KL is
    //    a reward term), broadcast to the generated tokens.
    if (cfg.actor.kl.enabled && cfg.actor.kl.use_as == "reward") {
      const double coef = s.counters.kl_coef >= 0 ? s.counters.kl_coef : cfg.actor.kl.coef;
      m["actor/kl_reward_penalty"] = algo::apply_kl_reward_penalty(batch, train_batch, coef, cfg.actor.kl.type);
    }
    auto adv = algo::estimate_and_assign(*s.estimator, batch, train_batch, *s.collective);
    m.insert(adv.begin(), adv.end());

    // 4. PPO update.
    t0 = std::chrono::steady_clock::now();
    std::map<std::string, double> upd;
    try {
      upd = ppo_update(s.policy.model, *s.masters, *s.optimizer, train_batch, cfg, total_steps, s.counters, s.rng, lock, hooks);
    } catch (const Error&) {
      log().error("stopping: writing a checkpoint of the last good state");
      save_checkpoint(s, *this);
      throw;
    }
    const double update_s = seconds_since(t0);
    m.insert(upd.begin(), upd.end());
    if (cfg.actor.kl.enabled && cfg.actor.kl.adaptive.enabled) {
      // Ziegler et al.'s controller: the coefficient follows the measured KL.
      algo::KlController kl(cfg.actor.kl);
      if (s.counters.kl_coef >= 0) kl.set_value(s.counters.kl_coef);
      const double measured = m.count("actor/kl_reward_penalty") ? m["actor/kl_reward_penalty"] : m["actor/kl"];
      kl.update(measured, static_cast<double>(batch.size()));
      s.counters.kl_coef = kl.value();
      m["actor/kl_coef"] = kl.value();
    }
    const double iter_s = seconds_since(t_iter);
    m["time/rollout_s"] = rollout_s;
    m["time/old_logprob_s"] = old_s;
    m["time/update_s"] = update_s;
    m["time/other_s"] = iter_s - rollout_s - old_s - update_s;
    m["time/iteration_s"] = iter_s;
    m["perf/train_tokens_per_s"] = train_batch.attention_mask.sum().item<double>() / std::max(1e-9, update_s);
    s.iteration = it;
    ++done_here;

    // 5. Evaluation and checkpoint.
    const bool last = s.iteration == cfg.trainer.iterations;
    if (s.pg && (s.iteration % 10 == 0 || last)) {
      if (!dist::parameters_in_sync(*s.pg, *s.policy.model))
        throw Error("parameters differ across ranks after iteration " + std::to_string(s.iteration));
      log().info("parameter hash after iteration {}: {:016x}", s.iteration, dist::parameter_hash(*s.policy.model));
    }
    if (last || (cfg.trainer.eval_every > 0 && s.iteration % cfg.trainer.eval_every == 0)) {
      if (s.root) {
        auto eval = run_evaluation(last ? "eval" : "", m);
        if (last) summary.final_eval_success = eval.success_rate;
      }
      barrier();
    }
    s.metrics->log(s.iteration, m);
    // Ranks stop together: a signal seen by any rank stops all of them.
    const bool stop = hooks.sum(stop_requested().load() ? 1.0 : 0.0) > 0 ||
                      (s.opt.stop_after_iterations >= 0 && done_here >= s.opt.stop_after_iterations);
    if (last || stop || (cfg.trainer.save_every > 0 && s.iteration % cfg.trainer.save_every == 0))
      save_checkpoint(s, *this);
    if (stop && !last) {
      summary.interrupted = stop_requested().load();
      break;
    }
  }
  summary.iterations_done = s.iteration;
  summary.last_checkpoint = s.last_checkpoint;
  s.metrics->flush();
  return summary;
}

}  // namespace agentrl::train
