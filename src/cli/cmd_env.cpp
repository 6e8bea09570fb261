// `agentrl env play NAME` and `agentrl env bench NAME`: generic over every
// registered environment (envs/registry.h). The logic lives in
// envs/env_tools.h; this file parses flags.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/cli/command.h"
#include "agentrl/core/config.h"
#include "agentrl/envs/alfworld/game.h"
#include "agentrl/envs/env_tools.h"
#include "agentrl/envs/registry.h"

namespace agentrl::cli {
namespace {

struct EnvArgs {
  std::string name;
  std::string split;
  int64_t seed = 0;
  std::vector<std::string> sets;
};

void add_common(CLI::App* cmd, EnvArgs& a) {
  cmd->add_option("name", a.name, "environment name (alfworld, webshop, ...)")->required();
  cmd->add_option("--split", a.split, "split (default: the env's eval split)");
  cmd->add_option("--seed", a.seed, "seed of the episode / policy");
  cmd->add_option("--set", a.sets, "config override key=value, e.g. alfworld.data_dir=/data/json_2.1.1");
}

std::shared_ptr<envs::EnvSuite> make_suite(const EnvArgs& a) {
  auto names = envs::registered_envs();
  bool known = false;
  for (const auto& n : names) known |= n == a.name;
  if (!known) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw UsageError("unknown environment '" + a.name + "' (registered: " + list + ")");
  }
  config::ExtensionSections sections;
  config::apply_overrides([&](config::Visitor& v) { sections.visit(v); }, a.sets);
  return envs::make_env_suite(a.name, sections);
}

std::map<std::string, std::string> short_task_names() {
  // ALFWorld's task types as the GiGPO/EMPG table columns.
  std::map<std::string, std::string> m;
  for (int i = 0; i < envs::alfworld::kNumTaskTypes; ++i) {
    auto t = static_cast<envs::alfworld::TaskType>(i);
    m[envs::alfworld::task_type_name(t)] = envs::alfworld::task_type_short(t);
  }
  return m;
}

CommandRegistrar reg(40, [](CLI::App& root) {
  CLI::App* env = group(root, "env", "Environments: play, benchmark, demonstrations");

  auto play_args = std::make_shared<EnvArgs>();
  auto task = std::make_shared<int64_t>(-1);
  auto quiet = std::make_shared<bool>(false);
  CLI::App* play = env->add_subcommand("play", "Play an episode in the terminal (reads actions from stdin; "
                                               "works when piped)");
  add_common(play, *play_args);
  play->add_option("--task", *task, "task index within the split (default: drawn from --seed)");
  play->add_flag("--no-admissible", *quiet, "do not print the admissible actions");
  auto lines = std::make_shared<std::string>("auto");
  play->add_option("--lines", *lines,
                   "single: one action per line; multi: a response ends at a line holding only '.' (code blocks); "
                   "auto (default): multi for free-text envs (no admissible actions)")
      ->check(CLI::IsMember({"auto", "single", "multi"}));
  play->callback([play_args, task, quiet, lines] {
    auto suite = make_suite(*play_args);
    envs::PlayOptions o;
    o.split = play_args->split;
    o.task_index = *task;
    o.seed = static_cast<uint64_t>(play_args->seed);
    o.show_admissible = !*quiet;
    o.lines = *lines == "single" ? envs::ResponseLines::kSingle
              : *lines == "multi" ? envs::ResponseLines::kMulti
                                  : envs::ResponseLines::kAuto;
    envs::play(*suite, o, std::cin, std::cout);
  });

  auto bench_args = std::make_shared<EnvArgs>();
  auto policy = std::make_shared<std::string>("random");
  auto episodes = std::make_shared<int64_t>(0);
  auto min_steps = std::make_shared<int64_t>(0);
  CLI::App* bench = env->add_subcommand(
      "bench", "Run a policy (random admissible actions or the expert) single-threaded: success overall and per "
               "task type, steps/s, reset time");
  add_common(bench, *bench_args);
  bench->add_option("--policy", *policy, "random | expert")->check(CLI::IsMember({"random", "expert"}));
  bench->add_option("--episodes", *episodes, "episodes counted in success (default: every task of the split once)");
  bench->add_option("--min-steps", *min_steps, "keep running episodes until this many steps (throughput runs)");
  bench->callback([bench_args, policy, episodes, min_steps] {
    auto suite = make_suite(*bench_args);
    envs::EvalOptions o;
    o.split = bench_args->split;
    o.seed = static_cast<uint64_t>(bench_args->seed);
    o.episodes = *episodes;
    o.min_steps = *min_steps;
    auto r = envs::evaluate(*suite, envs::policy_by_name(*policy), o);
    std::cout << suite->name() << " policy=" << *policy << "\n" << envs::format_eval(r, short_task_names());
  });
});

}  // namespace
}  // namespace agentrl::cli
