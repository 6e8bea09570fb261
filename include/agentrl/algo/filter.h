// Trajectory filters: run on a batch of trajectories before the advantage
// estimator; they drop trajectories or whole groups, or set loss_masked.
//
// Registered by name (FilterRegistrar) and selected by `algorithm.filters`
// (applied in list order): void_turn (SimpleTIR, arXiv 2509.02479),
// zero_variance (DAPO dynamic sampling, arXiv 2503.14476), overlong (DAPO
// overlong masking / penalty). Filters act on this rank's part of the batch;
// counts in the report are local (sum them across ranks for logging).
//
// Thread-safety: filters are immutable after construction; apply() mutates
// only its argument.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/algo/algo_config.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::algo {

struct FilterContext {
  bool training = true;  // false at evaluation: void_turn is disabled
};

struct FilterReport {
  std::string filter;
  int64_t input_trajectories = 0;
  int64_t input_groups = 0;
  int64_t dropped_groups = 0;         // whole groups removed
  int64_t dropped_trajectories = 0;   // trajectories removed (including those of dropped groups)
  int64_t masked_trajectories = 0;    // trajectories newly set loss_masked
  int64_t flagged_trajectories = 0;   // trajectories the filter's predicate matched (e.g. with a void turn)
  std::map<std::string, double> metrics;  // "<filter>/<name>" rates
};

class TrajectoryFilter {
 public:
  TrajectoryFilter() = default;
  TrajectoryFilter(const TrajectoryFilter&) = delete;
  TrajectoryFilter& operator=(const TrajectoryFilter&) = delete;
  virtual ~TrajectoryFilter() = default;

  virtual std::string name() const = 0;
  // Filters `batch` in place, keeping the relative order of what remains.
  virtual FilterReport apply(std::vector<rollout::Trajectory>& batch, const FilterContext& context) const = 0;

  // Dynamic sampling: extra generation rounds the trainer may run to replace
  // the groups this filter drops (0 = none: the batch is just smaller), and
  // the groups to generate in such a round while `missing` are still wanted.
  virtual int64_t max_refill_rounds() const { return 0; }
  virtual int64_t refill_groups(int64_t missing) const { return missing; }
};

// The filter whose refill rounds the trainer runs: the first of `filters`
// with max_refill_rounds() > 0, or nullptr.
const TrajectoryFilter* refilling_filter(const std::vector<std::unique_ptr<TrajectoryFilter>>& filters);

using FilterFactory = std::function<std::unique_ptr<TrajectoryFilter>(const AlgorithmConfig&)>;

void register_filter(const std::string& name, FilterFactory factory);  // duplicate -> ConfigError
std::vector<std::string> registered_filters();                         // sorted
// Unknown name -> ConfigError listing the registered names.
std::unique_ptr<TrajectoryFilter> make_filter(const std::string& name, const AlgorithmConfig& config);
// make_filter for every name in config.filters, in order.
std::vector<std::unique_ptr<TrajectoryFilter>> make_filters(const AlgorithmConfig& config);
// Applies the filters in order; one report per filter.
std::vector<FilterReport> apply_filters(const std::vector<std::unique_ptr<TrajectoryFilter>>& filters,
                                        std::vector<rollout::Trajectory>& batch, const FilterContext& context);

struct FilterRegistrar {
  FilterRegistrar(const char* name, FilterFactory factory) { register_filter(name, std::move(factory)); }
};

// Groups to generate in one refill round of dynamic sampling:
// ceil(missing_groups * zero_variance.oversample_factor).
int64_t groups_to_generate(int64_t missing_groups, const ZeroVarianceConfig& config);

// Number of distinct group_ids.
int64_t count_groups(const std::vector<rollout::Trajectory>& batch);

}  // namespace agentrl::algo
