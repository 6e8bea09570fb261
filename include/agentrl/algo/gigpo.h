// Options of the GiGPO estimator (config section algorithm.gigpo,
// registered by gigpo.cpp).
//
// Thread-safety: plain value type.
#pragma once

#include <string>

#include "agentrl/core/config.h"

namespace agentrl::algo {

// GiGPO (Feng et al. 2025, arXiv 2505.10978).
struct GigpoConfig {
  double gamma = 0.95;               // discount of the step return (eq. 5)
  double omega = 1.0;                // weight of the step-level advantage (eq. 8)
  std::string mode = "mean_norm";    // mean_norm | mean_std_norm
  std::string step_reward = "turn";  // turn: Turn::reward | outcome: Trajectory::reward on the last step
  double eps = 1e-6;
  void visit(config::Visitor& v);
};

}  // namespace agentrl::algo
