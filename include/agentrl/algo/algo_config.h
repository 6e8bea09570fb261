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

// Config scope of the estimators' option sections (YAML: algorithm.<name>).
inline constexpr const char* kEstimatorOptionScope = "algorithm";

// Registers CONFIG (a struct with visit()) as the option section
// algorithm.NAME; use at namespace scope in the estimator's .cpp.
#define AGENTRL_REGISTER_ESTIMATOR_OPTIONS(NAME, CONFIG, DOC)                                 \
  static const ::agentrl::config::SectionRegistrar<CONFIG> agentrl_estimator_options_##NAME( \
      #NAME, DOC, ::agentrl::algo::kEstimatorOptionScope)

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
  VoidTurnConfig void_turn;
  ZeroVarianceConfig zero_variance;
  OverlongConfig overlong;
  // The estimators' option sections (algorithm.<name>): each estimator's file
  // registers its own (AGENTRL_REGISTER_ESTIMATOR_OPTIONS), so adding an
  // estimator with options edits no shared file. Read with
  // options<GrpoConfig>("grpo").
  config::ExtensionSections estimator_options{kEstimatorOptionScope};
  template <class T>
  const T& options(const std::string& name) const { return estimator_options.as<T>(name); }
  template <class T>
  T& options(const std::string& name) { return estimator_options.as<T>(name); }
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
  // Choice-mode rollouts (rollout.constrain_actions): loss += coef *
  // agg(-log of the unmasked policy's mass on each sampled token's allowed
  // ids). The masked ratio gives no gradient to the mass outside the allowed
  // ids; this term moves it onto them, so free generation learns from the
  // same rollouts. 0 = off; 0 at free tokens.
  double choice_mass_coef = 0.0;
  int64_t ppo_epochs = 1;
  int64_t mini_batches = 1;       // optimizer steps per epoch (the batch is split in this many)
  double grad_clip = 1.0;         // global grad-norm clip; 0 = off
  void visit(config::Visitor& v);
};

}  // namespace agentrl::algo
