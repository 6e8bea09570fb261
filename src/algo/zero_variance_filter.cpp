// zero_variance filter: DAPO dynamic sampling (Yu et al. 2025, arXiv
// 2503.14476, eq. 11 constraint 0 < |{o_i correct}| < G): a group whose
// outcome rewards are all equal has zero GRPO advantage everywhere and only
// dilutes the batch, so the whole group is dropped. The trainer over-samples
// (algorithm.zero_variance) to refill the batch. A group of one trajectory
// has zero variance and is dropped too.
#include <algorithm>
#include <cmath>
#include <map>

#include "agentrl/algo/filter.h"

namespace agentrl::algo {
namespace {

class ZeroVarianceFilter final : public TrajectoryFilter {
 public:
  explicit ZeroVarianceFilter(ZeroVarianceConfig config) : config_(config) {}
  std::string name() const override { return "zero_variance"; }
  // DAPO keeps generating until the batch is full: up to max_retries rounds
  // of ceil(missing * oversample_factor) groups.
  int64_t max_refill_rounds() const override { return config_.max_retries; }
  int64_t refill_groups(int64_t missing) const override { return groups_to_generate(missing, config_); }

  FilterReport apply(std::vector<rollout::Trajectory>& batch, const FilterContext&) const override {
    FilterReport r;
    r.filter = name();
    r.input_trajectories = static_cast<int64_t>(batch.size());
    r.input_groups = count_groups(batch);
    std::map<int64_t, std::pair<double, double>> range;  // group -> (min, max) reward
    for (const auto& t : batch) {
      auto it = range.find(t.group_id);
      if (it == range.end()) range[t.group_id] = {t.reward, t.reward};
      else it->second = {std::min(it->second.first, t.reward), std::max(it->second.second, t.reward)};
    }
    auto flat = [&](const rollout::Trajectory& t) {
      const auto& mm = range.at(t.group_id);
      return mm.first == mm.second;  // exact: rewards are copied, never recomputed
    };
    for (const auto& [g, mm] : range) r.dropped_groups += mm.first == mm.second ? 1 : 0;
    auto end = std::remove_if(batch.begin(), batch.end(), flat);
    r.dropped_trajectories = static_cast<int64_t>(batch.end() - end);
    r.flagged_trajectories = r.dropped_trajectories;
    batch.erase(end, batch.end());
    r.metrics["zero_variance/dropped_group_rate"] =
        r.input_groups > 0 ? static_cast<double>(r.dropped_groups) / r.input_groups : 0.0;
    return r;
  }

 private:
  ZeroVarianceConfig config_;
};

const FilterRegistrar kZeroVariance("zero_variance", [](const AlgorithmConfig& c) {
  return std::make_unique<ZeroVarianceFilter>(c.zero_variance);
});

}  // namespace

int64_t groups_to_generate(int64_t missing_groups, const ZeroVarianceConfig& config) {
  if (missing_groups <= 0) return 0;
  return static_cast<int64_t>(std::ceil(static_cast<double>(missing_groups) * config.oversample_factor - 1e-9));
}

}  // namespace agentrl::algo
