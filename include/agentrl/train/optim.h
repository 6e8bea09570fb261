// Optimizer helpers: AdamW construction, learning-rate schedules, gradient
// norm and clipping.
//
// Thread-safety: call from the trainer thread.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "agentrl/train/experiment_config.h"

namespace agentrl::train {

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& module, const OptimConfig& c);

// LR at optimizer step `step` (0-based) of `total_steps`: linear warmup from 0
// over warmup_steps, then constant / linear decay / cosine decay to
// lr * min_lr_ratio at total_steps.
double lr_at(const OptimConfig& c, int64_t step, int64_t total_steps);
void set_lr(torch::optim::Optimizer& opt, double lr);

// Global L2 norm of all gradients (non-finite if any gradient is), and
// clipping to max_norm (no-op when max_norm <= 0 or the norm is non-finite).
double clip_grad_norm(torch::nn::Module& module, double max_norm);

}  // namespace agentrl::train
