// advantage_report (see advantage_report.h).
#include "agentrl/algo/advantage_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/diagnostics.h"
#include "agentrl/algo/filter.h"
#include "agentrl/core/jsonl.h"

namespace agentrl::algo {

AdvantageReport advantage_report(std::vector<rollout::Trajectory> batch, const AlgorithmConfig& config,
                                 Collective& collective) {
  AdvantageReport report;
  const auto estimator = make_estimator(config);  // validates the name before any work
  const auto filters = make_filters(config);
  const auto reports = apply_filters(filters, batch, FilterContext{true});
  report.diagnostics = filter_metrics(reports);
  for (const auto& r : reports) report.diagnostics.insert(r.metrics.begin(), r.metrics.end());
  const auto result = estimator->compute(batch, collective);
  report.diagnostics.insert(result.diagnostics.begin(), result.diagnostics.end());

  double sum = 0, sq = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  int64_t n = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& traj = batch[i];
    for (size_t t = 0; t < traj.turns.size(); ++t) {
      const auto& turn = traj.turns[t];
      nlohmann::json j;
      j["episode"] = traj.episode_id;
      j["group"] = traj.group_id;
      j["sample"] = traj.sample_index;
      j["step"] = t;
      j["reward"] = traj.reward;
      j["step_reward"] = turn.reward;
      if (!turn.generated_tokens.empty() && turn.entropies.size() == turn.generated_tokens.size()) {
        j["step_entropy"] = step_entropy(traj, t);
      } else {
        j["step_entropy"] = nullptr;
      }
      j["n_generated"] = turn.generated_tokens.size();
      j["loss_masked"] = traj.loss_masked;
      const double a = result.turn_advantages[i][t];
      j["advantage"] = a;
      report.lines.push_back(json_text(j));
      if (!traj.loss_masked && !turn.generated_tokens.empty()) {
        sum += a;
        sq += a * a;
        lo = std::min(lo, a);
        hi = std::max(hi, a);
        ++n;
      }
    }
  }
  const double mean = n > 0 ? sum / n : 0.0;
  report.diagnostics["advantage/step_mean"] = mean;
  report.diagnostics["advantage/step_std"] = n > 1 ? std::sqrt(std::max(0.0, (sq - n * mean * mean) / (n - 1))) : 0.0;
  report.diagnostics["advantage/step_min"] = n > 0 ? lo : 0.0;
  report.diagnostics["advantage/step_max"] = n > 0 ? hi : 0.0;
  report.diagnostics["advantage/steps"] = static_cast<double>(n);
  report.diagnostics["batch/trajectories"] = static_cast<double>(batch.size());
  return report;
}

}  // namespace agentrl::algo
