// void_turn filter (SimpleTIR, Xue et al. 2025, arXiv 2509.02479, sec. 3.3):
// a trajectory with any void turn (Turn::void_turn, set at rollout time from
// the env's predicate) is kept in its group's statistics but its whole loss
// is masked (Trajectory::loss_masked), as in the reference implementation;
// with void_turn.exclude_from_group_stats it is dropped from the batch.
// Disabled at evaluation (FilterContext::training == false).
#include <algorithm>

#include "agentrl/algo/filter.h"

namespace agentrl::algo {
namespace {

class VoidTurnFilter final : public TrajectoryFilter {
 public:
  explicit VoidTurnFilter(const VoidTurnConfig& c) : drop_(c.exclude_from_group_stats) {}
  std::string name() const override { return "void_turn"; }

  FilterReport apply(std::vector<rollout::Trajectory>& batch, const FilterContext& context) const override {
    FilterReport r;
    r.filter = name();
    r.input_trajectories = static_cast<int64_t>(batch.size());
    r.input_groups = count_groups(batch);
    if (!context.training) return r;
    auto is_void = [](const rollout::Trajectory& t) {
      return std::any_of(t.turns.begin(), t.turns.end(), [](const rollout::Turn& u) { return u.void_turn; });
    };
    for (auto& t : batch) {
      if (!is_void(t)) continue;
      ++r.flagged_trajectories;
      if (!drop_ && !t.loss_masked) {
        t.loss_masked = true;
        ++r.masked_trajectories;
      }
    }
    if (drop_) {
      auto end = std::remove_if(batch.begin(), batch.end(), is_void);
      r.dropped_trajectories = static_cast<int64_t>(batch.end() - end);
      batch.erase(end, batch.end());
      r.dropped_groups = r.input_groups - count_groups(batch);
    }
    r.metrics["void_turn/flagged_rate"] =
        r.input_trajectories > 0 ? static_cast<double>(r.flagged_trajectories) / r.input_trajectories : 0.0;
    return r;
  }

 private:
  bool drop_;
};

const FilterRegistrar kVoidTurn("void_turn",
                                [](const AlgorithmConfig& c) { return std::make_unique<VoidTurnFilter>(c.void_turn); });

}  // namespace
}  // namespace agentrl::algo
