// overlong filter (DAPO, Yu et al. 2025, arXiv 2503.14476, sec. 3.4
// "Overlong Reward Shaping"): a trajectory with a generation truncated at the
// length limit (any Turn::truncated) carries a reward that says little about
// its reasoning. mode mask (DAPO's overlong filtering): loss_masked, kept in
// group statistics. mode penalty: a fixed punishment, reward -= penalty, and
// it stays trainable (a simplified, length-independent form of DAPO's soft
// overlong punishment). Episodes that only hit the turn limit
// (Trajectory::truncated with no truncated turn) are ordinary failures and
// are not touched.
#include <algorithm>

#include "agentrl/algo/filter.h"
#include "agentrl/core/error.h"

namespace agentrl::algo {
namespace {

class OverlongFilter final : public TrajectoryFilter {
 public:
  explicit OverlongFilter(const OverlongConfig& c) : cfg_(c) {
    if (cfg_.mode != "mask" && cfg_.mode != "penalty") {
      throw ConfigError("algorithm.overlong.mode: unknown mode '" + cfg_.mode + "'; expected mask or penalty");
    }
  }
  std::string name() const override { return "overlong"; }

  FilterReport apply(std::vector<rollout::Trajectory>& batch, const FilterContext&) const override {
    FilterReport r;
    r.filter = name();
    r.input_trajectories = static_cast<int64_t>(batch.size());
    r.input_groups = count_groups(batch);
    for (auto& t : batch) {
      bool cut = std::any_of(t.turns.begin(), t.turns.end(), [](const rollout::Turn& u) { return u.truncated; });
      if (!cut) continue;
      ++r.flagged_trajectories;
      if (cfg_.mode == "penalty") {
        t.reward -= cfg_.penalty;
      } else if (!t.loss_masked) {
        t.loss_masked = true;
        ++r.masked_trajectories;
      }
    }
    r.metrics["overlong/flagged_rate"] =
        r.input_trajectories > 0 ? static_cast<double>(r.flagged_trajectories) / r.input_trajectories : 0.0;
    return r;
  }

 private:
  OverlongConfig cfg_;
};

const FilterRegistrar kOverlong("overlong",
                                [](const AlgorithmConfig& c) { return std::make_unique<OverlongFilter>(c.overlong); });

}  // namespace
}  // namespace agentrl::algo
