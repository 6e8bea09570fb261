// Options of the GRPO / Dr.GRPO estimator (config section algorithm.grpo,
// registered by grpo.cpp).
//
// Thread-safety: plain value type.
#pragma once

#include <string>

#include "agentrl/core/config.h"

namespace agentrl::algo {

// GRPO (Shao et al. 2024, arXiv 2402.03300, eq. 3 outcome supervision):
// A_i = (r_i - mean_g) / (std_g + eps). std is the unbiased sample standard
// deviation (torch.std, as verl's compute_grpo_outcome_advantage).
struct GrpoConfig {
  bool norm_by_std = true;  // false = Dr.GRPO (Liu et al. 2025, arXiv 2503.20783)
  double eps = 1e-6;
  void visit(config::Visitor& v);
};

}  // namespace agentrl::algo
