#include "agentrl/train/ppo_update.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "agentrl/algo/diagnostics.h"
#include "agentrl/core/error.h"
#include "agentrl/core/logging.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/optim.h"

namespace agentrl::train {

TokenStatsCpu score_batch(model::TransformerLM& model, const rollout::TrainBatch& batch, int64_t token_budget,
                          int64_t chunk_tokens, bool want_prob_sq) {
  torch::NoGradGuard no_grad;
  const auto N = batch.rows(), T = batch.input_ids.size(1);
  TokenStatsCpu out;
  out.logprobs = torch::zeros({N, T}, torch::kFloat32);
  out.entropy = torch::zeros({N, T}, torch::kFloat32);
  if (want_prob_sq) out.prob_sq_sum = torch::zeros({N, T}, torch::kFloat32);
  const auto device = model->device();
  for (const auto& rows : rollout::plan_micro_batches(batch, token_budget)) {
    auto mb = rollout::select_rows(batch, rows);
    model::LogprobOptions o;
    o.chunk_tokens = chunk_tokens;
    o.want_prob_sq = want_prob_sq;
    o.only = mb.loss_mask;  // every user of these stats reads them under the loss mask
    o.allowed = &mb.allowed_tokens;  // choice-mode rollouts: the engine's masked distributions
    auto s = model::logprobs_and_entropy(model, mb.input_ids.to(device), mb.attention_mask.to(device),
                                         mb.position_ids.to(device), o);
    auto idx = torch::tensor(rows, torch::kInt64);
    const auto t = mb.input_ids.size(1);
    out.logprobs.index_put_({idx, torch::indexing::Slice(0, t)}, s.logprobs.to(torch::kCPU, torch::kFloat32));
    out.entropy.index_put_({idx, torch::indexing::Slice(0, t)}, s.entropy.to(torch::kCPU, torch::kFloat32));
    if (want_prob_sq)
      out.prob_sq_sum.index_put_({idx, torch::indexing::Slice(0, t)}, s.prob_sq_sum.to(torch::kCPU, torch::kFloat32));
  }
  return out;
}

namespace {

// Metrics kept as float64 0-d tensors on the device: no host copy inside the
// update loop.
using DeviceMetrics = std::map<std::string, torch::Tensor>;

// Folds one micro-batch's metrics into its mini-batch's: loss terms and token
// counts add, token means add weighted by `share` (the micro-batch's part of
// the mini-batch's loss tokens), ratio_max takes the max.
void add_micro_batch(DeviceMetrics& step, const DeviceMetrics& m, double share) {
  for (const auto& [name, v] : m) {
    auto& s = step["actor/" + name];
    switch (algo::metric_combine(name)) {
      case algo::MetricCombine::kSum: s = s.defined() ? s + v : v; break;
      case algo::MetricCombine::kTokenMean: s = s.defined() ? s + v * share : v * share; break;
      case algo::MetricCombine::kMax: s = s.defined() ? torch::maximum(s, v) : v; break;
      case algo::MetricCombine::kValue: s = v; break;
    }
  }
}

// Folds one optimizer step's metrics into the update's: summed (averaged over
// the steps at the end), ratio_max as the max.
void add_step(DeviceMetrics& sums, const DeviceMetrics& step) {
  for (const auto& [key, v] : step) {
    auto& s = sums[key];
    const bool is_max = algo::metric_combine(key.substr(6)) == algo::MetricCombine::kMax;
    s = !s.defined() ? v : is_max ? torch::maximum(s, v) : s + v;
  }
}

}  // namespace

namespace {

// The update's metrics over all ranks, in the same order on every rank (the
// names follow from the config, whatever this rank's data): sums and token
// means add, ratio_max takes the max. A rank without the metric adds nothing.
std::map<std::string, double> combine_over_ranks(const std::map<std::string, double>& local,
                                                 const algo::ActorConfig& actor, const DistHooks& dist) {
  std::map<std::string, double> out;
  auto names = algo::policy_loss_metric_names(actor, /*with_entropy=*/true);
  names.push_back("logit_update_norm");
  for (const auto& name : names) {
    const std::string key = "actor/" + name;
    const auto it = local.find(key);
    const auto how = algo::metric_combine(name);
    if (how == algo::MetricCombine::kMax) {
      const double v = dist.max(it == local.end() ? -std::numeric_limits<double>::infinity() : it->second);
      out[key] = std::isfinite(v) ? v : 0.0;
    } else if (how == algo::MetricCombine::kValue) {
      out[key] = it == local.end() ? 0.0 : it->second;
    } else {
      out[key] = dist.sum(it == local.end() ? 0.0 : it->second);
    }
  }
  return out;
}

// The loss of one micro-batch (verl's agg modes over the mini-batch's global
// normalisers, so the micro-batch losses sum to the mini-batch loss):
//   L = pg_loss(ratio clip) + beta * KL - c_H * H.
algo::PolicyLossOutput micro_batch_loss(model::TransformerLM& model, const rollout::TrainBatch& micro,
                                        const ExperimentConfig& cfg, double tokens, double sequences,
                                        double kl_coef) {
  const auto device = model->device();
  model::LogprobOptions o;
  o.chunk_tokens = cfg.model.logprob_chunk_tokens;
  o.entropy_grad = cfg.actor.entropy_coef != 0.0;
  o.want_prob_sq = true;  // for the logit-update norm
  o.only = micro.loss_mask;  // the loss reads no other position
  o.allowed = &micro.allowed_tokens;  // choice-mode rollouts: the ratio of the masked distributions
  o.want_free_logprobs = cfg.actor.choice_mass_coef != 0.0;
  // pi_theta(a_t | s_t) for every token of the micro-batch.
  auto stats = model::logprobs_and_entropy(model, micro.input_ids.to(device), micro.attention_mask.to(device),
                                           micro.position_ids.to(device), o);
  algo::PolicyLossInputs in;
  in.logprobs = stats.logprobs.to(torch::kFloat32);
  in.entropy = stats.entropy.to(torch::kFloat32);
  if (stats.free_logprobs.defined()) in.free_logprobs = stats.free_logprobs.to(torch::kFloat32);
  in.old_logprobs = micro.old_logprobs.to(device);
  in.behaviour_logprobs = micro.behaviour_logprobs.to(device);
  in.advantages = micro.advantages.to(device);
  in.loss_mask = micro.loss_mask.to(device);
  if (micro.ref_logprobs.defined()) in.ref_logprobs = micro.ref_logprobs.to(device);
  in.global_tokens = tokens;
  in.global_sequences = sequences;
  in.kl_coef = kl_coef;
  in.host_metrics = false;
  auto out = algo::compute_policy_loss(in, cfg.actor);
  // Li (arXiv 2506.12912): the size of the logit change this step induces,
  // |A| * ||e_c - p||, as a mean over the micro-batch's loss tokens.
  const auto count = in.loss_mask.sum().to(torch::kFloat64).clamp_min(1.0);
  out.metric_tensors["logit_update_norm"] =
      algo::logit_update_norm_per_token(in.logprobs, stats.prob_sq_sum, in.advantages, in.loss_mask).sum() / count;
  return out;
}

struct Accumulated {
  DeviceMetrics metrics;    // weighted by each micro-batch's share of the loss tokens
  torch::Tensor nonfinite;  // count of non-finite micro-batch losses, on the device
};

// Gradient accumulation over the token-budgeted micro-batches of one
// mini-batch, into the masters' gradients (zeroed first: all of the model's
// gradients, also those a sharded optimizer does not own).
Accumulated accumulate(model::TransformerLM& model, MasterWeights& masters, const rollout::TrainBatch& mb,
                       bool empty, const ExperimentConfig& cfg, double tokens, double sequences, double kl_coef) {
  masters.zero_grad();
  Accumulated acc;
  acc.nonfinite = torch::zeros({}, torch::TensorOptions().device(model->device()).dtype(torch::kFloat32));
  if (empty) return acc;  // a rank whose shard is empty still joins every collective
  for (const auto& rows : rollout::plan_micro_batches(mb, cfg.trainer.micro_batch_tokens)) {
    auto micro = rollout::select_rows(mb, rows);
    auto out = micro_batch_loss(model, micro, cfg, tokens, sequences, kl_coef);
    acc.nonfinite.add_(torch::isfinite(out.loss.detach()).logical_not().to(torch::kFloat32));
    out.loss.backward();
    masters.accumulate_gradients();
    add_micro_batch(acc.metrics, out.metric_tensors, micro.loss_mask.sum().item<double>() / tokens);  // CPU mask
  }
  return acc;
}

// After a non-finite loss or gradient on any rank, all ranks skip the step
// together; trainer.max_nonfinite_steps skips in a row stop the run.
void skip_step(MasterWeights& masters, const ExperimentConfig& cfg, double grad_norm, UpdateCounters& counters) {
  masters.zero_grad();
  ++counters.consecutive_skips;
  log().warn("non-finite loss or gradient (grad norm {}): optimizer step skipped ({} in a row)", grad_norm,
             counters.consecutive_skips);
  if (counters.consecutive_skips >= cfg.trainer.max_nonfinite_steps)
    throw Error("training stopped: " + std::to_string(counters.consecutive_skips) +
                " consecutive optimizer steps had a non-finite loss or gradient (trainer.max_nonfinite_steps)");
}

// The AdamW step at the scheduled learning rate, under the engine's weight
// lock; the stepped masters become the compute weights the engine samples from.
void take_step(MasterWeights& masters, torch::optim::Optimizer& optimizer, const ExperimentConfig& cfg,
               int64_t total_optimizer_steps, UpdateCounters& counters, const WeightLock& lock_weights) {
  counters.consecutive_skips = 0;
  {
    auto lock = lock_weights();
    set_lr(optimizer, lr_at(cfg.trainer.optim, counters.optimizer_steps, total_optimizer_steps));
    optimizer.step();
    masters.copy_to_model();
  }
  ++counters.optimizer_steps;
}

// q-quantile with linear interpolation between order statistics (numpy's default).
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// This epoch's row order, shuffled with the trainer's own stream (resumable).
std::vector<int64_t> shuffled_rows(int64_t n, Rng& rng) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i) - 1))]);
  return order;
}

}  // namespace

