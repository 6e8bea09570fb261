// visit() of the algorithm and actor config sections (see algo_config.h).
#include "agentrl/algo/algo_config.h"

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/filter.h"

namespace agentrl::algo {

using config::Range;

void VoidTurnConfig::visit(config::Visitor& v) {
  v.field("exclude_from_group_stats", exclude_from_group_stats,
          "drop trajectories with a void turn from the batch instead of only masking their loss");
}

void ZeroVarianceConfig::visit(config::Visitor& v) {
  v.field("oversample_factor", oversample_factor, "groups generated per needed group when refilling",
          Range::at_least(1));
  v.field("max_retries", max_retries, "extra generation rounds to refill dropped groups", Range::at_least(0));
}

void OverlongConfig::visit(config::Visitor& v) {
  v.field("mode", mode, "mask: truncated trajectories get no loss; penalty: reward -= penalty", {"mask", "penalty"});
  v.field("penalty", penalty, "reward penalty of a truncated trajectory (mode penalty)", Range::at_least(0));
}

void AlgorithmConfig::visit(config::Visitor& v) {
  v.field("adv_estimator", adv_estimator, "advantage estimator", registered_estimators());
  v.field("filters", filters, "trajectory filters, applied in order", registered_filters());
  v.section("void_turn", void_turn, "SimpleTIR void-turn filter (arXiv 2509.02479)");
  v.section("zero_variance", zero_variance, "DAPO dynamic sampling (arXiv 2503.14476)");
  v.section("overlong", overlong, "DAPO overlong filtering");
  estimator_options.visit(v);
}

void AdaptiveKlConfig::visit(config::Visitor& v) {
  v.field("enabled", enabled, "adapt the KL coefficient towards target (Ziegler et al. 2019)");
  v.field("target", target, "target KL per token", Range::positive());
  v.field("horizon", horizon, "controller horizon in samples", Range::positive());
}

void KlConfig::visit(config::Visitor& v) {
  v.field("enabled", enabled, "KL regularisation to the frozen reference policy");
  v.field("type", type, "KL estimator (Schulman 2020)", {"k1", "k2", "k3", "low_var_kl"});
  v.field("coef", coef, "KL coefficient (initial value when adaptive)", Range::at_least(0));
  v.field("use_as", use_as, "loss: term of the actor loss; reward: penalty on the outcome reward", {"loss", "reward"});
  v.section("adaptive", adaptive, "adaptive KL controller");
}

void ActorConfig::visit(config::Visitor& v) {
  v.field("loss", loss, "policy loss", {"ppo_clip"});
  v.field("clip_low", clip_low, "PPO clip epsilon below 1", Range::closed(0, 1));
  v.field("clip_high", clip_high, "PPO clip epsilon above 1 (DAPO clip-higher: 0.28)", Range::at_least(0));
  v.field("dual_clip", dual_clip, "dual-clip constant c > 1 for negative advantages; 0 = off", Range::at_least(0));
  v.field("loss_agg", loss_agg, "loss aggregation (verl agg_loss modes)",
          {"token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"});
  v.field("loss_agg_norm_length", loss_agg_norm_length,
          "constant divisor of seq-mean-token-sum-norm (required by that mode; e.g. the longest response the rollout "
          "allows); 0 = unset", Range::at_least(0));
  v.section("kl", kl, "KL to the reference policy");
  v.field("entropy_coef", entropy_coef, "entropy bonus coefficient", Range::at_least(0));
  v.field("tis_cap", tis_cap, "truncated importance-sampling cap on pi_old / pi_behaviour; 0 = off",
          Range::at_least(0));
  v.field("choice_mass_coef", choice_mass_coef,
          "choice-mode rollouts: weight of -log(the unmasked policy's mass on the allowed tokens) in the loss; 0 = off",
          Range::at_least(0));
  v.field("ppo_epochs", ppo_epochs, "passes over each batch", Range::at_least(1));
  v.field("mini_batches", mini_batches, "optimizer steps per epoch", Range::at_least(1));
  v.field("grad_clip", grad_clip, "global gradient-norm clip; 0 = off", Range::at_least(0));
}

}  // namespace agentrl::algo
