// Optimizer helpers: AdamW construction (optionally ZeRO-1 sharded),
// learning-rate schedules, gradient norm and clipping, and the optimizer
// state of checkpoints.
//
// Thread-safety: call from the trainer thread.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/dist/process_group.h"
#include "agentrl/train/checkpoint.h"
#include "agentrl/train/experiment_config.h"

namespace agentrl::train {

// AdamW over all parameters of `module`; with `shard_over` (a group of more
// than one rank) a dist::ShardedAdamW that keeps the state of this rank's
// share only (dist.shard_optimizer).
std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& module, const OptimConfig& c,
                                                dist::ProcessGroup* shard_over = nullptr);
// The same over `params` (a mixed-precision run passes its fp32 masters,
// MasterWeights::params()).
std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<torch::Tensor>& params, const OptimConfig& c,
                                                dist::ProcessGroup* shard_over = nullptr);
// The parameters `opt` steps (all of its param groups).
std::vector<torch::Tensor> optimizer_parameters(const torch::optim::Optimizer& opt);

// Creates AdamW's state (step 0, zero moments) for every parameter that has
// none, as its first step would, so that the memory exists up front (the
// engine sizes its KV cache from what is left). Steps are unchanged by it.
void materialize_optimizer_state(torch::optim::AdamW& opt);

// LR at optimizer step `step` (0-based) of `total_steps`: linear warmup from 0
// over warmup_steps, then constant / linear decay / cosine decay to
// lr * min_lr_ratio at total_steps.
double lr_at(const OptimConfig& c, int64_t step, int64_t total_steps);
void set_lr(torch::optim::Optimizer& opt, double lr);

// Global L2 norm of all gradients (non-finite if any gradient is), and
// clipping to max_norm (no-op when max_norm <= 0 or the norm is non-finite).
// The squares are summed on the gradients' device in fp32 per tensor and
// fp64 across tensors; the one host sync is reading the total.
double clip_grad_norm(torch::nn::Module& module, double max_norm);
// The same over `params`, whose squared norm is first passed through
// `sum_over_ranks`: with ZeRO-1 each rank holds the reduced gradients of its
// own parameters only, and the global norm sums the ranks' squares.
double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm,
                      const std::function<double(double)>& sum_over_ranks);

// Optimizer state in checkpoint directories. Unsharded: `optimizer.pt`
// (every rank holds the same state; rank 0 writes it; it resumes with any
// world size, sharded or not). ZeRO-1: `optimizer_rank<R>.pt` per rank plus
// `optimizer_shards.json` (world size, parameters per rank); it resumes only
// with the same world size. Collective calls: every rank, same order.
//
// Before rank 0 writes checkpoint `step`: each rank of a sharded optimizer
// writes its shard into manager.staging_dir(step), then all ranks meet in a
// barrier. No-op for an unsharded optimizer.
void stage_optimizer_state(const torch::optim::AdamW& opt, const CheckpointManager& manager, int64_t step);
// Rank 0, inside the checkpoint writer of `step`: writes optimizer.pt, or
// moves the staged shards into `dir` and writes optimizer_shards.json.
void write_optimizer_state(const torch::optim::AdamW& opt, const CheckpointManager& manager, int64_t step,
                           const std::string& dir);
// Every rank on resume. An optimizer.pt loads into any optimizer (a sharded
// one keeps its parameters' share); a sharded checkpoint only into a
// ShardedAdamW of the same world size (ConfigError otherwise).
void load_optimizer_state(torch::optim::AdamW& opt, const std::string& checkpoint_dir);

}  // namespace agentrl::train