std::map<std::string, double> ppo_update(model::TransformerLM& model, MasterWeights& masters,
                                         torch::optim::Optimizer& optimizer, const rollout::TrainBatch& batch,
                                         const ExperimentConfig& cfg, int64_t total_optimizer_steps,
                                         UpdateCounters& counters, Rng& rng, const WeightLock& lock_weights,
                                         const DistHooks& dist) {
  const auto& actor = cfg.actor;
  const int64_t N = batch.rows();
  DeviceMetrics sums;
  double weight_total = 0.0;
  std::vector<double> grad_norms;  // before clipping, of the steps taken
  int64_t steps = 0, skipped = 0;
  model->train();
  for (int64_t epoch = 0; epoch < actor.ppo_epochs; ++epoch) {
    const auto order = shuffled_rows(N, rng);
    // Every rank takes the same number of optimizer steps: bounded by the smallest shard.
    const int64_t n_mini =
        std::max<int64_t>(1, std::min<int64_t>(actor.mini_batches, static_cast<int64_t>(dist.min(double(N)))));
    for (int64_t m = 0; m < n_mini; ++m) {
      std::vector<int64_t> mini(order.begin() + m * N / n_mini, order.begin() + (m + 1) * N / n_mini);
      auto mb = mini.empty() ? rollout::TrainBatch{} : rollout::select_rows(batch, mini);
      // Normalisers of the whole mini-batch over all ranks: summing micro-batch
      // losses gives the mini-batch loss, summing gradients over ranks the global one.
      const double tokens = dist.sum(mini.empty() ? 0.0 : mb.loss_mask.sum().item<double>());
      const double sequences = dist.sum(static_cast<double>(mini.size()));
      if (tokens == 0) continue;
      auto acc = accumulate(model, masters, mb, mini.empty(), cfg, tokens, sequences, counters.kl_coef);
      dist.sync_gradients();
      // Clipping by the global norm: with ZeRO-1 the optimizer holds this
      // rank's parameters only, and sum_grad_sq adds the ranks' squares.
      const double grad_norm = clip_grad_norm(optimizer_parameters(optimizer), actor.grad_clip, dist.sum_grad_sq);
      // A non-finite gradient anywhere is everywhere after the all-reduce;
      // the loss flags are summed explicitly.
      const bool finite = dist.sum(acc.nonfinite.item<double>()) == 0.0;
      if (!finite || !std::isfinite(grad_norm)) {
        ++skipped;
        skip_step(masters, cfg, grad_norm, counters);
        continue;
      }
      take_step(masters, optimizer, cfg, total_optimizer_steps, counters, lock_weights);
      ++steps;
      grad_norms.push_back(grad_norm);
      add_step(sums, acc.metrics);
      weight_total += 1.0;
    }
  }
  model->eval();
  auto out = combine_over_ranks(algo::metrics_to_host(sums), cfg.actor, dist);
  for (auto& [k, v] : out)
    if (algo::metric_combine(k.substr(6)) != algo::MetricCombine::kMax) v = weight_total > 0 ? v / weight_total : 0.0;
  if (weight_total == 0) out.clear();  // no step taken: no loss to report
  if (weight_total > 0) {
    out["actor/grad_norm"] = std::accumulate(grad_norms.begin(), grad_norms.end(), 0.0) / weight_total;
    // Before clipping; SimpleTIR's void-turn filter is about these spikes.
    out["actor/grad_norm_max"] = *std::max_element(grad_norms.begin(), grad_norms.end());
    out["actor/grad_norm_p99"] = percentile(grad_norms, 0.99);
  }
  out["actor/optimizer_steps"] = static_cast<double>(steps);
  out["actor/skipped_steps"] = static_cast<double>(skipped);
  out["actor/lr"] = lr_at(cfg.trainer.optim, std::max<int64_t>(0, counters.optimizer_steps - 1), total_optimizer_steps);
  return out;
}

}  // namespace agentrl::train
