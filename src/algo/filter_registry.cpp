// Filter registry and helpers (see filter.h).
#include <map>
#include <set>

#include "agentrl/algo/filter.h"
#include "agentrl/core/error.h"

namespace agentrl::algo {
namespace {

std::map<std::string, FilterFactory>& registry() {
  static std::map<std::string, FilterFactory> r;
  return r;
}

}  // namespace

void register_filter(const std::string& name, FilterFactory factory) {
  if (!registry().emplace(name, std::move(factory)).second) {
    throw ConfigError("trajectory filter '" + name + "' is registered twice");
  }
}

std::vector<std::string> registered_filters() {
  std::vector<std::string> names;
  for (const auto& [name, f] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<TrajectoryFilter> make_filter(const std::string& name, const AlgorithmConfig& config) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    std::string names;
    for (const auto& n : registered_filters()) names += (names.empty() ? "" : ", ") + n;
    throw ConfigError("algorithm.filters: unknown filter '" + name + "'; registered filters: " + names);
  }
  return it->second(config);
}

std::vector<std::unique_ptr<TrajectoryFilter>> make_filters(const AlgorithmConfig& config) {
  std::vector<std::unique_ptr<TrajectoryFilter>> out;
  for (const auto& name : config.filters) out.push_back(make_filter(name, config));
  return out;
}

std::vector<FilterReport> apply_filters(const std::vector<std::unique_ptr<TrajectoryFilter>>& filters,
                                        std::vector<rollout::Trajectory>& batch, const FilterContext& context) {
  std::vector<FilterReport> reports;
  for (const auto& f : filters) reports.push_back(f->apply(batch, context));
  return reports;
}

const TrajectoryFilter* refilling_filter(const std::vector<std::unique_ptr<TrajectoryFilter>>& filters) {
  for (const auto& f : filters)
    if (f->max_refill_rounds() > 0) return f.get();
  return nullptr;
}

int64_t count_groups(const std::vector<rollout::Trajectory>& batch) {
  std::set<int64_t> ids;
  for (const auto& t : batch) ids.insert(t.group_id);
  return static_cast<int64_t>(ids.size());
}

}  // namespace agentrl::algo
