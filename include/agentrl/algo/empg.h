// Options of the EMPG estimator (config section algorithm.empg,
// registered by empg.cpp).
//
// Thread-safety: plain value type.
#pragma once

#include <string>

#include "agentrl/core/config.h"

namespace agentrl::algo {

// EMPG (Wang et al. 2025, arXiv 2509.09265).
struct EmpgConfig {
  std::string base = "grpo";  // base outcome advantage: grpo (uses algorithm.grpo) | dapo (std-normalised grpo)
  double k = 1.0;             // scale of the self-calibrating gradient scaling g
  double k_prime = 1.0;       // scale of the future-clarity bonus f
  double zeta = 0.05;         // weight of the future-clarity bonus
  bool final_std_norm = false;  // divide the final zero-mean advantages by their std
  double eps = 1e-8;            // min-max normalisation epsilon
  void visit(config::Visitor& v);
};

}  // namespace agentrl::algo
