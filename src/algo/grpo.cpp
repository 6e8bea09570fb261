// GRPO outcome advantage (Shao et al. 2024, arXiv 2402.03300, sec. 4.1.2):
//   A_i = (r_i - mean({r_j}_group)) / (std({r_j}_group) + eps)
// with the unbiased std (torch.std, as verl's compute_grpo_outcome_advantage).
// drgrpo (Liu et al. 2025, arXiv 2503.20783, eq. 4 "Dr. GRPO") drops the std
// division: A_i = r_i - mean. Groups of one trajectory get 0 (no baseline),
// where verl would return r_i / (1 + eps).
//
// Output: one value per trajectory, broadcast to all of its turns.
#include "agentrl/algo/grpo.h"

#include "agentrl/algo/advantage.h"
#include "estimator_util.h"

namespace agentrl::algo {

void GrpoConfig::visit(config::Visitor& v) {
  v.field("norm_by_std", norm_by_std, "divide group-centred rewards by the group std (false = Dr.GRPO)");
  v.field("eps", eps, "epsilon added to the group std", config::Range::positive());
}

AGENTRL_REGISTER_ESTIMATOR_OPTIONS(grpo, GrpoConfig, "GRPO group normalisation (also read by drgrpo and by empg's base)");

namespace {

class GrpoEstimator final : public AdvantageEstimator {
 public:
  GrpoEstimator(std::string name, bool norm_by_std, double eps) : name_(std::move(name)), norm_(norm_by_std), eps_(eps) {}
  std::string name() const override { return name_; }

  AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective&) const override {
    auto adv = group_normalized(detail::outcome_rewards(batch), detail::group_ids(batch), norm_, eps_);
    AdvantageResult result;
    result.turn_advantages = detail::broadcast_to_turns(batch, adv);
    return result;
  }

 private:
  std::string name_;
  bool norm_;
  double eps_;
};

const EstimatorRegistrar kGrpo("grpo", [](const AlgorithmConfig& c) {
  return std::make_unique<GrpoEstimator>("grpo", c.options<GrpoConfig>("grpo").norm_by_std, c.options<GrpoConfig>("grpo").eps);
});
const EstimatorRegistrar kDrGrpo("drgrpo", [](const AlgorithmConfig& c) {
  return std::make_unique<GrpoEstimator>("drgrpo", false, c.options<GrpoConfig>("grpo").eps);
});

}  // namespace
}  // namespace agentrl::algo
