// JSONL trajectory dumps: one JSON object per line, one line per trajectory.
// The one serializer of trajectories: the trainer writes rollouts/iter_<N>.jsonl
// with it, `agentrl advantages` reads them back, `agentrl rollouts show`
// displays them (rollout/trajectory_io.h).
//
// Record schema (keys; "?" = optional with the default shown):
//   group_id      int       required
//   sample_index  int       required
//   reward        number    required (outcome reward used by the estimators)
//   turns         array     required (may be empty)
//   episode_id    string?   "<group_id>-<sample_index>"
//   task_id       string?   ""        task_type string? ""
//   score         number?   = reward  success   bool?  false
//   truncated     bool?     false     loss_masked bool? false
//   context_mode  string?   "full"    ("full" | "window" | "inline")
//   failed        bool?     false     error string? ""  (a crashed episode)
//   metrics       object?   ignored on reading (the env's episode metrics)
// Each turn:
//   response, action, observation_before, tool_output, finish_reason  string? ""
//   reward        number?   0
//   invalid_action, void_turn, truncated   bool? false
//   n_generated   int       number of generated tokens; required unless
//                           generated_tokens or entropies is given
//   generated_tokens  [int]?   token ids; absent: n_generated zeros (ids are
//                              not needed by the estimators, counts are)
//   context_tokens    [int]?   []   (n_context: their count, written without ids)
//   entropies     [number]? per-token rollout entropies (length n_generated)
//   mean_entropy  number?   used when entropies is absent: the turn gets
//                           n_generated copies (same step mean, which is all
//                           EMPG uses)
//   logprobs      [number]? per-token behaviour log-probs (length n_generated)
// Unknown keys are ignored (forward compatibility); wrong types or
// inconsistent lengths throw FormatError naming file, line and key.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/algo/advantage.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::algo {

// Parses one record. `file` and `line` are used in error messages only.
rollout::Trajectory parse_trajectory_json(const std::string& json_text, const std::string& file, int64_t line);
// Reads every non-blank line of `path`. Throws IoError (cannot open) or
// FormatError.
std::vector<rollout::Trajectory> read_trajectories_jsonl(const std::string& path);
// One record (no trailing newline); round-trips through parse_trajectory_json
// (token ids only with `with_token_ids`: else n_context / n_generated).
std::string trajectory_to_json(const rollout::Trajectory& trajectory, bool with_token_ids = true);
// The run directory's rollouts/iter_<N>.jsonl: every trajectory, token
// statistics but no token ids, written atomically (temp file + rename).
void write_trajectories_jsonl(const std::string& path, const std::vector<rollout::Trajectory>& trajectories);

// What the estimator made of a trained batch, one line per trajectory:
// {"episode_id", "turn_advantages": [per turn], "turn_details": [per turn
// {"<estimator>/<name>": value}]} (rollouts/iter_N.advantages.jsonl beside
// the dumped trajectories; `agentrl dashboard` shows it). Atomic write.
void write_advantages_jsonl(const std::string& path, const std::vector<rollout::Trajectory>& batch,
                            const AdvantageResult& result);

}  // namespace agentrl::algo
