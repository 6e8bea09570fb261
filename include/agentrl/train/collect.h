// Group collection of one RL iteration: rollouts, filters, and the refill
// rounds of dynamic sampling.
//
// Users: the RL trainer (step 1 of an iteration).
// Thread-safety: trainer thread only; collectives in the same order on every rank.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/algo/filter.h"
#include "agentrl/core/collective.h"
#include "agentrl/envs/env.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/rollout/generator.h"
#include "agentrl/rollout/trajectory.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/run_setup.h"
#include "agentrl/train/trainer_state.h"

namespace agentrl::train {

// The `round` argument of make_group_episodes (which seeds every env and
// sampling stream of the round) for generation round `attempt` (0 = the
// iteration's first, then refills) of iteration `iteration`: distinct for
// every (iteration, attempt) pair, however large algorithm.zero_variance.max_retries.
int64_t rollout_round(int64_t iteration, int64_t attempt);

// rollouts/iter_N[_rankR]<suffix>: where iteration N's dumps of this rank go
// (the rank part only with more than one rank).
std::string rollout_dump_path(const RunPaths& paths, int64_t iteration, int rank, int world, const std::string& suffix);

struct CollectInputs {
  rollout::Generator* generator = nullptr;
  std::shared_ptr<const envs::EnvSuite> suite;
  std::shared_ptr<const rollout::AgentContext> ctx;
  const std::vector<std::unique_ptr<algo::TrajectoryFilter>>* filters = nullptr;
  const RunPaths* paths = nullptr;
  Collective* collective = nullptr;
};

// Rolls out rollout.tasks_per_iteration groups, applies the filters, and
// while a filter that refills (algorithm.zero_variance: DAPO dynamic
// sampling) has dropped groups, runs up to its max_refill_rounds() extra
// rounds of its refill_groups(missing) new groups. Failed episodes are
// counted and removed. Writes rollouts/iter_<it>.jsonl when configured.
// Adds "rollout/...", "filter/..." scalars (summed over ranks) to `metrics`.
// With several ranks every rank draws the same global task list and runs
// the groups of its own slice (groups are never split across ranks, and
// seeds follow the global group index, so the union equals a 1-rank run).
std::vector<rollout::Trajectory> collect_groups(const CollectInputs& in, const ExperimentConfig& cfg,
                                                TaskCursor& cursor, int64_t iteration,
                                                std::map<std::string, double>& metrics);

}  // namespace agentrl::train
