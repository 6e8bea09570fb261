// Display of trajectory records: the JSON lines of rollouts/iter_<N>.jsonl,
// whose schema and (de)serialisation are algo/trajectory_io.h's, rendered for
// `agentrl rollouts show`.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/rollout/trajectory.h"

namespace agentrl::rollout {

// A readable multi-line rendering of one trajectory record.
std::string format_trajectory(const nlohmann::json& record);

}  // namespace agentrl::rollout
