// One PPO update at the Qwen2.5-0.5B shape on CPU: full fine-tuning vs LoRA
// rank 16 on all seven linear layers, each with and without the KL reference
// (full: a second copy of the weights; LoRA: the base with the adapters
// off). Time of the reference scoring and of the update (forward + backward
// + AdamW step, gradient checkpointing on), and the process's peak resident
// memory. Peak RSS is per process, so run each case in its own process:
//
//   scripts/bench/lora_memory.sh        (builds lora_bench, runs the 4 cases)
//
// Arguments: {lora (0/1), kl (0/1)}. Batch: 2 sequences of 128 context + 128
// generated tokens, random ids, advantages +-1.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <shared_mutex>
#include <string>

#include "agentrl/core/rng.h"
#include "agentrl/model/lora.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/master_weights.h"
#include "agentrl/train/optim.h"
#include "agentrl/train/ppo_update.h"
#include "agentrl/train/run_setup.h"
#include "bench_models.h"

using namespace agentrl;

namespace {

// VmHWM / VmRSS of this process in GiB (Linux /proc).
double proc_status_gib(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / (1024.0 * 1024.0);
  return -1;
}

rollout::TrainBatch make_batch(int64_t vocab) {
  torch::manual_seed(0);
  std::vector<rollout::Trajectory> trajs;
  for (int k = 0; k < 2; ++k) {
    rollout::Trajectory t;
    rollout::Turn turn;
    auto ids = torch::randint(vocab, {256}, torch::kInt64);
    for (int64_t i = 0; i < 128; ++i) turn.context_tokens.push_back(static_cast<int32_t>(ids[i].item<int64_t>()));
    for (int64_t i = 128; i < 256; ++i) {
      turn.generated_tokens.push_back(static_cast<int32_t>(ids[i].item<int64_t>()));
      turn.logprobs.push_back(-3.f);
      turn.entropies.push_back(1.f);
    }
    t.turns.push_back(turn);
    t.reward = static_cast<float>(k);
    trajs.push_back(t);
  }
  auto b = rollout::build_train_batch(trajs);
  b.advantages = b.loss_mask * torch::tensor({1.f, -1.f}).unsqueeze(1);
  return b;
}

void BM_PpoUpdate05B(benchmark::State& state) {
  const bool lora = state.range(0) != 0, kl = state.range(1) != 0;
  model::TransformerLM m(bench::shape(1));
  m->init_weights(0);
  m->set_gradient_checkpointing(true);
  const double rss_model = proc_status_gib("VmRSS");
  model::TransformerLM ref{nullptr};
  if (lora) {
    model::LoraOptions o;
    o.rank = 16;
    o.alpha = 32;
    model::attach_lora(*m, o);
  } else if (kl) {
    ref = train::clone_model(m);
  }
  train::ExperimentConfig cfg;
  cfg.actor.mini_batches = 1;
  cfg.actor.kl.enabled = kl;
  train::MasterWeights masters(*m);
  auto opt = train::make_adamw(masters.params(), cfg.trainer.optim);
  train::materialize_optimizer_state(*opt);
  int64_t trainable = 0;
  for (const auto& p : masters.params()) trainable += p.numel();
  auto batch = make_batch(m->args().vocab_size);
  train::UpdateCounters counters;
  Rng rng(1);
  std::shared_mutex mu;
  double ref_s = 0, update_s = 0;
  for (auto _ : state) {
    batch.old_logprobs = train::score_batch(m, batch, 4096, 1024, false).logprobs;
    auto t0 = std::chrono::steady_clock::now();
    if (kl && lora) {
      model::LoraOffScope base(*m);
      batch.ref_logprobs = train::score_batch(m, batch, 4096, 1024, false).logprobs;
    } else if (kl) {
      batch.ref_logprobs = train::score_batch(ref, batch, 4096, 1024, false).logprobs;
    }
    auto t1 = std::chrono::steady_clock::now();
    train::ppo_update(m, masters, *opt, batch, cfg, 100, counters, rng,
                      [&] { return std::unique_lock<std::shared_mutex>(mu); });
    auto t2 = std::chrono::steady_clock::now();
    ref_s += std::chrono::duration<double>(t1 - t0).count();
    update_s += std::chrono::duration<double>(t2 - t1).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["ref_s"] = ref_s / n;
  state.counters["update_s"] = update_s / n;
  state.counters["trainable_M"] = static_cast<double>(trainable) / 1e6;
  state.counters["rss_model_GiB"] = rss_model;
  state.counters["peak_rss_GiB"] = proc_status_gib("VmHWM");
  state.SetLabel(std::string(lora ? "lora r16 all-linear" : "full") + (kl ? " + KL ref" : ""));
}
BENCHMARK(BM_PpoUpdate05B)
    ->ArgNames({"lora", "kl"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Iterations(2)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
