// Configuration of rollouts: how episodes are run, prompted and batched.
// Config sections "rollout" (RolloutConfig) and "prompt" (PromptConfig).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agentrl/core/config.h"

namespace agentrl::rollout {

// Prompt text of an agent episode. Placeholders, replaced literally:
//   {task}                 the env's task description
//   {observation}          the current observation (truncated to the budget)
//   {admissible_actions}   comma-separated admissible actions ("" if none)
//   {step}                 1-based index of the current step
//   {history}              window mode: the last k "Observation: ...\nAction: ..." pairs
struct PromptConfig {
  std::string system =
      "You are an agent acting in a text environment. Think briefly inside <think> </think>, then give "
      "exactly one action inside <action> </action>.";
  // First user message of an episode (both modes) and every window-mode step.
  std::string first_user = "Task: {task}\nObservation: {observation}\nAdmissible actions: {admissible_actions}";
  // Later user messages in full mode (the observation after an action).
  std::string next_user = "Observation: {observation}\nAdmissible actions: {admissible_actions}";
  // Window mode: every step's single user message.
  std::string window_user =
      "Task: {task}\n{history}Step {step}. Observation: {observation}\nAdmissible actions: {admissible_actions}";
  // Window mode: the user message of the first step ("" = window_user);
  // verl-agent's ALFWorld prompt has no history part at step 1.
  std::string window_first_user;
  // Window mode: a step's user message longer than this many characters
  // (code points) is rendered with window_first_user instead, which has no
  // history (verl-agent's WebShop: 13,000). 0 = never.
  int64_t window_fallback_chars = 0;
  // Window mode: one history entry ({n} step number, {observation}, {action})
  // and what joins the entries into {history}.
  std::string history_entry = "Step {n}. Observation: {observation}\nAction: {action}\n";
  std::string history_separator;
  // How {admissible_actions} lists the actions: each as admissible_item
  // ({action}), joined by admissible_separator, without admissible_exclude.
  std::string admissible_item = "{action}";
  std::string admissible_separator = ", ";
  std::vector<std::string> admissible_exclude;
  // How a scripted expert phrases its response (used for demos).
  std::string expert_response = "<think>{thought}</think><action>{action}</action>";
  bool show_admissible_actions = true;
  // Inline mode: the text spliced into the assistant message after a tool
  // call ({observation}: the env's output, which for Deep Search and the code
  // tool already carries Search-R1's / SimpleTIR's wrapping).
  std::string inline_observation = "{observation}";

  void visit(config::Visitor& v) {
    v.field("system", system, "system prompt (empty = no system message)");
    v.field("first_user", first_user, "first user message; placeholders {task} {observation} {admissible_actions} {step}");
    v.field("next_user", next_user, "full mode: user message after each action");
    v.field("window_user", window_user,
            "window mode: the user message of every step (adds {history}, {history_length} = entries in it, "
            "{prev_steps} = steps taken)");
    v.field("window_first_user", window_first_user, "window mode: the user message of step 1 (empty = window_user)");
    v.field("window_fallback_chars", window_fallback_chars,
            "window mode: a user message longer than this many characters falls back to window_first_user (no "
            "history; verl-agent WebShop: 13000); 0 = never",
            config::Range::at_least(0));
    v.field("history_entry", history_entry, "window mode: one step of {history} ({n}, {observation}, {action})");
    v.field("history_separator", history_separator, "window mode: text between the entries of {history}");
    v.field("admissible_item", admissible_item, "one action in {admissible_actions} ({action})");
    v.field("admissible_separator", admissible_separator, "text between the actions of {admissible_actions}");
    v.field("admissible_exclude", admissible_exclude, "actions left out of {admissible_actions} (e.g. help)");
    v.field("expert_response", expert_response, "response format of the scripted expert ({thought}, {action})");
    v.field("show_admissible_actions", show_admissible_actions, "fill {admissible_actions} (else empty)");
    v.field("inline_observation", inline_observation,
            "inline mode: the text spliced into the assistant message after each action ({observation} and the "
            "other placeholders of first_user)");
  }
};

struct RolloutConfig {
  int64_t group_size = 8;          // G episodes per task (same env seed)
  int64_t tasks_per_iteration = 16;  // B tasks per iteration
  std::string context_mode = "full";  // full | window | inline
  int64_t window_turns = 2;        // window mode: k previous turns shown
  int64_t max_turns = 50;          // cap on steps (env's own limit also applies)
  int64_t max_new_tokens = 256;    // per turn
  int64_t max_context_tokens = 4096;  // prompt + generation; beyond it the episode ends truncated
  int64_t observation_token_budget = 512;  // longer observations are cut with a marker
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;
  double eval_temperature = 0.0;   // 0 = greedy evaluation
  double eval_top_p = 1.0;         // nucleus sampling at evaluation (SimpleTIR validates at top_p 0.7)
  bool constrain_actions = false;  // training rollouts pick among the admissible actions (AgentContext)
  bool eval_constrain_actions = false;  // evaluation picks among the admissible actions (AgentContext)
  double invalid_action_penalty = 0.0;  // subtracted from the reward per invalid action
  std::string invalid_penalty_on = "any";  // any: format or env-rejected actions; format: unparseable responses only
  std::string projection = "env";  // response -> action: env (env.extract_action) | verl-agent (envs/projection.h)
  int64_t projection_fallback_chars = 30;  // verl-agent projection: characters an invalid response sends
  double reward_scale = 1.0;       // env rewards are multiplied by this (verl-agent: 10 for a win)
  std::string reward_on = "env";   // env: the env's reward; success: 1 for a won episode, else 0
  int64_t concurrency = 64;        // episodes in flight at once
  double episode_timeout_s = 600;  // wall-clock limit per episode; beyond it the episode fails
  bool deterministic = true;       // lock-step turns: bit-exact reproducible rollouts
  bool dump_trajectories = true;   // write rollouts/iter_N.jsonl in the run directory

