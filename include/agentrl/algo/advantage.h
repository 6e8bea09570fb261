// Advantage estimators: from group-structured trajectories with outcome
// rewards (and per-turn data) to one advantage per turn, broadcast to the
// turn's generated tokens by assign_token_advantages.
//
// Estimators register themselves by name from a static initialiser
// (EstimatorRegistrar); the trainer selects one with
// `algorithm.adv_estimator`. Registered: grpo, drgrpo, rloo, reinforce_pp,
// empg, gigpo (one file each under src/algo/).
//
// Conventions shared by every estimator:
//  - outcome reward of a trajectory = Trajectory::reward;
//  - groups = trajectories with the same group_id. A group must live on one
//    rank (the rollout produces whole groups); group statistics are local.
//    Groups of one trajectory get advantage 0 (no baseline exists);
//  - batch-global statistics (EMPG's entropy range and scale, REINFORCE++
//    whitening) go through the Collective, so results on N ranks equal one
//    process; they are computed over what is trained on, i.e. they skip
//    loss_masked trajectories, while group statistics include them
//    (SimpleTIR keeps void trajectories in their group's statistics);
//  - loss_masked trajectories get advantage 0 on every turn.
//
// Thread-safety: estimators are immutable after construction; compute() may
// be called concurrently on different batches. The registry is safe during
// static initialisation and read-only afterwards.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/algo/algo_config.h"
#include "agentrl/core/collective.h"
#include "agentrl/rollout/train_batch.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::algo {

struct AdvantageResult {
  // turn_advantages[i][t]: advantage of turn t of trajectory i (same shape as
  // batch[i].turns).
  std::vector<std::vector<float>> turn_advantages;
  // Estimator-specific diagnostics, keys prefixed "<estimator>/".
  std::map<std::string, double> diagnostics;
  // Optional per-turn values for inspection (written next to the dumped
  // rollouts, shown by `agentrl dashboard`): turn_details[i][t] maps
  // "<estimator>/<name>" to a value (EMPG's gain and bonus of the step,
  // GiGPO's step-group size). Empty, or shaped like turn_advantages.
  std::vector<std::vector<std::map<std::string, double>>> turn_details;
};

class AdvantageEstimator {
 public:
  AdvantageEstimator() = default;
  AdvantageEstimator(const AdvantageEstimator&) = delete;
  AdvantageEstimator& operator=(const AdvantageEstimator&) = delete;
  virtual ~AdvantageEstimator() = default;

  virtual std::string name() const = 0;
  // Computes per-turn advantages of this rank's part of the batch. All ranks
  // must call it together (it may all-reduce). Throws agentrl::Error when the
  // data lacks what the estimator needs (e.g. EMPG without entropies).
  virtual AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective& collective) const = 0;
};

using EstimatorFactory = std::function<std::unique_ptr<AdvantageEstimator>(const AlgorithmConfig&)>;

// Registers `name`; duplicate names throw ConfigError. Call from a static
// initialiser (use EstimatorRegistrar).
void register_estimator(const std::string& name, EstimatorFactory factory);
// Registered names, sorted.
std::vector<std::string> registered_estimators();
// Builds config.adv_estimator. Unknown name -> ConfigError listing the
// registered names.
std::unique_ptr<AdvantageEstimator> make_estimator(const AlgorithmConfig& config);

struct EstimatorRegistrar {
  EstimatorRegistrar(const char* name, EstimatorFactory factory) { register_estimator(name, std::move(factory)); }
};

// Fills batch.advantages [N, T] float32 (on the device of batch.loss_mask)
// from per-turn advantages: row n belongs to trajectory
// batch.trajectory_of_row[n]; a token's turn is batch.turn_of_row[n] when
// >= 0 (window mode), else batch.turn_index[n, t] (full mode); tokens with no
// turn (-1) get 0, as do loss_masked trajectories. Throws agentrl::Error on
// an inconsistent batch (row or turn out of range, shape mismatch).
void assign_token_advantages(rollout::TrainBatch& batch, const std::vector<rollout::Trajectory>& trajectories,
                             const AdvantageResult& advantages);

// Zeroes batch.loss_mask on every row of a loss_masked trajectory, so that
// token-mean aggregation does not count its tokens. Idempotent.
void mask_loss_masked_rows(rollout::TrainBatch& batch, const std::vector<rollout::Trajectory>& trajectories);

// The trainer's advantage step in one call: estimator.compute, then
// assign_token_advantages and mask_loss_masked_rows on `batch`. Returns the
// estimator's diagnostics plus "advantage/mean|std|min|max|count" over the
// batch's loss tokens (across ranks).
// `result`, when given, receives the estimator's result (for the dump).
std::map<std::string, double> estimate_and_assign(const AdvantageEstimator& estimator,
                                                  const std::vector<rollout::Trajectory>& trajectories,
                                                  rollout::TrainBatch& batch, Collective& collective,
                                                  AdvantageResult* result = nullptr);

// ---- helpers shared by the estimators (public for tests and extensions) ----

// Outcome rewards normalised within groups: r_i - mean_g, divided by
// (std_g + eps) when divide_by_std (std unbiased). Singleton groups -> 0.
// Members with include[i] == false are left out of the statistics but still
// get an advantage (include empty = all).
std::vector<double> group_normalized(const std::vector<double>& values, const std::vector<int64_t>& group_ids,
                                     bool divide_by_std, double eps, const std::vector<bool>& include = {});

// Mean over a turn's generated tokens of the rollout-time full-vocabulary
// entropy. Throws agentrl::Error naming the episode and turn when a turn with
// generated tokens has no entropies, or a different number of them.
double step_entropy(const rollout::Trajectory& trajectory, size_t turn);

}  // namespace agentrl::algo
