// AgentLoop: one multi-turn episode of a policy in an env, token-exact.
//
// EpisodeRunner is a small state machine so the same episode logic serves
// both rollout modes of RolloutPool: start() resets the env and returns the
// first generation request; on_generation() consumes the model's output,
// parses and applies the action, appends the observation and returns the next
// request (or nullopt when the episode is over). The tokens recorded in the
// Trajectory are exactly the prompt tokens sent to the generator and the
// tokens it returned (never re-tokenised): context tokens get loss mask 0,
// generated tokens loss mask 1 (rollout/batch_builder.h). One exception, in
// inline mode: an end-of-turn token that ends a turn the episode continues
// after is dropped (with its log-prob), since the tool output continues the
// same assistant message (as Search-R1 and SimpleTIR do).
//
// Thread-safety: one EpisodeRunner is driven by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentrl/envs/env.h"
#include "agentrl/envs/projection.h"
#include "agentrl/rollout/generator.h"
#include "agentrl/rollout/rollout_config.h"
#include "agentrl/rollout/trajectory.h"
#include "agentrl/text/chat_template.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::rollout {

// Everything an episode needs besides its env; shared by all runners of a
// rollout (read-only).
struct AgentContext {
  RolloutConfig rollout;
  PromptConfig prompt;
  std::shared_ptr<const text::Tokenizer> tokenizer;
  std::shared_ptr<const text::ChatTemplate> chat;
  SamplingParams sampling;  // temperature/top-p/top-k; the seed is set per request
  // Choice mode (rollout.constrain_actions in training rollouts,
  // rollout.eval_constrain_actions in evaluations): every request carries
  // as allowed_texts the responses prompt.expert_response makes of the env's
  // admissible actions (less prompt.admissible_exclude), so the policy picks
  // one of them token by token. Envs without admissible actions, and states
  // whose list is a template (Env::admissible_actions_exhaustive), are
  // unaffected. The turns keep the engine's allowed_tokens, so that the
  // trainer scores the same choices.
  bool constrain_actions = false;
};

struct EpisodeSpec {
  envs::Task task;
  uint64_t env_seed = 0;     // same for the G samples of a group
  uint64_t sample_seed = 0;  // differs per sample
  int64_t group_id = 0;
  int64_t sample_index = 0;
  std::string episode_id;
  std::string cache_key;     // shared by a group: engine prefix sharing
};

class EpisodeRunner {
 public:
  EpisodeRunner(std::unique_ptr<envs::Env> env, EpisodeSpec spec, std::shared_ptr<const AgentContext> ctx);

  // Resets the env; returns the first request, or nullopt if the episode
  // cannot start (context limit). Env exceptions propagate (the pool records
  // them as a failed episode).
  std::optional<GenerationRequest> start();
  // Applies the generator's output for the pending request.
  std::optional<GenerationRequest> on_generation(const GenerationResult& result);
  // Builds a GenerationResult from scripted text (expert demos, tests): the
  // text is tokenised as if generated, followed by the chat template's end
  // token (inline mode: none after a text that ends at one of the env's stop
  // strings, where the engine stops); logprobs and entropies are 0.
  GenerationResult scripted_result(const std::string& response_text) const;

  bool done() const { return done_; }
  const Trajectory& trajectory() const { return traj_; }
  Trajectory take_trajectory() { return std::move(traj_); }
  envs::Env& env() { return *env_; }
  const EpisodeSpec& spec() const { return spec_; }
  // Seconds spent inside env reset/step so far.
  double env_seconds() const { return env_seconds_; }

 private:
  std::string fill(const std::string& tmpl, const std::string& observation, bool truncate = true) const;
  std::string truncate_observation(const std::string& observation) const;
  std::string window_history() const;
  std::vector<std::string> shown_actions() const;  // admissible, less admissible_exclude
  std::string admissible_text() const;
  envs::Projection project(const std::string& response) const;
  std::optional<GenerationRequest> make_request(std::vector<int32_t> new_context_tokens,
                                                const std::string& observation, const std::string& user_message);
  std::optional<GenerationRequest> next_turn(const std::string& observation);
  std::optional<GenerationRequest> inline_turn(const std::string& observation);

  std::unique_ptr<envs::Env> env_;
  EpisodeSpec spec_;
  std::shared_ptr<const AgentContext> ctx_;
  Trajectory traj_;
  std::vector<int32_t> context_;  // full mode: everything fed + generated so far
  std::string current_observation_;
  bool done_ = false;
  int turn_limit_ = 0;
  double env_seconds_ = 0.0;
};

// Runs one episode to the end with a scripted policy (e.g. the env's expert):
// `policy(env)` returns the response text for the current state, or nullopt
// to stop. Used for demonstrations and tests.
Trajectory run_scripted_episode(EpisodeRunner& runner,
                                const std::function<std::optional<std::string>(envs::Env&)>& policy);

// The env's expert phrased with PromptConfig::expert_response.
std::function<std::optional<std::string>(envs::Env&)> expert_policy(const PromptConfig& prompt);
// One command phrased with PromptConfig::expert_response ({action}, {thought}).
std::string expert_response_text(const PromptConfig& prompt, const std::string& action);

}  // namespace agentrl::rollout
