// Prompt preview: one scripted episode run through EpisodeRunner — the code
// path every rollout takes — printed step by step: the exact text the policy
// sees (its prompt tokens decoded with special tokens as text), the token
// counts, the scripted response and what the env made of it. `agentrl env
// prompt` uses it so that a user can hold a config's prompt against the
// template of the paper it follows.
//
// Thread-safety: single-threaded; drives the runner it is given.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "agentrl/rollout/agent_loop.h"

namespace agentrl::rollout {

struct PreviewOptions {
  // Full context mode: print the whole context at every step (default: the
  // first prompt whole, then only the tokens each step appends).
  bool whole_context = false;
};

struct PreviewSummary {
  int steps = 0;                       // responses applied to the env
  bool success = false;
  bool truncated = false;              // turn or context limit
  bool out_of_responses = false;       // the script ended before the episode
  double reward = 0.0;
  std::vector<int64_t> prompt_tokens;  // per step: tokens of the prompt the policy saw
};

using ScriptedResponses = std::function<std::optional<std::string>(envs::Env&)>;

// Runs the episode of `runner` (not yet started) with `responses` (nullopt
// ends the script) and writes the preview to `out`; `tokenizer` is the one of
// the runner's AgentContext. Env exceptions propagate.
PreviewSummary preview_episode(EpisodeRunner& runner, const text::Tokenizer& tokenizer,
                               const ScriptedResponses& responses,
                               const PreviewOptions& options, std::ostream& out);

// Splits a responses file into responses. When a line holding only "." occurs,
// such lines end the responses (which may then span lines, e.g. a code
// block); otherwise every non-blank line is one response. Trailing newlines
// of a multi-line response are dropped.
std::vector<std::string> split_responses(const std::string& text);

}  // namespace agentrl::rollout