  void visit(config::Visitor& v) {
    v.field("group_size", group_size, "episodes per task (GRPO group size G)", config::Range::at_least(1));
    v.field("tasks_per_iteration", tasks_per_iteration, "tasks sampled per iteration (B)", config::Range::at_least(1));
    v.field("context_mode", context_mode,
            "full: one growing sequence per episode, a chat turn per step; window: each step is a fresh prompt; "
            "inline: the episode is one assistant message, the env's output spliced into it after each action "
            "(Search-R1, SimpleTIR; loss-masked, cut to observation_token_budget tokens without a marker)",
            {"full", "window", "inline"});
    v.field("window_turns", window_turns, "window mode: previous turns shown in the prompt", config::Range::at_least(0));
    v.field("max_turns", max_turns, "maximum agent turns per episode", config::Range::at_least(1));
    v.field("max_new_tokens", max_new_tokens, "maximum generated tokens per turn", config::Range::at_least(1));
    v.field("max_context_tokens", max_context_tokens, "context limit (prompt + generation)", config::Range::at_least(16));
    v.field("observation_token_budget", observation_token_budget, "observations longer than this are truncated",
            config::Range::at_least(8));
    v.field("temperature", temperature, "sampling temperature for training rollouts (0 = greedy)", config::Range::at_least(0));
    v.field("top_p", top_p, "nucleus sampling (1 = off)", config::Range::open_closed(0, 1));
    v.field("top_k", top_k, "top-k sampling (0 = off)", config::Range::at_least(0));
    v.field("eval_temperature", eval_temperature, "sampling temperature at evaluation (0 = greedy)", config::Range::at_least(0));
    v.field("eval_top_p", eval_top_p, "nucleus sampling at evaluation (1 = off; with eval_temperature > 0)",
            config::Range::open_closed(0, 1));
    v.field("constrain_actions", constrain_actions,
            "training rollouts: decode each response within the texts prompt.expert_response makes of the shown "
            "admissible actions (choice mode, as eval_constrain_actions); the trainer scores the same masked "
            "distribution, so PPO's ratios stay exact");
    v.field("eval_constrain_actions", eval_constrain_actions,
            "evaluation: decode each response within the texts prompt.expert_response makes of the shown "
            "admissible actions (the policy chooses one, token by token; not verl-agent's free generation); envs "
            "without admissible actions are unaffected");
    v.field("invalid_action_penalty", invalid_action_penalty, "reward penalty per invalid action", config::Range::at_least(0));
    v.field("invalid_penalty_on", invalid_penalty_on,
            "what the penalty counts: any (unparseable responses and actions the env rejects) or format "
            "(unparseable responses only, as verl-agent)",
            {"any", "format"});
    v.field("projection", projection,
            "response -> env action: env (the env's parser) or verl-agent (lower-cased first <action> block, "
            "<think> required, CJK invalid, invalid responses send their last projection_fallback_chars characters)",
            {"env", "verl-agent"});
    v.field("projection_fallback_chars", projection_fallback_chars,
            "verl-agent projection: an invalid response sends its last N characters to the env (verl-agent: 30 on "
            "ALFWorld, 20 on WebShop)",
            config::Range::at_least(1));
    v.field("reward_scale", reward_scale, "env rewards are multiplied by this before penalties (verl-agent: 10)",
            config::Range::positive());
    v.field("reward_on", reward_on,
            "env: the env's reward; success: 1 on the step that wins the episode (the env's success flag), 0 "
            "otherwise, times reward_scale (verl-agent WebShop: 10 for a won episode, nothing for a partial score)",
            {"env", "success"});
    v.field("concurrency", concurrency, "episodes in flight at once", config::Range::at_least(1));
    v.field("episode_timeout_s", episode_timeout_s,
            "time limit of one episode in seconds: its env time in deterministic (lock-step) mode, its wall time "
            "in throughput mode; beyond it the episode fails",
            config::Range::positive());
    v.field("deterministic", deterministic, "lock-step rollouts that are reproducible bit for bit");
    v.field("dump_trajectories", dump_trajectories, "write each iteration's trajectories as JSONL");
  }
};

}  // namespace agentrl::rollout
