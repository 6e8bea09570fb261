// REINFORCE++ with a group-mean baseline (Hu 2025, arXiv 2501.03262,
// "REINFORCE++-baseline"; verl's compute_reinforce_plus_plus_baseline_
// outcome_advantage):
//   1. A_i = r_i - mean_group (a group of one has baseline 0, as in verl);
//   2. A_i is broadcast to the trajectory's generated tokens and whitened over
//      all loss tokens of the batch: (A - mu) / sqrt(var + 1e-8), mu and the
//      unbiased var over tokens (verl masked_whiten), across ranks.
// Token counts are the turns' generated tokens; loss_masked trajectories are
// left out of the whitening statistics and get 0.
#include <cmath>
#include <map>

#include "agentrl/algo/advantage.h"
#include "estimator_util.h"

namespace agentrl::algo {
namespace {

class ReinforcePpEstimator final : public AdvantageEstimator {
 public:
  std::string name() const override { return "reinforce_pp"; }

  AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective& collective) const override {
    std::map<int64_t, std::pair<double, int64_t>> sums;
    for (const auto& t : batch) {
      sums[t.group_id].first += t.reward;
      sums[t.group_id].second += 1;
    }
    std::vector<double> centred(batch.size(), 0.0);
    for (size_t i = 0; i < batch.size(); ++i) {
      auto [sum, k] = sums[batch[i].group_id];
      centred[i] = batch[i].reward - (k > 1 ? sum / static_cast<double>(k) : 0.0);
    }
    // Token-weighted mean, then the centred sum of squares (two passes, so
    // the result does not depend on how the batch is split across ranks
    // beyond summation order).
    std::vector<double> s = {0.0, 0.0};  // tokens, sum of A over tokens
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].loss_masked) continue;
      const double n = static_cast<double>(batch[i].num_generated_tokens());
      s[0] += n;
      s[1] += n * centred[i];
    }
    collective.all_reduce_sum(s);
    const double mu = s[0] > 0 ? s[1] / s[0] : 0.0;
    std::vector<double> ss = {0.0};
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].loss_masked) continue;
      const double n = static_cast<double>(batch[i].num_generated_tokens());
      ss[0] += n * (centred[i] - mu) * (centred[i] - mu);
    }
    collective.all_reduce_sum(ss);
    const double var = s[0] > 1 ? ss[0] / (s[0] - 1) : 0.0;
    const double inv = 1.0 / std::sqrt(var + 1e-8);
    std::vector<double> adv(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) adv[i] = (centred[i] - mu) * inv;
    AdvantageResult result;
    result.turn_advantages = detail::broadcast_to_turns(batch, adv);
    result.diagnostics["reinforce_pp/token_mean"] = mu;
    result.diagnostics["reinforce_pp/token_std"] = std::sqrt(var);
    return result;
  }
};

const EstimatorRegistrar kReinforcePp("reinforce_pp",
                                      [](const AlgorithmConfig&) { return std::make_unique<ReinforcePpEstimator>(); });

}  // namespace
}  // namespace agentrl::algo
