// Expert demonstrations: the env's expert driven through the same agent
// loop (prompts, chat template, context mode) as RL rollouts, so SFT data and
// RL trajectories look alike token for token.
//
// Thread-safety: functions are independent; each builds its own envs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/envs/env.h"
#include "agentrl/rollout/agent_loop.h"

namespace agentrl::rollout {

// Runs the expert on the first `episodes` tasks of `split` (shuffled by
// seed). Episodes the expert does not finish successfully are dropped.
std::vector<Trajectory> expert_trajectories(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                                            uint64_t seed, std::shared_ptr<const AgentContext> ctx);

// Chat conversations ({"messages": [...]}) of a trajectory: one for the
// whole episode in full mode, one per step in window mode.
std::vector<nlohmann::json> trajectory_to_conversations(const Trajectory& t, const PromptConfig& prompt);

}  // namespace agentrl::rollout
