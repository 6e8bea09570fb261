#include "agentrl/envs/env_tools.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <istream>
#include <ostream>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"

namespace agentrl::envs {
namespace {

using strings::trim;

// CPU time of this thread: benchmark numbers that do not depend on how
// many other processes share the cores.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void print_admissible(const Env& env, std::ostream& out) {
  auto acts = env.admissible_actions();
  if (acts.empty()) return;
  out << "\nAdmissible actions:\n";
  for (size_t i = 0; i < acts.size(); ++i) out << "  " << (i + 1) << ". " << acts[i] << "\n";
}

// One action line (blank lines skipped); nullopt at "quit"/"exit" or the end
// of input. A bare number picks that admissible action (1-based), so a
// scripted session can say "3" instead of retyping "go to cabinet 2".
std::optional<std::string> read_action(std::istream& in, const Env& env) {
  std::string line;
  while (std::getline(in, line)) {
    std::string action = trim(line);
    if (action.empty()) continue;
    if (action == "quit" || action == "exit") return std::nullopt;
    if (action.find_first_not_of("0123456789") == std::string::npos) {
      auto acts = env.admissible_actions();
      size_t k = std::stoul(action);
      if (k >= 1 && k <= acts.size()) action = acts[k - 1];
    }
    return action;
  }
  return std::nullopt;
}

// The lines up to one holding only "." (or the end of input), joined with
// their newlines, then parsed as a model response is (the agent loop sends
// extract_action's result, or the text itself when it finds none).
std::optional<std::string> read_response(std::istream& in, const Env& env) {
  std::string text, line;
  bool any = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == ".") {
      if (any) break;
      continue;
    }
    if (!any && trim(line).empty()) continue;
    if (!any && (trim(line) == "quit" || trim(line) == "exit")) return std::nullopt;
    text += (any ? "\n" : "") + line;
    any = true;
  }
  if (!any) return std::nullopt;
  auto action = env.extract_action(text);
  return action ? *action : text;
}

}  // namespace

Task pick_task(const EnvSuite& suite, const std::string& split, int64_t index, uint64_t seed) {
  const TaskSource& ts = suite.tasks();
  const size_t n = ts.size(split);  // throws ConfigError for an unknown split
  if (n == 0) throw ConfigError("split '" + split + "' of " + suite.name() + " has no tasks");
  if (index < 0) index = Rng(seed).uniform_int(0, static_cast<int64_t>(n) - 1);
  if (static_cast<size_t>(index) >= n)
    throw ConfigError("--task " + std::to_string(index) + ": split '" + split + "' has " + std::to_string(n) +
                      " tasks (0.." + std::to_string(n - 1) + ")");
  return ts.get(split, static_cast<size_t>(index));
}

PlaySummary play(const EnvSuite& suite, const PlayOptions& options, std::istream& in, std::ostream& out) {
  const std::string split = options.split.empty() ? suite.eval_split() : options.split;
  PlaySummary sum;
  sum.task = pick_task(suite, split, options.task_index, options.seed);
  auto env = suite.make_env();
  out << "[" << suite.name() << " " << split << " #" << sum.task.index << " " << sum.task.id << "]\n";
  out << env->reset(sum.task, options.seed) << "\n";
  if (options.show_admissible) print_admissible(*env, out);
  const bool multi = options.lines == ResponseLines::kMulti ||
                     (options.lines == ResponseLines::kAuto && env->admissible_actions().empty());
  if (multi) out << "(multi-line responses: end each with a line holding only \".\")\n";
  while (!sum.done) {
    out << "> " << std::flush;
    auto action = multi ? read_response(in, *env) : read_action(in, *env);
    if (!action) break;
    StepResult r = env->step(*action);
    ++sum.steps;
    sum.total_reward += r.reward;
    sum.done = r.done;
    sum.success = r.info.success;
    out << r.observation << "\n";
    if (!r.done && options.show_admissible) print_admissible(*env, out);
  }
  out << "episode over: success=" << (sum.success ? 1 : 0) << " steps=" << sum.steps
      << " reward=" << sum.total_reward << "\n";
  return sum;
}

