// Evaluator: runs held-out episodes with the evaluation sampling settings
// and reports the env's own metrics: success overall and per task type,
// mean score and reward, turns, invalid actions.
//
// Thread-safety: one evaluation at a time per Evaluator.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/envs/env.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/rollout/generator.h"

namespace agentrl::train {

struct EvalReport {
  std::string split;
  int64_t episodes = 0;
  int64_t failed = 0;
  double success_rate = 0.0;
  double mean_score = 0.0;
  double mean_reward = 0.0;
  double mean_turns = 0.0;
  double invalid_action_ratio = 0.0;
  int64_t context_cut = 0;  // episodes the context limit ended (they count as failures)
  std::map<std::string, std::pair<int64_t, int64_t>> per_type;  // type -> (successes, episodes)
  // The env's own episode metrics (Trajectory::metrics, e.g. the code tool's
  // code_blocks), each the mean over the episodes that did not fail; an
  // episode that does not report a metric counts 0 for it.
  std::map<std::string, double> env_metrics;
  std::vector<rollout::Trajectory> trajectories;

  // "eval/success_rate", "eval/success/<type>", "eval/env/<metric>", ...
  std::map<std::string, double> scalars(const std::string& prefix = "eval/") const;
  nlohmann::json to_json() const;
};

// Evaluates the first `episodes` tasks of `split` (0 = all) in natural order,
// `samples_per_task` episodes per task (more than one only makes sense when
// ctx samples), seeds derived from `seed`: the same seed gives the same
// episodes, so evaluations of successive checkpoints use the same draws.
EvalReport evaluate(rollout::Generator& generator, std::shared_ptr<const envs::EnvSuite> suite,
                    std::shared_ptr<const rollout::AgentContext> ctx, const std::string& split, int64_t episodes,
                    uint64_t seed, int64_t samples_per_task = 1);

// Summarises already-finished trajectories (also used for scripted policies).
// evaluate() and evaluate_scripted() also log a warning naming
// rollout.max_context_tokens when the context limit ended any episode.
EvalReport summarize(const std::string& split, std::vector<rollout::Trajectory> trajectories);

// Evaluates a scripted policy (e.g. rollout::expert_policy, what `agentrl
// eval --policy expert` runs) through the agent loop: the first `episodes`
// tasks of `split` (0 = all) in natural order, one episode each, env seed =
// task index, responses parsed by the env like a model's.
EvalReport evaluate_scripted(const std::function<std::optional<std::string>(envs::Env&)>& policy,
                             const envs::EnvSuite& suite, std::shared_ptr<const rollout::AgentContext> ctx,
                             const std::string& split, int64_t episodes);

}  // namespace agentrl::train
