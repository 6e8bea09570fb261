// Expert demonstrations: the env's expert driven through the same agent
// loop (prompts, chat template, context mode) as RL rollouts, so SFT data and
// RL trajectories look alike token for token.
//
// Thread-safety: functions are independent; each builds its own envs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/core/rng.h"
#include "agentrl/envs/env.h"
#include "agentrl/rollout/agent_loop.h"

namespace agentrl::rollout {

// Runs the expert on the first `episodes` tasks of `split` (shuffled by
// seed). Episodes the expert does not finish successfully are dropped.
//
// mistake_rate > 0: before each expert step, with this probability, the
// demonstration first sends a mistaken command (mistaken_command below) and
// lets the env answer it; the expert then goes on from the state the mistake
// left. Mistake turns are flagged Turn::demo_mistake: SFT keeps them in the
// context but trains only on the expert's commands, so the policy sees how to
// recover from its own kind of error (an episode of nothing but correct
// commands never shows what to do after "Nothing happens."). The mistakes are
// drawn from the episode's seed: the same demonstrations on every run.
std::vector<Trajectory> expert_trajectories(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                                            uint64_t seed, std::shared_ptr<const AgentContext> ctx,
                                            double mistake_rate = 0.0);

// The expert's command with one of its numbers (picked uniformly) replaced by
// another in 1..max(3, n+1): in ALFWorld a wrong object or receptacle
// instance ("take mug 1 from desk 2" for "take mug 3 from desk 2"), the error
// a small policy makes most. nullopt when the command has no number.
std::optional<std::string> mistaken_command(const std::string& command, Rng& rng);

// Chat conversations ({"messages": [...]}) of a trajectory: one for the
// whole episode in full mode, one per step in window mode. A demo_mistake
// turn's assistant message carries "weight": 0 (not trained on; the key of
// OpenAI's fine-tuning format, read by sft_sequences_from_jsonl); in window
// mode its step is left out. Inline mode throws UsageError (no chat form
// can mask the spliced tool output).
std::vector<nlohmann::json> trajectory_to_conversations(const Trajectory& t, const PromptConfig& prompt);

}  // namespace agentrl::rollout