Policy random_admissible_policy() {
  return [](Env& env, Rng& rng) -> std::optional<std::string> {
    auto acts = env.admissible_actions();
    if (acts.empty()) return std::nullopt;
    return acts[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(acts.size()) - 1))];
  };
}

Policy expert_policy() {
  return [](Env& env, Rng&) { return env.expert_action(); };
}

Policy policy_by_name(const std::string& name) {
  if (name == "random") return random_admissible_policy();
  if (name == "expert") return expert_policy();
  throw ConfigError("--policy: unknown policy '" + name + "' (expected random or expert)");
}

EvalResult evaluate(const EnvSuite& suite, const Policy& policy, const EvalOptions& options) {
  using clock = std::chrono::steady_clock;
  EvalResult res;
  res.split = options.split.empty() ? suite.eval_split() : options.split;
  const TaskSource& ts = suite.tasks();
  const size_t n = ts.size(res.split);
  if (n == 0) throw ConfigError("split '" + res.split + "' of " + suite.name() + " has no tasks");
  const int64_t episodes = options.episodes > 0 ? options.episodes : static_cast<int64_t>(n);
  auto env = suite.make_env();
  Rng rng(options.seed);
  for (int64_t e = 0; e < episodes || res.steps < options.min_steps; ++e) {
    Task task = ts.get(res.split, static_cast<size_t>(e) % n);
    auto t0 = clock::now();
    double c0 = thread_cpu_seconds();
    env->reset(task, mix_seed(options.seed, static_cast<uint64_t>(e)));
    auto t1 = clock::now();
    double c1 = thread_cpu_seconds();
    res.reset_seconds += std::chrono::duration<double>(t1 - t0).count();
    res.reset_cpu_seconds += c1 - c0;
    bool success = false;
    for (int s = 0; s < env->max_steps(); ++s) {
      auto action = policy(*env, rng);
      if (!action) break;
      StepResult r = env->step(*action);
      ++res.steps;
      if (r.info.invalid_action) ++res.invalid_actions;
      if (r.done) {
        success = r.info.success;
        break;
      }
    }
    res.step_seconds += std::chrono::duration<double>(clock::now() - t1).count();
    res.step_cpu_seconds += thread_cpu_seconds() - c1;
    ++res.episodes_run;
    if (e < episodes) {
      ++res.episodes;
      auto& ty = res.per_type[task.task_type];
      ++ty.episodes;
      if (success) {
        ++res.successes;
        ++ty.successes;
      }
    }
  }
  return res;
}

std::string format_eval(const EvalResult& r, const std::map<std::string, std::string>& short_names) {
  std::ostringstream out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "split %s: success %.4f (%lld/%lld)\n", r.split.c_str(), r.success_rate(),
                static_cast<long long>(r.successes), static_cast<long long>(r.episodes));
  out << buf;
  for (const auto& [type, st] : r.per_type) {
    auto it = short_names.find(type);
    std::string name = it != short_names.end() ? it->second : type.empty() ? "(none)" : type;
    std::snprintf(buf, sizeof buf, "  %-32s %.4f (%lld/%lld)\n", name.c_str(), st.success_rate(),
                  static_cast<long long>(st.successes), static_cast<long long>(st.episodes));
    out << buf;
  }
  const double runs = std::max<double>(1.0, static_cast<double>(r.episodes_run));
  std::snprintf(buf, sizeof buf,
                "steps %lld (invalid %lld) in %lld episodes: %.0f steps/s wall, %.0f steps/s cpu; "
                "reset %.3f ms wall, %.3f ms cpu per episode\n",
                static_cast<long long>(r.steps), static_cast<long long>(r.invalid_actions),
                static_cast<long long>(r.episodes_run), r.steps_per_second(),
                r.step_cpu_seconds > 0 ? r.steps / r.step_cpu_seconds : 0.0, r.reset_seconds * 1e3 / runs,
                r.reset_cpu_seconds * 1e3 / runs);
  out << buf;
  return out.str();
}

}  // namespace agentrl::envs
