// Small helpers shared by the estimator files (private to src/algo).
#pragma once

#include <vector>

#include "agentrl/algo/advantage.h"

namespace agentrl::algo::detail {

inline std::vector<double> outcome_rewards(const std::vector<rollout::Trajectory>& batch) {
  std::vector<double> r;
  r.reserve(batch.size());
  for (const auto& t : batch) r.push_back(t.reward);
  return r;
}

inline std::vector<int64_t> group_ids(const std::vector<rollout::Trajectory>& batch) {
  std::vector<int64_t> g;
  g.reserve(batch.size());
  for (const auto& t : batch) g.push_back(t.group_id);
  return g;
}

// Every turn of trajectory i gets per_trajectory[i]; loss_masked ones get 0.
inline std::vector<std::vector<float>> broadcast_to_turns(const std::vector<rollout::Trajectory>& batch,
                                                          const std::vector<double>& per_trajectory) {
  std::vector<std::vector<float>> out(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const float a = batch[i].loss_masked ? 0.0f : static_cast<float>(per_trajectory[i]);
    out[i].assign(batch[i].turns.size(), a);
  }
  return out;
}

}  // namespace agentrl::algo::detail
