#include "agentrl/train/optim.h"

#include <cmath>

namespace agentrl::train {

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& module, const OptimConfig& c) {
  torch::optim::AdamWOptions o(c.lr);
  o.betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay);
  return std::make_unique<torch::optim::AdamW>(module.parameters(), o);
}

double lr_at(const OptimConfig& c, int64_t step, int64_t total_steps) {
  if (c.warmup_steps > 0 && step < c.warmup_steps)
    return c.lr * static_cast<double>(step + 1) / static_cast<double>(c.warmup_steps);
  if (c.schedule == "constant") return c.lr;
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - c.warmup_steps));
  const double progress = std::min(1.0, static_cast<double>(step - c.warmup_steps) / span);
  const double floor = c.lr * c.min_lr_ratio;
  if (c.schedule == "linear") return floor + (c.lr - floor) * (1.0 - progress);
  // cosine
  return floor + (c.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

void set_lr(torch::optim::Optimizer& opt, double lr) {
  for (auto& group : opt.param_groups()) group.options().set_lr(lr);
}

double clip_grad_norm(torch::nn::Module& module, double max_norm) {
  double sq = 0.0;
  std::vector<torch::Tensor> grads;
  for (auto& p : module.parameters()) {
    if (!p.grad().defined()) continue;
    grads.push_back(p.grad());
    sq += p.grad().detach().to(torch::kFloat64).pow(2).sum().item<double>();
  }
  const double norm = std::sqrt(sq);
  if (max_norm > 0 && std::isfinite(norm) && norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (auto& g : grads) g.mul_(scale);
  }
  return norm;
}

}  // namespace agentrl::train
