// Configuration of the RL algorithm: advantage estimation and filters
// (section "algorithm") and the policy loss (section "actor").
//
// Used by the trainer (train/), by `agentrl advantages` and by every estimator,
// filter and loss in algo/. Defaults are the values of the papers each option
// comes from; every field is documented in its visit() (see
// `agentrl config show --doc`).
//
// Thread-safety: plain value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// GiGPO (Feng et al. 2025, arXiv 2505.10978).
struct GigpoConfig {
  double gamma = 0.95;               // discount of the step return (eq. 5)
  double omega = 1.0;                // weight of the step-level advantage (eq. 8)
  std::string mode = "mean_norm";    // mean_norm | mean_std_norm
  std::string step_reward = "turn";  // turn: Turn::reward | outcome: Trajectory::reward on the last step
  double eps = 1e-6;
  void visit(config::Visitor& v);
};

struct VoidTurnConfig {
  // false (SimpleTIR reference): a trajectory with a void turn keeps its
  // reward in its group's statistics and only its loss is masked.
  // true: it is dropped from the batch, hence from the statistics too.
  bool exclude_from_group_stats = false;
  void visit(config::Visitor& v);
};

// DAPO dynamic sampling (Yu et al. 2025, arXiv 2503.14476, eq. 11 constraint
// 0 < |{correct}| < G). The trainer over-samples and refills.
struct ZeroVarianceConfig {
  double oversample_factor = 1.0;  // the trainer generates ceil(factor * groups) groups per attempt
  int64_t max_retries = 3;         // extra generation rounds to refill dropped groups
  void visit(config::Visitor& v);
};

// DAPO overlong handling (arXiv 2503.14476 sec. 3.4): trajectories with a
// generation truncated at the length limit.
struct OverlongConfig {
  std::string mode = "mask";  // mask: no loss | penalty: reward -= penalty, still trained
  double penalty = 1.0;
  void visit(config::Visitor& v);
};

struct AlgorithmConfig {
  std::string adv_estimator = "grpo";  // a registered estimator name
  std::vector<std::string> filters;    // registered filter names, applied in order
  GrpoConfig grpo;
  EmpgConfig empg;
  GigpoConfig gigpo;
  VoidTurnConfig void_turn;
  ZeroVarianceConfig zero_variance;
  OverlongConfig overlong;
  void visit(config::Visitor& v);
};

// KL to the frozen reference policy. Estimators of Schulman, "Approximating
// KL divergence" (2020): k1 = log r, k2 = (log r)^2 / 2, k3 = r - 1 - log r
// with r = pi_ref / pi (low_var_kl is k3, clamped as verl does).
struct AdaptiveKlConfig {
  bool enabled = false;     // Ziegler et al. 2019 (arXiv 1909.08593) adaptive coefficient
  double target = 0.1;      // target KL
  double horizon = 10000;   // horizon (in samples) of the controller
  void visit(config::Visitor& v);
};

struct KlConfig {
  bool enabled = false;
  std::string type = "low_var_kl";  // k1 | k2 | k3 | low_var_kl
  double coef = 0.001;
  std::string use_as = "loss";       // loss: term of the actor loss | reward: penalty on the outcome reward
  AdaptiveKlConfig adaptive;
  void visit(config::Visitor& v);
};

struct ActorConfig {
  std::string loss = "ppo_clip";
  double clip_low = 0.2;     // PPO epsilon below 1 (Schulman et al. 2017)
  double clip_high = 0.2;    // epsilon above 1; DAPO clip-higher uses 0.28
  double dual_clip = 3.0;    // dual-clip constant c for A < 0 (Ye et al. 2020, arXiv 1912.09729); 0 = off
  std::string loss_agg = "token-mean";  // token-mean | seq-mean-token-sum | seq-mean-token-mean | seq-mean-token-sum-norm
  int64_t loss_agg_norm_length = 0;     // constant divisor of seq-mean-token-sum-norm (required by it); 0 = unset
  KlConfig kl;
  double entropy_coef = 0.0;  // entropy bonus: loss -= coef * agg(entropy)
  double tis_cap = 0.0;       // truncated IS weight min(pi_old / pi_behaviour, cap); 0 = off
  int64_t ppo_epochs = 1;
  int64_t mini_batches = 1;       // optimizer steps per epoch (the batch is split in this many)
  double grad_clip = 1.0;         // global grad-norm clip; 0 = off
  void visit(config::Visitor& v);
};

}  // namespace agentrl::algo
