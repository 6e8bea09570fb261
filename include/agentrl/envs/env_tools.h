// Tools over the Env interface that work for every registered environment:
// an interactive (or scripted, via a pipe) play loop, a throughput benchmark
// with random admissible actions, and a policy evaluation that reports
// success overall and per task type (the columns of the GiGPO/EMPG tables
// for ALFWorld). Used by `agentrl env play` / `agentrl env bench`
// (src/cli/cmd_env.cpp) and reusable by the evaluator.
//
// Thread-safety: each call uses its own Env instances; the suite is only
// read through its const, thread-safe methods.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "agentrl/core/rng.h"
#include "agentrl/envs/env.h"

namespace agentrl::envs {

enum class ResponseLines {
  kAuto,    // multi-line when the env's actions are free-form (no admissible actions after reset)
  kSingle,  // one action per line
  kMulti,   // a response ends at a line holding only "."
};

struct PlayOptions {
  std::string split;         // "" = suite's eval split
  int64_t task_index = -1;   // -1 = drawn from `seed`
  uint64_t seed = 0;
  bool show_admissible = true;
  ResponseLines lines = ResponseLines::kAuto;
};

struct PlaySummary {
  Task task;
  int steps = 0;
  bool done = false;
  bool success = false;
  double total_reward = 0.0;
};

// Task `index` of `split` (index < 0: one drawn from `seed`). ConfigError for
// an unknown or empty split or an index out of range (the message names the
// valid range).
Task pick_task(const EnvSuite& suite, const std::string& split, int64_t index, uint64_t seed);

// Plays one episode: writes the observation (and the numbered admissible
// actions) to `out`, reads one action per line from `in`. A line that is a
// number k picks the k-th admissible action; blank lines are ignored;
// "quit" or end of input stops. In multi-line mode (free-text envs: code
// tool, Deep Search) a response is every line up to one holding only "."
// (or the end of input), newlines kept, and it goes through
// env.extract_action as a model's response does; "quit" as the first line
// of a response stops. Ends with a one-line summary
// ("episode over: success=1 steps=7 reward=1"). Throws ConfigError for a
// bad split or task index.
PlaySummary play(const EnvSuite& suite, const PlayOptions& options, std::istream& in, std::ostream& out);

// A policy picks the next action; nullopt ends the episode early.
using Policy = std::function<std::optional<std::string>(Env& env, Rng& rng)>;
// Uniform over admissible_actions() (nullopt if there are none).
Policy random_admissible_policy();
// env.expert_action().
Policy expert_policy();
// "random" or "expert"; throws ConfigError otherwise.
Policy policy_by_name(const std::string& name);

struct TypeStats {
  int64_t episodes = 0;
  int64_t successes = 0;
  double success_rate() const { return episodes ? static_cast<double>(successes) / episodes : 0.0; }
};

struct EvalResult {
  std::string split;
  int64_t episodes = 0;      // counted in success (the first `EvalOptions::episodes`)
  int64_t episodes_run = 0;  // all episodes run (more when min_steps asks for them)
  int64_t successes = 0;
  int64_t steps = 0;
  int64_t invalid_actions = 0;
  double reset_seconds = 0.0;  // wall time inside reset()
  double step_seconds = 0.0;   // wall time inside step() + the policy's choice
  double reset_cpu_seconds = 0.0;  // the same as thread CPU time (independent of other load)
  double step_cpu_seconds = 0.0;
  std::map<std::string, TypeStats> per_type;  // by Task::task_type
  double success_rate() const { return episodes ? static_cast<double>(successes) / episodes : 0.0; }
  double steps_per_second() const { return step_seconds > 0 ? steps / step_seconds : 0.0; }
};

struct EvalOptions {
  std::string split;          // "" = suite's eval split
  int64_t episodes = 0;       // 0 = every task of the split once; more cycles over the split
  int64_t min_steps = 0;      // keep cycling over the split until this many steps (for benchmarks)
  uint64_t seed = 0;          // policy randomness and env reset seeds
};

// Runs `policy` on tasks of the split in index order (task i, i+1, ...,
// wrapping around), single-threaded, and counts successes per task type.
// Success and per-type counts cover the first pass over the split only (one
// episode per task) so they do not depend on min_steps.
EvalResult evaluate(const EnvSuite& suite, const Policy& policy, const EvalOptions& options);

// Human-readable report: success overall and per task type, steps/s, reset ms.
// `short_names` maps task types to column names ("pick_and_place_simple" -> "pick").
std::string format_eval(const EvalResult& r, const std::map<std::string, std::string>& short_names = {});

}  // namespace agentrl::envs
