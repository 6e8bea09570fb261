#include "agentrl/rollout/agent_loop.h"

#include <algorithm>
#include <chrono>

#include "agentrl/core/error.h"
#include "agentrl/core/regex.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/projection.h"

namespace agentrl::rollout {
namespace {

using strings::join;
using strings::replace_all;
using strings::utf8_code_points;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Fills the {name} placeholders of `tmpl` in one pass: substituted text is
// never scanned again, so an observation or action holding "{task}" stays as
// it is. Unknown {...} are kept verbatim.
std::string substitute(const std::string& tmpl, const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  out.reserve(tmpl.size());
  size_t i = 0;
  while (i < tmpl.size()) {
    bool hit = false;
    if (tmpl[i] == '{') {
      for (const auto& [name, value] : values) {
        const size_t close = i + 1 + name.size();
        if (close < tmpl.size() && tmpl[close] == '}' && tmpl.compare(i + 1, name.size(), name) == 0) {
          out += value;
          i = close + 1;
          hit = true;
          break;
        }
      }
    }
    if (!hit) out += tmpl[i++];
  }
  return out;
}

}  // namespace

EpisodeRunner::EpisodeRunner(std::unique_ptr<envs::Env> env, EpisodeSpec spec,
                             std::shared_ptr<const AgentContext> ctx)
    : env_(std::move(env)), spec_(std::move(spec)), ctx_(std::move(ctx)) {
  traj_.group_id = spec_.group_id;
  traj_.sample_index = spec_.sample_index;
  traj_.episode_id = spec_.episode_id;
  traj_.task_id = spec_.task.id;
  traj_.task_type = spec_.task.task_type;
  const std::string& mode = ctx_->rollout.context_mode;
  traj_.context_mode = mode == "window"   ? ContextMode::kWindow
                       : mode == "inline" ? ContextMode::kInline
                                          : ContextMode::kFull;
}

std::string EpisodeRunner::truncate_observation(const std::string& observation) const {
  const auto budget = static_cast<size_t>(ctx_->rollout.observation_token_budget);
  auto ids = ctx_->tokenizer->encode(observation, false, false);
  if (ids.size() <= budget) return observation;
  ids.resize(budget);
  // The cut is made in token space so that the budget holds; the marker tells
  // the agent (and a reader of the trajectory) that text is missing.
  return ctx_->tokenizer->decode(ids) + " ...[observation truncated]";
}

std::string EpisodeRunner::window_history() const {
  const auto k = static_cast<size_t>(ctx_->rollout.window_turns);
  const auto& turns = traj_.turns;
  size_t begin = turns.size() > k ? turns.size() - k : 0;
  std::string out;
  for (size_t i = begin; i < turns.size(); ++i) {
    if (i > begin) out += ctx_->prompt.history_separator;
    out += substitute(ctx_->prompt.history_entry, {{"n", std::to_string(i + 1)},
                                                   {"observation", truncate_observation(turns[i].observation_before)},
                                                   {"action", turns[i].action}});
  }
  return out;
}

std::vector<std::string> EpisodeRunner::shown_actions() const {
  const auto& exclude = ctx_->prompt.admissible_exclude;
  std::vector<std::string> out;
  for (auto& a : env_->admissible_actions())
    if (std::find(exclude.begin(), exclude.end(), a) == exclude.end()) out.push_back(std::move(a));
  return out;
}

std::string EpisodeRunner::admissible_text() const {
  if (!ctx_->prompt.show_admissible_actions) return "";
  std::string out;
  bool first = true;
  for (const auto& a : shown_actions()) {
    if (!first) out += ctx_->prompt.admissible_separator;
    out += substitute(ctx_->prompt.admissible_item, {{"action", a}});
    first = false;
  }
  return out;
}

std::string EpisodeRunner::fill(const std::string& tmpl, const std::string& observation, bool truncate) const {
  const size_t taken = traj_.turns.size();
  const size_t shown = std::min(taken, static_cast<size_t>(ctx_->rollout.window_turns));
  const bool has_history = tmpl.find("{history}") != std::string::npos;
  const bool has_admissible = tmpl.find("{admissible_actions}") != std::string::npos;
  return substitute(tmpl, {{"task", env_->task_description()},
                           {"admissible_actions", has_admissible ? admissible_text() : ""},
                           {"step", std::to_string(taken + 1)},
                           {"prev_steps", std::to_string(taken)},
                           {"history_length", std::to_string(shown)},
                           {"history", has_history ? window_history() : ""},
                           {"observation", truncate ? truncate_observation(observation) : observation}});
}

std::optional<GenerationRequest> EpisodeRunner::start() {
  auto t0 = std::chrono::steady_clock::now();
  current_observation_ = env_->reset(spec_.task, spec_.env_seed);
  env_seconds_ += seconds_since(t0);
  turn_limit_ = static_cast<int>(std::min<int64_t>(ctx_->rollout.max_turns, env_->max_steps()));
  std::vector<text::ChatMessage> msgs;
  if (!ctx_->prompt.system.empty()) msgs.push_back({"system", ctx_->prompt.system});
  const auto& p = ctx_->prompt;
  const std::string& tmpl = traj_.context_mode != ContextMode::kWindow ? p.first_user
                            : p.window_first_user.empty()              ? p.window_user
                                                                       : p.window_first_user;
  std::string user = fill(tmpl, current_observation_);
  msgs.push_back({"user", user});
  auto prompt = ctx_->chat->prompt_tokens(msgs);
  return make_request(std::move(prompt), current_observation_, user);
}

std::optional<GenerationRequest> EpisodeRunner::make_request(std::vector<int32_t> new_context_tokens,
                                                             const std::string& observation,
                                                             const std::string& user_message) {
  Turn turn;
  turn.observation_before = observation;
  turn.user_message = user_message;
  turn.context_tokens = std::move(new_context_tokens);
  std::vector<int32_t> prompt;
  if (one_sequence_per_episode(traj_.context_mode)) {
    context_.insert(context_.end(), turn.context_tokens.begin(), turn.context_tokens.end());
    prompt = context_;
  } else {
    prompt = turn.context_tokens;
  }
  const int64_t room = ctx_->rollout.max_context_tokens - static_cast<int64_t>(prompt.size());
  if (room < 1) {
    // The context is full before the model could speak: the episode ends
    // truncated; the unanswered context is not part of the trajectory.
    if (one_sequence_per_episode(traj_.context_mode))
      context_.resize(context_.size() - turn.context_tokens.size());
    traj_.truncated = true;
    traj_.context_cut = true;
    done_ = true;
    return std::nullopt;
  }
  traj_.turns.push_back(std::move(turn));

  GenerationRequest req;
  req.prompt = std::move(prompt);
  req.sampling = ctx_->sampling;
  req.sampling.seed = mix_seed(spec_.sample_seed, traj_.turns.size());
  req.max_new_tokens = std::min(ctx_->rollout.max_new_tokens, room);
  req.stop_token_ids = ctx_->chat->stop_token_ids();
  req.stop_strings = env_->stop_strings();
  req.stop_regex = env_->stop_regex();
  req.include_stop_string = true;
  req.cache_key = spec_.cache_key;
  req.order = spec_.group_id * 1000003 + spec_.sample_index;
  if (ctx_->constrain_actions && env_->admissible_actions_exhaustive())
    for (const auto& a : shown_actions()) req.allowed_texts.push_back(expert_response_text(ctx_->prompt, a));
  return req;
}

std::optional<GenerationRequest> EpisodeRunner::on_generation(const GenerationResult& result) {
  if (done_ || traj_.turns.empty()) throw std::logic_error("EpisodeRunner::on_generation without a pending request");
  Turn& turn = traj_.turns.back();
  turn.generated_tokens = result.tokens;
  turn.logprobs = result.logprobs;
  turn.entropies = result.entropies;
  turn.allowed_tokens = result.allowed_tokens;
  turn.response = result.text;
  turn.finish_reason = finish_reason_name(result.finish_reason);
  turn.truncated = result.finish_reason == FinishReason::kLength || result.finish_reason == FinishReason::kContextLimit;
  if (result.finish_reason == FinishReason::kContextLimit) traj_.context_cut = true;

  const envs::Projection projected = project(result.text);
  turn.action = projected.action;
  auto t0 = std::chrono::steady_clock::now();
  envs::StepResult step = env_->step(turn.action);
  env_seconds_ += seconds_since(t0);
  turn.tool_output = step.observation;
  turn.invalid_action = !projected.valid || step.info.invalid_action;
  turn.void_turn = env_->is_void_turn(result.text, step.observation);
  const bool penalized = ctx_->rollout.invalid_penalty_on == "format" ? !projected.valid : turn.invalid_action;
  const double env_reward = ctx_->rollout.reward_on == "success" ? (step.info.success ? 1.0 : 0.0) : step.reward;
  turn.reward = env_reward * ctx_->rollout.reward_scale -
                (penalized ? ctx_->rollout.invalid_action_penalty : 0.0);
  traj_.reward += turn.reward;
  traj_.score = step.info.score;
  traj_.success = step.info.success;
  for (const auto& [k, v] : step.info.metrics) traj_.metrics[k] = v;
  if (!step.info.task_type.empty()) traj_.task_type = step.info.task_type;

  current_observation_ = step.observation;
  const bool at_limit = static_cast<int>(traj_.turns.size()) >= turn_limit_;
  if (step.done || at_limit) {
    traj_.truncated = traj_.truncated || (!step.done && at_limit);
    done_ = true;
    return std::nullopt;
  }
  if (traj_.context_mode == ContextMode::kInline &&
      (result.finish_reason == FinishReason::kEos || result.finish_reason == FinishReason::kStopToken) &&
      !turn.generated_tokens.empty()) {
    // The tool output continues the same assistant message: an end-of-turn
    // token the model emitted is not part of it. Search-R1 and SimpleTIR drop
    // it the same way (they decode with skip_special_tokens). The token is
    // not trained on either.
    turn.generated_tokens.pop_back();
    turn.logprobs.pop_back();
    turn.entropies.pop_back();
    if (!turn.allowed_tokens.empty()) turn.allowed_tokens.pop_back();
  }
  if (one_sequence_per_episode(traj_.context_mode))
    context_.insert(context_.end(), turn.generated_tokens.begin(), turn.generated_tokens.end());
  return next_turn(step.observation);
}

envs::Projection EpisodeRunner::project(const std::string& response) const {
  if (ctx_->rollout.projection == "verl-agent")
    return envs::verl_agent_projection(response, static_cast<size_t>(ctx_->rollout.projection_fallback_chars));
  auto parsed = env_->extract_action(response);
  // An unparseable response goes to the env as it is (the env answers with its
  // own error observation).
  return {parsed ? *parsed : response, parsed.has_value()};
}

std::optional<GenerationRequest> EpisodeRunner::next_turn(const std::string& observation) {
  if (traj_.context_mode == ContextMode::kWindow) {
    std::vector<text::ChatMessage> msgs;
    if (!ctx_->prompt.system.empty()) msgs.push_back({"system", ctx_->prompt.system});
    const auto& p = ctx_->prompt;
    std::string user = fill(p.window_user, observation);
    // verl-agent's WebShop manager: a prompt that outgrows the limit (Python
    // len, code points) is rendered without its history.
    if (p.window_fallback_chars > 0 && !p.window_first_user.empty() &&
        utf8_code_points(user) > static_cast<size_t>(p.window_fallback_chars))
      user = fill(p.window_first_user, observation);
    msgs.push_back({"user", user});
    return make_request(ctx_->chat->prompt_tokens(msgs), observation, user);
  }
  if (traj_.context_mode == ContextMode::kInline) return inline_turn(observation);
  // Full mode: close the assistant turn exactly as the chat template would
  // have rendered it. If the model already emitted the template's end token
  // (e.g. <|im_end|> as EOS) only the rest of the closing sequence is added.
  std::vector<int32_t> tokens = ctx_->chat->close_assistant_turn(traj_.turns.back().generated_tokens);
  std::string user = fill(ctx_->prompt.next_user, observation);
  auto cont = ctx_->chat->continuation_tokens({{"user", user}});
  tokens.insert(tokens.end(), cont.begin(), cont.end());
  return make_request(std::move(tokens), observation, user);
}

std::optional<GenerationRequest> EpisodeRunner::inline_turn(const std::string& observation) {
  // Tokenised on its own and appended to the ids so far, as the originals
  // do (never re-tokenising the model's text). Cut in token space to the
  // budget without a marker, as Search-R1 cuts its information block.
  std::string text = fill(ctx_->prompt.inline_observation, observation, /*truncate=*/false);
  auto ids = ctx_->tokenizer->encode(text, false, false);
  const auto budget = static_cast<size_t>(ctx_->rollout.observation_token_budget);
  if (ids.size() > budget) {
    ids.resize(budget);
    text = ctx_->tokenizer->decode(ids);
  }
  return make_request(std::move(ids), observation, text);
}

GenerationResult EpisodeRunner::scripted_result(const std::string& response_text) const {
  GenerationResult r;
  r.tokens = ctx_->tokenizer->encode(response_text, false, false);
  r.text = response_text;
  r.finish_reason = FinishReason::kEos;
  // Inline mode: a response that ends at one of the env's stop strings (or
  // at the end of its stop regex's first match) is what the engine returns
  // there (generation stops at it, no end-of-turn token).
  const auto stops = env_->stop_strings();
  bool at_stop = std::any_of(stops.begin(), stops.end(), [&](const std::string& s) {
    return strings::ends_with(response_text, s);
  });
  if (const std::string pattern = env_->stop_regex(); !at_stop && !pattern.empty()) {
    auto m = Regex(pattern, "env stop_regex").search(response_text);
    at_stop = m && m->end == response_text.size();
  }
  at_stop = at_stop && traj_.context_mode == ContextMode::kInline;
  auto end = ctx_->chat->assistant_end_tokens();
  if (at_stop) {
    r.finish_reason = FinishReason::kStopString;
  } else if (!end.empty()) {
    r.tokens.push_back(end.front());
  }
  r.logprobs.assign(r.tokens.size(), 0.0f);
  r.entropies.assign(r.tokens.size(), 0.0f);
  return r;
}

Trajectory run_scripted_episode(EpisodeRunner& runner,
                                const std::function<std::optional<std::string>(envs::Env&)>& policy) {
  auto req = runner.start();
  while (req) {
    auto text = policy(runner.env());
    if (!text) break;
    req = runner.on_generation(runner.scripted_result(*text));
  }
  if (!runner.done()) {
    // The policy stopped early: drop the unanswered pending turn.
    Trajectory t = runner.take_trajectory();
    if (!t.turns.empty() && t.turns.back().generated_tokens.empty()) t.turns.pop_back();
    t.truncated = true;
    return t;
  }
  return runner.take_trajectory();
}

std::string expert_response_text(const PromptConfig& prompt, const std::string& action) {
  std::string s = replace_all(prompt.expert_response, "{thought}", "The next step of the plan is: " + action + ".");
  return replace_all(s, "{action}", action);
}

std::function<std::optional<std::string>(envs::Env&)> expert_policy(const PromptConfig& prompt) {
  return [prompt](envs::Env& env) -> std::optional<std::string> {
    auto action = env.expert_action();
    if (!action) return std::nullopt;
    return expert_response_text(prompt, *action);
  };
}

}  // namespace agentrl::rollout
