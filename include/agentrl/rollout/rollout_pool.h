// RolloutPool: runs many episodes concurrently against one Generator.
//
// Two modes (RolloutConfig::deterministic):
//  - deterministic (lock-step): every active episode submits its turn, the
//    whole set goes to Generator::generate_batch in episode order, then all
//    envs step in parallel; the outcome depends only on the seeds, so a
//    rollout is reproducible bit for bit (needed for bit-exact resume).
//  - throughput: each episode runs on its own thread and submits whenever it
//    is ready, so the engine batches whatever is waiting.
// In both modes an env that throws, or an episode that exceeds
// episode_timeout_s, fails that episode only: it is returned with
// failed = true and an error text, and excluded from training by the caller.
//
// Thread-safety: run() is called by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "agentrl/core/collective.h"
#include "agentrl/envs/env.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/rollout/generator.h"

namespace agentrl::rollout {

struct RolloutStats {
  int64_t episodes = 0;
  int64_t failed = 0;
  int64_t timed_out = 0;
  int64_t turns = 0;
  int64_t invalid_turns = 0;
  int64_t void_turns = 0;
  int64_t generated_tokens = 0;
  int64_t successes = 0;
  double reward_sum = 0.0;
  double wall_seconds = 0.0;
  double generation_seconds = 0.0;  // time spent waiting for the generator
  double env_seconds = 0.0;         // summed over episodes
  // Scalars for the metrics logger ("rollout/success_rate", ...).
  std::map<std::string, double> scalars(const std::string& prefix = "rollout/") const;
  // Field-wise sum (the rounds of one iteration).
  RolloutStats& operator+=(const RolloutStats& other);
  // Sums the counts, rewards and env seconds over the ranks of `collective`;
  // generation_seconds becomes the ranks' mean (they generate in parallel);
  // wall_seconds stays this rank's.
  void all_reduce(Collective& collective);
};

class RolloutPool {
 public:
  RolloutPool(Generator& generator, std::shared_ptr<const envs::EnvSuite> suite,
              std::shared_ptr<const AgentContext> ctx);

  // Runs the episodes; results are in the order of `episodes`.
  std::vector<Trajectory> run(const std::vector<EpisodeSpec>& episodes, RolloutStats* stats = nullptr);

 private:
  std::vector<Trajectory> run_lockstep(const std::vector<EpisodeSpec>& episodes, RolloutStats& stats);
  std::vector<Trajectory> run_threaded(const std::vector<EpisodeSpec>& episodes, RolloutStats& stats);

  Generator& generator_;
  std::shared_ptr<const envs::EnvSuite> suite_;
  std::shared_ptr<const AgentContext> ctx_;
};

// Builds the episode list of one iteration: each task repeated group_size
// times with one env seed per group and one sample seed per episode.
std::vector<EpisodeSpec> make_group_episodes(const std::vector<envs::Task>& tasks, int64_t group_size,
                                             uint64_t seed, int64_t iteration);

}  // namespace agentrl::rollout
