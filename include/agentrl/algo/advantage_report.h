// What an estimator does to a trajectory dump: the logic behind
// `agentrl advantages ROLLOUTS.jsonl --estimator NAME`.
//
// Applies the configured filters (algorithm.filters, training context), runs
// the configured estimator and returns one JSON line per (episode, step):
//   {"episode": str, "group": int, "sample": int, "step": int,
//    "reward": outcome reward, "step_reward": Turn::reward,
//    "step_entropy": mean rollout entropy of the step (null without entropies),
//    "n_generated": int, "loss_masked": bool, "advantage": number}
// in batch order. Trajectories dropped by a filter produce no line.
//
// Thread-safety: pure function of its arguments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agentrl/algo/algo_config.h"
#include "agentrl/core/collective.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::algo {

struct AdvantageReport {
  std::vector<std::string> lines;              // JSON objects, no newline
  std::map<std::string, double> diagnostics;   // estimator + filter diagnostics, advantage stats over steps
};

AdvantageReport advantage_report(std::vector<rollout::Trajectory> batch, const AlgorithmConfig& config,
                                 Collective& collective);

}  // namespace agentrl::algo
