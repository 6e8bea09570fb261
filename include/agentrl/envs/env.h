// The environment interface of agentrl.
//
// An Env is one text environment episode at a time: reset() starts an episode
// for a Task, step() applies one action. An EnvSuite owns what is shared and
// read-only across episodes (game files, a product catalog, a search index)
// and creates Env instances; it also owns the TaskSource with the named
// splits. Suites are created once per run from their config section, by name,
// through the registry (envs/registry.h).
//
// Thread-safety: an Env instance is used by one thread at a time (one per
// episode); different Env instances of the same suite may run concurrently.
// EnvSuite and TaskSource methods are const and safe to call concurrently.
// No env holds global mutable state.
//
// This layer is torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace agentrl::envs {

// One task (game, goal, question, problem) of a split.
struct Task {
  std::string id;         // stable, unique within the suite (e.g. game path, goal index)
  std::string split;      // "train", "valid_seen", "test", ...
  int64_t index = 0;      // position within the split
  std::string task_type;  // env-specific category used in per-type metrics ("" if none)
};

// Per-step information reported by the env.
struct EnvInfo {
  bool success = false;         // task solved (final on the done step)
  double score = 0.0;           // env's own score (WebShop reward, EM, ...)
  bool invalid_action = false;  // the action was not applicable / not parseable
  std::string task_type;
  std::map<std::string, double> metrics;  // extra per-env numbers (f1, r_att, ...)
};

struct StepResult {
  std::string observation;
  double reward = 0.0;
  bool done = false;
  EnvInfo info;
};

class TaskSource {
 public:
  virtual ~TaskSource() = default;
  // Names of the available splits, in a stable order.
  virtual std::vector<std::string> splits() const = 0;
  // Number of tasks in `split`; throws ConfigError for an unknown split.
  virtual size_t size(const std::string& split) const = 0;
  // Task `index` of `split` (0 <= index < size). Throws ConfigError/std::out_of_range.
  virtual Task get(const std::string& split, size_t index) const = 0;
  // All tasks of the split shuffled deterministically by `seed` (the same
  // seed always gives the same order).
  std::vector<Task> ordered(const std::string& split, uint64_t seed) const;
};

class Env {
 public:
  virtual ~Env() = default;
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // Starts an episode; returns the first observation (including the task
  // description where the original env shows it). `seed` drives any
  // randomness of the episode (the same task + seed gives the same episode).
  virtual std::string reset(const Task& task, uint64_t seed) = 0;
  // Applies one action (plain action text, e.g. "go to countertop 1",
  // "search[red shoes]", or the whole model response for envs whose actions
  // are tagged, like deepsearch/codetool). Never throws for a bad action: it
  // returns the env's own error observation with info.invalid_action = true.
  virtual StepResult step(const std::string& action) = 0;
  // Currently admissible actions, sorted; empty when actions are free-form.
  virtual std::vector<std::string> admissible_actions() const = 0;
  // False when admissible_actions() holds a template rather than every
  // action (WebShop's "search[<query>]"): choice mode
  // (rollout.eval_constrain_actions) then lets the policy write freely.
  virtual bool admissible_actions_exhaustive() const { return true; }
  // The task text shown to the agent ("put a clean apple in fridge.").
  virtual std::string task_description() const = 0;
  // The next action of an expert that solves the task from the current
  // state, or nullopt if the episode is over / no plan exists.
  virtual std::optional<std::string> expert_action() = 0;

  // --- Hooks for LLM agents (defaults suit `<action>...</action>` envs). ---

  // Extracts the env action from a model response; nullopt if unparseable.
  // Default: the text inside the last <action>...</action>, trimmed.
  virtual std::optional<std::string> extract_action(const std::string& response) const;
  // Stop strings that end a generation turn for this env (e.g. "</search>").
  virtual std::vector<std::string> stop_strings() const { return {}; }
  // A turn end no fixed string expresses, as a PCRE2 pattern (core/regex.h):
  // generation ends at its first match in the response (GenerationRequest::
  // stop_regex). Empty = none.
  virtual std::string stop_regex() const { return {}; }
  // SimpleTIR void-turn predicate: the response has neither a complete tool
  // call nor a final answer. Default: never void.
  virtual bool is_void_turn(const std::string& response, const std::string& tool_output) const {
    (void)response;
    (void)tool_output;
    return false;
  }
  // Maximum number of steps of an episode.
  virtual int max_steps() const = 0;
};

class EnvSuite {
 public:
  virtual ~EnvSuite() = default;
  virtual const std::string& name() const = 0;
  virtual const TaskSource& tasks() const = 0;
  virtual std::unique_ptr<Env> make_env() const = 0;
  // Split used for training and for evaluation by default.
  virtual std::string train_split() const { return "train"; }
  virtual std::string eval_split() const = 0;
  // Identifiers the env's observations show and its actions copy verbatim
  // (WebShop: product ASINs, as pages show them and as clicks write them).
  // A tokenizer trained with tokenizer.env_symbols keeps each one piece, so
  // that a small policy copies one token instead of ten characters. Default:
  // none.
  virtual std::vector<std::string> identifiers() const { return {}; }
};

}  // namespace agentrl::envs
