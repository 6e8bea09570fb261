// Trajectory: one episode of an agent in an env, token-exact.
//
// The tokens of a trajectory are exactly what the generation engine consumed
// and produced (token-in/token-out, never re-tokenised). Each Turn holds the
// context tokens added before the model spoke (template, observation: loss
// mask 0) and the generated tokens (loss mask 1) with their behaviour
// log-probs and full-vocabulary entropies.
//
// Context modes:
//  - full:   the episode is one growing sequence; the training sequence is
//            concat over turns of (context_tokens, generated_tokens).
//  - window: each turn is its own sample; context_tokens of a turn is the
//            whole prompt of that step (task + last k turns).
//  - inline: as full, one sequence per episode, but the whole episode is one
//            assistant message (Search-R1, SimpleTIR): a later turn's
//            context_tokens are the tool output spliced into the model's own
//            text, with no chat-turn tokens around it.
//
// Plain value types, torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace agentrl::rollout {

enum class ContextMode { kFull, kWindow, kInline };

// "full" | "window" | "inline".
inline const char* context_mode_name(ContextMode m) {
  switch (m) {
    case ContextMode::kFull: return "full";
    case ContextMode::kWindow: return "window";
    case ContextMode::kInline: return "inline";
  }
  return "unknown";
}
// One sequence per episode (full and inline) rather than one per turn (window).
inline bool one_sequence_per_episode(ContextMode m) { return m != ContextMode::kWindow; }

struct Turn {
  std::vector<int32_t> context_tokens;    // loss mask 0
  std::vector<int32_t> generated_tokens;  // loss mask 1
  std::vector<float> logprobs;            // behaviour log-probs, one per generated token
  std::vector<float> entropies;           // full-vocab entropies, one per generated token
  // Choice mode (rollout.constrain_actions): the token ids the engine sampled
  // each generated token among (GenerationResult::allowed_tokens; an empty
  // entry: that step was free). Empty when the turn was not constrained.
  std::vector<std::vector<int32_t>> allowed_tokens;
  std::string observation_before;         // env observation the model responded to (GiGPO anchor key)
  std::string user_message;               // the user-message text rendered into context_tokens (demos, display)
  std::string response;                   // decoded generated text
  std::string action;                     // parsed action sent to the env
  std::string tool_output;                // env observation returned after the action
  double reward = 0.0;                    // per-step env reward
  bool invalid_action = false;
  bool void_turn = false;
  bool truncated = false;                 // generation hit max_new_tokens / context limit
  // A deliberate mistake in an expert demonstration (sft.demo_mistake_rate):
  // part of the context that follows, but never trained on.
  bool demo_mistake = false;
  std::string finish_reason;
};

struct Trajectory {
  int64_t group_id = 0;      // tasks of one group share group_id (same task, same env seed)
  int64_t sample_index = 0;  // index within the group
  std::string episode_id;    // "<iteration>-<group>-<sample>"
  std::string task_id;
  std::string task_type;
  ContextMode context_mode = ContextMode::kFull;
  std::vector<Turn> turns;
  double reward = 0.0;       // outcome reward used by the estimators
  double score = 0.0;        // env score (may differ from reward, e.g. WebShop)
  bool success = false;
  bool truncated = false;    // episode hit the turn or context limit
  bool context_cut = false;  // ... the context limit (rollout.max_context_tokens): the model could not finish
  bool failed = false;       // env threw / timed out: excluded from training
  bool loss_masked = false;  // kept in group statistics but contributes no loss (SimpleTIR void-turn filter)
  std::string error;
  std::map<std::string, double> metrics;

  int64_t num_generated_tokens() const {
    int64_t n = 0;
    for (const auto& t : turns) n += static_cast<int64_t>(t.generated_tokens.size());
    return n;
  }
};

}  // namespace agentrl::rollout
