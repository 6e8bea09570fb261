// RLOO: REINFORCE with a leave-one-out baseline (Kool et al. 2019, "Buy 4
// REINFORCE samples, get a baseline for free!"; Ahmadian et al. 2024,
// arXiv 2402.14740, eq. 6):
//   A_i = r_i - 1/(k-1) * sum_{j != i} r_j  =  k/(k-1) * (r_i - mean_group)
// for a group of k >= 2 trajectories; groups of one get 0.
#include <map>

#include "agentrl/algo/advantage.h"
#include "estimator_util.h"

namespace agentrl::algo {
namespace {

class RlooEstimator final : public AdvantageEstimator {
 public:
  std::string name() const override { return "rloo"; }

  AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective&) const override {
    std::map<int64_t, std::pair<double, int64_t>> sums;  // group -> (sum, count)
    for (const auto& t : batch) {
      sums[t.group_id].first += t.reward;
      sums[t.group_id].second += 1;
    }
    std::vector<double> adv(batch.size(), 0.0);
    for (size_t i = 0; i < batch.size(); ++i) {
      auto [sum, k] = sums[batch[i].group_id];
      if (k < 2) continue;
      adv[i] = batch[i].reward - (sum - batch[i].reward) / static_cast<double>(k - 1);
    }
    AdvantageResult result;
    result.turn_advantages = detail::broadcast_to_turns(batch, adv);
    return result;
  }
};

const EstimatorRegistrar kRloo("rloo", [](const AlgorithmConfig&) { return std::make_unique<RlooEstimator>(); });

}  // namespace
}  // namespace agentrl::algo
