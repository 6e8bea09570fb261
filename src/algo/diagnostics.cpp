// Update diagnostics (see diagnostics.h).
#include "agentrl/algo/diagnostics.h"

#include <cmath>
#include <limits>

namespace agentrl::algo {

std::map<std::string, double> masked_stats(const torch::Tensor& values, const torch::Tensor& mask,
                                           Collective& collective, const std::string& prefix) {
  torch::NoGradGuard ng;
  auto v = values.detach().to(torch::kCPU, torch::kFloat64);
  auto m = mask.detach().to(torch::kCPU, torch::kFloat64) != 0;
  auto sel = v.masked_select(m);
  std::vector<double> s = {static_cast<double>(sel.numel()), sel.numel() ? sel.sum().item<double>() : 0.0};
  collective.all_reduce_sum(s);
  const double mean = s[0] > 0 ? s[1] / s[0] : 0.0;
  std::vector<double> ss = {sel.numel() ? (sel - mean).square().sum().item<double>() : 0.0};
  collective.all_reduce_sum(ss);
  std::vector<double> lo = {sel.numel() ? sel.min().item<double>() : std::numeric_limits<double>::infinity()};
  std::vector<double> hi = {sel.numel() ? sel.max().item<double>() : -std::numeric_limits<double>::infinity()};
  collective.all_reduce_min(lo);
  collective.all_reduce_max(hi);
  const bool any = s[0] > 0;
  return {{prefix + "mean", mean},
          {prefix + "std", s[0] > 1 ? std::sqrt(ss[0] / (s[0] - 1)) : 0.0},
          {prefix + "min", any ? lo[0] : 0.0},
          {prefix + "max", any ? hi[0] : 0.0},
          {prefix + "count", s[0]}};
}

torch::Tensor logit_update_norm_per_token(const torch::Tensor& logprobs, const torch::Tensor& prob_sq_sum,
                                          const torch::Tensor& advantages, const torch::Tensor& loss_mask) {
  torch::NoGradGuard ng;
  auto lp = logprobs.detach().to(torch::kFloat64);
  auto p = torch::exp(lp);
  // Rounding can push 1 - 2P + sum P^2 = ||e_c - p||^2 slightly below 0.
  auto sq = (1.0 - 2.0 * p + prob_sq_sum.detach().to(torch::kFloat64)).clamp_min(0.0);
  auto m = loss_mask.detach().to(torch::kFloat64);
  return advantages.detach().to(torch::kFloat64).abs() * torch::sqrt(sq) * m;
}

double logit_update_norm(const torch::Tensor& logprobs, const torch::Tensor& prob_sq_sum,
                         const torch::Tensor& advantages, const torch::Tensor& loss_mask, Collective& collective) {
  auto per_token = logit_update_norm_per_token(logprobs, prob_sq_sum, advantages, loss_mask);
  std::vector<double> s = {per_token.sum().item<double>(), loss_mask.detach().to(torch::kFloat64).sum().item<double>()};
  collective.all_reduce_sum(s);
  return s[1] > 0 ? s[0] / s[1] : 0.0;
}

std::map<std::string, double> filter_metrics(const std::vector<FilterReport>& reports) {
  std::map<std::string, double> out;
  if (reports.empty()) return out;
  const double trajs = static_cast<double>(reports.front().input_trajectories);
  const double groups = static_cast<double>(reports.front().input_groups);
  double dropped_groups = 0, dropped_trajs = 0, masked = 0;
  for (const auto& r : reports) {
    dropped_groups += static_cast<double>(r.dropped_groups);
    dropped_trajs += static_cast<double>(r.dropped_trajectories);
    masked += static_cast<double>(r.masked_trajectories);
    out[r.filter + "/flagged_rate"] =
        r.input_trajectories > 0 ? static_cast<double>(r.flagged_trajectories) / r.input_trajectories : 0.0;
  }
  out["filter/dropped_group_rate"] = groups > 0 ? dropped_groups / groups : 0.0;
  out["filter/dropped_trajectory_rate"] = trajs > 0 ? dropped_trajs / trajs : 0.0;
  out["filter/masked_trajectory_rate"] = trajs > 0 ? masked / trajs : 0.0;
  return out;
}

}  // namespace agentrl::algo
