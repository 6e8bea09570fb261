// Estimator registry, shared group helpers and token-level broadcast
// (see advantage.h).
#include <cmath>
#include <map>
#include <string>

#include "agentrl/algo/advantage.h"
#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"

namespace agentrl::algo {
namespace {

std::map<std::string, EstimatorFactory>& registry() {
  static std::map<std::string, EstimatorFactory> r;
  return r;
}

std::string join(const std::vector<std::string>& names) { return strings::join(names, ", "); }

}  // namespace

void register_estimator(const std::string& name, EstimatorFactory factory) {
  if (!registry().emplace(name, std::move(factory)).second) {
    throw ConfigError("advantage estimator '" + name + "' is registered twice");
  }
}

std::vector<std::string> registered_estimators() {
  std::vector<std::string> names;
  for (const auto& [name, f] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<AdvantageEstimator> make_estimator(const AlgorithmConfig& config) {
  auto it = registry().find(config.adv_estimator);
  if (it == registry().end()) {
    throw ConfigError("algorithm.adv_estimator: unknown estimator '" + config.adv_estimator +
                      "'; registered estimators: " + join(registered_estimators()));
  }
  return it->second(config);
}

std::vector<double> group_normalized(const std::vector<double>& values, const std::vector<int64_t>& group_ids,
                                     bool divide_by_std, double eps, const std::vector<bool>& include) {
  if (values.size() != group_ids.size() || (!include.empty() && include.size() != values.size())) {
    throw Error("group_normalized: values, group_ids and include differ in length");
  }
  std::map<int64_t, std::vector<double>> members;
  for (size_t i = 0; i < values.size(); ++i) {
    if (include.empty() || include[i]) members[group_ids[i]].push_back(values[i]);
  }
  std::map<int64_t, std::pair<double, double>> stats;  // group -> (mean, unbiased std)
  for (const auto& [g, v] : members) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    double std = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
    stats[g] = {mean, std};
  }
  std::vector<double> out(values.size(), 0.0);
  for (size_t i = 0; i < values.size(); ++i) {
    auto m = members.find(group_ids[i]);
    // A group with fewer than two members in its statistics has no baseline.
    if (m == members.end() || m->second.size() < 2) continue;
    auto [mean, std] = stats[group_ids[i]];
    out[i] = values[i] - mean;
    if (divide_by_std) out[i] /= (std + eps);
  }
  return out;
}

double step_entropy(const rollout::Trajectory& trajectory, size_t turn) {
  const auto& t = trajectory.turns.at(turn);
  if (t.generated_tokens.empty()) return 0.0;
  if (t.entropies.size() != t.generated_tokens.size()) {
    throw Error("episode '" + trajectory.episode_id + "' turn " + std::to_string(turn) + ": " +
                std::to_string(t.entropies.size()) + " entropies for " + std::to_string(t.generated_tokens.size()) +
                " generated tokens; the step entropy needs one rollout entropy per generated token");
  }
  double sum = 0;
  for (float e : t.entropies) sum += e;
  return sum / static_cast<double>(t.entropies.size());
}

void assign_token_advantages(rollout::TrainBatch& batch, const std::vector<rollout::Trajectory>& trajectories,
                             const AdvantageResult& advantages) {
  if (!batch.turn_index.defined() || batch.turn_index.dim() != 2) {
    throw Error("assign_token_advantages: batch.turn_index must be a defined [N, T] tensor");
  }
  if (advantages.turn_advantages.size() != trajectories.size()) {
    throw Error("assign_token_advantages: " + std::to_string(advantages.turn_advantages.size()) +
                " advantage rows for " + std::to_string(trajectories.size()) + " trajectories");
  }
  const int64_t n = batch.turn_index.size(0), len = batch.turn_index.size(1);
  if (static_cast<int64_t>(batch.trajectory_of_row.size()) != n) {
    throw Error("assign_token_advantages: trajectory_of_row has " + std::to_string(batch.trajectory_of_row.size()) +
                " entries for " + std::to_string(n) + " rows");
  }
  auto turns = batch.turn_index.to(torch::kCPU, torch::kInt64).contiguous();
  auto out = torch::zeros({n, len}, torch::kFloat32);
  auto ti = turns.accessor<int64_t, 2>();
  auto oa = out.accessor<float, 2>();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t traj = batch.trajectory_of_row[r];
    if (traj < 0 || traj >= static_cast<int64_t>(trajectories.size())) {
      throw Error("assign_token_advantages: row " + std::to_string(r) + " names trajectory " + std::to_string(traj) +
                  " of " + std::to_string(trajectories.size()));
    }
    if (trajectories[traj].loss_masked) continue;
    const auto& adv = advantages.turn_advantages[traj];
    const int64_t row_turn = r < static_cast<int64_t>(batch.turn_of_row.size()) ? batch.turn_of_row[r] : -1;
    for (int64_t t = 0; t < len; ++t) {
      if (ti[r][t] < 0) continue;  // not a generated token
      const int64_t turn = row_turn >= 0 ? row_turn : ti[r][t];
      if (turn >= static_cast<int64_t>(adv.size())) {
        throw Error("assign_token_advantages: row " + std::to_string(r) + " token " + std::to_string(t) +
                    " belongs to turn " + std::to_string(turn) + " but trajectory " + std::to_string(traj) +
                    " has " + std::to_string(adv.size()) + " turns");
      }
      oa[r][t] = adv[turn];
    }
  }
  auto device = batch.loss_mask.defined() ? batch.loss_mask.device() : torch::Device(torch::kCPU);
  batch.advantages = out.to(device);
}

void mask_loss_masked_rows(rollout::TrainBatch& batch, const std::vector<rollout::Trajectory>& trajectories) {
  if (!batch.loss_mask.defined()) return;
  for (size_t r = 0; r < batch.trajectory_of_row.size(); ++r) {
    const int64_t traj = batch.trajectory_of_row[r];
    if (traj < 0 || traj >= static_cast<int64_t>(trajectories.size())) {
      throw Error("mask_loss_masked_rows: row " + std::to_string(r) + " names trajectory " + std::to_string(traj) +
                  " of " + std::to_string(trajectories.size()));
    }
    if (trajectories[traj].loss_masked) batch.loss_mask[static_cast<int64_t>(r)].zero_();
  }
}

}  // namespace agentrl::algo
