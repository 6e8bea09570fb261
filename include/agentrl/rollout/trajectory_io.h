// Trajectory records as JSON lines (one trajectory per line), written into
// the run directory every iteration (rollouts/iter_<N>.jsonl) so users can
// read what the agent did. Schema (read back by algo/trajectory_io.h and by
// `agentrl rollouts show`):
//   {episode_id, group_id, sample_index, task_id, task_type, context_mode,
//    reward, score, success, truncated, failed, error, loss_masked, metrics,
//    turns: [{observation_before, response, action, tool_output, reward,
//             invalid_action, void_turn, truncated, finish_reason,
//             n_context, n_generated, mean_entropy, entropies, logprobs}]}
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/rollout/trajectory.h"

namespace agentrl::rollout {

nlohmann::json trajectory_to_json(const Trajectory& t, bool with_token_stats = true);
// Writes all trajectories as JSONL atomically (temp file + rename).
void write_trajectories_jsonl(const std::string& path, const std::vector<Trajectory>& trajectories);
// A readable multi-line rendering of one trajectory record.
std::string format_trajectory(const nlohmann::json& record);

}  // namespace agentrl::rollout
