// estimate_and_assign (see advantage.h).
#include "agentrl/algo/advantage.h"
#include "agentrl/algo/diagnostics.h"

namespace agentrl::algo {

std::map<std::string, double> estimate_and_assign(const AdvantageEstimator& estimator,
                                                  const std::vector<rollout::Trajectory>& trajectories,
                                                  rollout::TrainBatch& batch, Collective& collective,
                                                  AdvantageResult* result_out) {
  auto result = estimator.compute(trajectories, collective);
  assign_token_advantages(batch, trajectories, result);
  mask_loss_masked_rows(batch, trajectories);
  auto metrics = result.diagnostics;
  const auto mask = batch.loss_mask.defined() ? batch.loss_mask : (batch.turn_index >= 0).to(torch::kFloat32);
  const auto stats = masked_stats(batch.advantages, mask, collective, "advantage/");
  metrics.insert(stats.begin(), stats.end());
  if (result_out != nullptr) *result_out = std::move(result);
  return metrics;
}

}  // namespace agentrl::algo
