// EMPG: Entropy-Modulated Policy Gradients (Wang et al. 2025, arXiv
// 2509.09265), on top of a group outcome advantage A(tau_i) (GRPO, or DAPO's
// std-normalised GRPO). A "step" is one turn with generated tokens; in full
// context mode steps are turn spans inside one sequence, in window mode each
// step is its own row, but both carry the same Trajectory::turns, so the
// computation below is identical for the two modes.
//
//   1. H_{i,t}  = mean over the step's generated tokens (thinking + action, no
//                 observation tokens) of the rollout-time full-vocab entropy;
//   2. H~_{i,t} = (H - min H) / (max H - min H + eps), min / max over all steps
//                 of the batch (all ranks);
//   3. g_{i,t}  = exp(-k H~_{i,t}) / mean_{batch steps} exp(-k H~), so the
//                 batch mean of g is exactly 1 (self-calibrating scaling);
//   4. f_{i,t}  = exp(-k' H~_{i,t+1}); no bonus on an episode's last step
//                 (nor when turn t+1 generated nothing);
//   5. A_mod    = g_{i,t} A(tau_i) + zeta f_{i,t};
//   6. A_final  = A_mod - mean_{batch steps} A_mod, optionally divided by
//                 (std + eps) (empg.final_std_norm; unbiased std over steps).
// Batch statistics cover steps of trainable (not loss_masked) trajectories;
// loss_masked trajectories and steps without tokens get 0. The group
// statistics of A(tau) include every trajectory (SimpleTIR convention).
#include "agentrl/algo/empg.h"

#include <cmath>
#include <limits>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/grpo.h"
#include "agentrl/core/error.h"
#include "estimator_util.h"

namespace agentrl::algo {

void EmpgConfig::visit(config::Visitor& v) {
  v.field("base", base, "base outcome advantage: grpo (algorithm.grpo settings) or dapo (std-normalised grpo)",
          {"grpo", "dapo"});
  v.field("k", k, "scale k of the gradient scaling g = exp(-k H) / mean exp(-k H)", config::Range::at_least(0));
  v.field("k_prime", k_prime, "scale k' of the future-clarity bonus exp(-k' H_{t+1})", config::Range::at_least(0));
  v.field("zeta", zeta, "weight zeta of the future-clarity bonus", config::Range::at_least(0));
  v.field("final_std_norm", final_std_norm, "divide the final zero-mean step advantages by their std");
  v.field("eps", eps, "epsilon of the batch min-max entropy normalisation", config::Range::positive());
}

AGENTRL_REGISTER_ESTIMATOR_OPTIONS(empg, EmpgConfig, "Entropy-Modulated Policy Gradients (arXiv 2509.09265)");

namespace {

struct Step {
  size_t traj;
  size_t turn;
  double entropy;
};

class EmpgEstimator final : public AdvantageEstimator {
 public:
  explicit EmpgEstimator(const AlgorithmConfig& c) : cfg_(c.options<EmpgConfig>("empg")), grpo_(c.options<GrpoConfig>("grpo")) {
    if (cfg_.base == "dapo") grpo_.norm_by_std = true;
    else if (cfg_.base != "grpo") throw ConfigError("algorithm.empg.base: unknown base '" + cfg_.base + "'; expected grpo or dapo");
  }
  std::string name() const override { return "empg"; }

  AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective& collective) const override {
    const auto base = group_normalized(detail::outcome_rewards(batch), detail::group_ids(batch), grpo_.norm_by_std,
                                       grpo_.eps);
    // Step index: steps_of[i][t] = position in `steps`, or -1.
    std::vector<Step> steps;
    std::vector<std::vector<int64_t>> steps_of(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      steps_of[i].assign(batch[i].turns.size(), -1);
      if (batch[i].loss_masked) continue;
      for (size_t t = 0; t < batch[i].turns.size(); ++t) {
        if (batch[i].turns[t].generated_tokens.empty()) continue;
        steps_of[i][t] = static_cast<int64_t>(steps.size());
        const double h = step_entropy(batch[i], t);
        // One NaN would make the batch min / max, and with them every
        // advantage of the batch, NaN.
        if (!std::isfinite(h))
          throw Error("empg: episode '" + batch[i].episode_id + "' turn " + std::to_string(t) +
                      " has a non-finite step entropy (" + std::to_string(h) +
                      "): the rollout's token entropies must be finite");
        steps.push_back({i, t, h});
      }
    }
    // (2) batch min-max normalisation.
    std::vector<double> lo = {std::numeric_limits<double>::infinity()};
    std::vector<double> hi = {-std::numeric_limits<double>::infinity()};
    for (const auto& s : steps) {
      lo[0] = std::min(lo[0], s.entropy);
      hi[0] = std::max(hi[0], s.entropy);
    }
    collective.all_reduce_min(lo);
    collective.all_reduce_max(hi);
    std::vector<double> norm(steps.size());
    for (size_t j = 0; j < steps.size(); ++j) norm[j] = (steps[j].entropy - lo[0]) / (hi[0] - lo[0] + cfg_.eps);
    // (3) self-calibrating scale.
    std::vector<double> sums = {0.0, static_cast<double>(steps.size())};
    for (double h : norm) sums[0] += std::exp(-cfg_.k * h);
    collective.all_reduce_sum(sums);
    const double total_steps = sums[1];
    const double mean_exp = total_steps > 0 ? sums[0] / total_steps : 1.0;
    std::vector<double> g(steps.size()), mod(steps.size()), bonus(steps.size(), 0.0);
    for (size_t j = 0; j < steps.size(); ++j) {
      g[j] = std::exp(-cfg_.k * norm[j]) / mean_exp;
      // (4) future-clarity bonus from the next step of the same episode.
      const auto& s = steps[j];
      if (s.turn + 1 < steps_of[s.traj].size() && steps_of[s.traj][s.turn + 1] >= 0) {
        bonus[j] = std::exp(-cfg_.k_prime * norm[steps_of[s.traj][s.turn + 1]]);
      }
      // (5) modulated advantage.
      mod[j] = g[j] * base[s.traj] + cfg_.zeta * bonus[j];
    }
    // (6) batch zero-mean (and optional std) normalisation over steps.
    std::vector<double> m = {0.0};
    for (double a : mod) m[0] += a;
    collective.all_reduce_sum(m);
    const double mean_mod = total_steps > 0 ? m[0] / total_steps : 0.0;
    std::vector<double> ss = {0.0};
    for (double a : mod) ss[0] += (a - mean_mod) * (a - mean_mod);
    collective.all_reduce_sum(ss);
    const double std_mod = total_steps > 1 ? std::sqrt(ss[0] / (total_steps - 1)) : 0.0;
    const double scale = cfg_.final_std_norm ? 1.0 / (std_mod + cfg_.eps) : 1.0;

    AdvantageResult result;
    result.turn_advantages.resize(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) result.turn_advantages[i].assign(batch[i].turns.size(), 0.0f);
    for (size_t j = 0; j < steps.size(); ++j) {
      result.turn_advantages[steps[j].traj][steps[j].turn] = static_cast<float>((mod[j] - mean_mod) * scale);
    }
    add_diagnostics(g, bonus, lo[0], hi[0], total_steps, mean_mod, std_mod, collective, result.diagnostics);
    add_turn_details(batch, steps, g, bonus, result);
    return result;
  }

 private:
  // Per step: the gain g, the bonus zeta * f added to it, the step entropy.
  void add_turn_details(const std::vector<rollout::Trajectory>& batch, const std::vector<Step>& steps,
                        const std::vector<double>& g, const std::vector<double>& bonus, AdvantageResult& r) const {
    r.turn_details.resize(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) r.turn_details[i].resize(batch[i].turns.size());
    for (size_t j = 0; j < steps.size(); ++j) {
      auto& d = r.turn_details[steps[j].traj][steps[j].turn];
      d["empg/gain"] = g[j];
      d["empg/bonus"] = cfg_.zeta * bonus[j];
      d["empg/entropy"] = steps[j].entropy;
    }
  }

  // Batch-global statistics of g: mean (1 by construction), std, min, max,
  // fraction amplified (g > 1) and attenuated (g < 1).
  static void add_diagnostics(const std::vector<double>& g, const std::vector<double>& bonus, double h_min,
                              double h_max, double total, double mean_mod, double std_mod, Collective& collective,
                              std::map<std::string, double>& d) {
    std::vector<double> s = {0, 0, 0, 0, 0};  // sum g, sum g^2, amplified, attenuated, sum bonus
    std::vector<double> lo = {std::numeric_limits<double>::infinity()};
    std::vector<double> hi = {-std::numeric_limits<double>::infinity()};
    for (size_t j = 0; j < g.size(); ++j) {
      s[0] += g[j];
      s[1] += g[j] * g[j];
      s[2] += g[j] > 1.0 ? 1 : 0;
      s[3] += g[j] < 1.0 ? 1 : 0;
      s[4] += bonus[j];
      lo[0] = std::min(lo[0], g[j]);
      hi[0] = std::max(hi[0], g[j]);
    }
    collective.all_reduce_sum(s);
    collective.all_reduce_min(lo);
    collective.all_reduce_max(hi);
    const bool any = total > 0;
    const double mean = any ? s[0] / total : 0.0;
    d["empg/steps"] = total;
    d["empg/g_mean"] = mean;
    d["empg/g_std"] = total > 1 ? std::sqrt(std::max(0.0, (s[1] - total * mean * mean) / (total - 1))) : 0.0;
    d["empg/g_min"] = any ? lo[0] : 0.0;
    d["empg/g_max"] = any ? hi[0] : 0.0;
    d["empg/amplified_frac"] = any ? s[2] / total : 0.0;
    d["empg/attenuated_frac"] = any ? s[3] / total : 0.0;
    d["empg/bonus_mean"] = any ? s[4] / total : 0.0;
    d["empg/entropy_min"] = any ? h_min : 0.0;
    d["empg/entropy_max"] = any ? h_max : 0.0;
    d["empg/modulated_mean"] = mean_mod;
    d["empg/modulated_std"] = std_mod;
  }

  EmpgConfig cfg_;
  GrpoConfig grpo_;
};

const EstimatorRegistrar kEmpg("empg", [](const AlgorithmConfig& c) { return std::make_unique<EmpgEstimator>(c); });

}  // namespace
}  // namespace agentrl::algo
