// GiGPO: Group-in-Group Policy Optimization (Feng et al. 2025, arXiv
// 2505.10978).
//   - episode-level advantage (eq. 3): outcome rewards normalised within the
//     episode group (same group_id): R_i - mean (mean_norm) or
//     (R_i - mean) / (std + eps) (mean_std_norm; unbiased std);
//   - anchor-state grouping (eq. 6): within one episode group, every step
//     whose observation text (Turn::observation_before) is identical joins
//     the same step group;
//   - step return (eq. 5): G_t = sum_{k >= t} gamma^{k-t} r_k, with r_k the
//     env step reward (gigpo.step_reward = turn) or 0 except the outcome
//     reward on the last step (outcome);
//   - step-level advantage (eq. 7): G_t normalised within its step group the
//     same way; a step group of one gets 0 (its own mean, as verl-agent);
//   - combined (eq. 8): A = A_episode + omega * A_step, per turn.
// Groups of one trajectory get episode advantage 0. All statistics are
// group-local (a group lives on one rank); loss_masked trajectories are in
// the statistics and get advantage 0.
#include "agentrl/algo/gigpo.h"

#include <map>
#include <utility>

#include "agentrl/algo/advantage.h"
#include "agentrl/core/error.h"
#include "estimator_util.h"

namespace agentrl::algo {

void GigpoConfig::visit(config::Visitor& v) {
  v.field("gamma", gamma, "discount of the step return (GiGPO eq. 5)", config::Range::closed(0, 1));
  v.field("omega", omega, "weight of the step-level advantage (GiGPO eq. 8)", config::Range::at_least(0));
  v.field("mode", mode, "normalisation of episode and step groups", {"mean_norm", "mean_std_norm"});
  v.field("step_reward", step_reward,
          "per-step reward of the step return: turn (env step rewards) or outcome (trajectory reward at the end)",
          {"turn", "outcome"});
  v.field("eps", eps, "epsilon added to the std in mean_std_norm", config::Range::positive());
}

AGENTRL_REGISTER_ESTIMATOR_OPTIONS(gigpo, GigpoConfig, "Group-in-Group Policy Optimization (arXiv 2505.10978)");

namespace {

class GigpoEstimator final : public AdvantageEstimator {
 public:
  explicit GigpoEstimator(const GigpoConfig& c) : cfg_(c) {
    if (cfg_.mode != "mean_norm" && cfg_.mode != "mean_std_norm") {
      throw ConfigError("algorithm.gigpo.mode: unknown mode '" + cfg_.mode + "'; expected mean_norm or mean_std_norm");
    }
    if (cfg_.step_reward != "turn" && cfg_.step_reward != "outcome") {
      throw ConfigError("algorithm.gigpo.step_reward: unknown value '" + cfg_.step_reward + "'; expected turn or outcome");
    }
  }
  std::string name() const override { return "gigpo"; }

  AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective&) const override {
    const bool by_std = cfg_.mode == "mean_std_norm";
    const auto episode = group_normalized(detail::outcome_rewards(batch), detail::group_ids(batch), by_std, cfg_.eps);

    // Flatten all steps; step groups keyed by (episode group, anchor text).
    std::vector<double> returns;
    std::vector<int64_t> step_group;
    std::map<std::pair<int64_t, std::string>, int64_t> anchor_ids;
    std::map<int64_t, int64_t> group_sizes;
    for (const auto& traj : batch) {
      const auto g = step_returns(traj);
      for (size_t t = 0; t < traj.turns.size(); ++t) {
        auto key = std::make_pair(traj.group_id, traj.turns[t].observation_before);
        auto it = anchor_ids.emplace(key, static_cast<int64_t>(anchor_ids.size())).first;
        returns.push_back(g[t]);
        step_group.push_back(it->second);
        group_sizes[it->second] += 1;
      }
    }
    const auto step = group_normalized(returns, step_group, by_std, cfg_.eps);

    AdvantageResult result;
    result.turn_advantages.resize(batch.size());
    result.turn_details.resize(batch.size());
    size_t flat = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      auto& out = result.turn_advantages[i];
      out.resize(batch[i].turns.size());
      result.turn_details[i].resize(batch[i].turns.size());
      for (size_t t = 0; t < batch[i].turns.size(); ++t, ++flat) {
        out[t] = batch[i].loss_masked ? 0.0f : static_cast<float>(episode[i] + cfg_.omega * step[flat]);
        result.turn_details[i][t] = {{"gigpo/episode_advantage", episode[i]},
                                     {"gigpo/step_advantage", step[flat]},
                                     {"gigpo/step_group_size", static_cast<double>(group_sizes[step_group[flat]])}};
      }
    }
    int64_t nontrivial = 0;
    for (const auto& [id, n] : group_sizes) nontrivial += n > 1 ? 1 : 0;
    result.diagnostics["gigpo/step_groups"] = static_cast<double>(group_sizes.size());
    result.diagnostics["gigpo/step_group_size_mean"] =
        group_sizes.empty() ? 0.0 : static_cast<double>(returns.size()) / static_cast<double>(group_sizes.size());
    result.diagnostics["gigpo/nontrivial_step_group_frac"] =
        group_sizes.empty() ? 0.0 : static_cast<double>(nontrivial) / static_cast<double>(group_sizes.size());
    return result;
  }

 private:
  std::vector<double> step_returns(const rollout::Trajectory& traj) const {
    const size_t n = traj.turns.size();
    std::vector<double> g(n, 0.0);
    double running = 0.0;
    for (size_t k = n; k-- > 0;) {
      double r = cfg_.step_reward == "turn" ? traj.turns[k].reward : (k + 1 == n ? traj.reward : 0.0);
      running = r + cfg_.gamma * running;
      g[k] = running;
    }
    return g;
  }

  GigpoConfig cfg_;
};

const EstimatorRegistrar kGigpo("gigpo", [](const AlgorithmConfig& c) { return std::make_unique<GigpoEstimator>(c.options<GigpoConfig>("gigpo")); });

}  // namespace
}  // namespace agentrl::algo
