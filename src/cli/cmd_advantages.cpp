// `agentrl advantages ROLLOUTS.jsonl --estimator NAME [--set key=value ...]`:
// prints what an advantage estimator does to a trajectory dump, one JSON line
// per episode step (schema in include/agentrl/algo/advantage_report.h), and
// the diagnostics as one JSON object on stderr. The logic lives in
// algo/advantage_report.*; this file only parses flags.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agentrl/algo/advantage_report.h"
#include "agentrl/algo/trajectory_io.h"
#include "agentrl/cli/command.h"
#include "agentrl/core/config.h"

namespace agentrl::cli {
namespace {

struct AdvantagesOptions {
  std::string input;
  std::string estimator;
  std::vector<std::string> sets;
  std::vector<std::string> filters;
  bool no_filters = false;
};

void run_advantages(const AdvantagesOptions& o) {
  algo::AlgorithmConfig cfg;
  if (!o.estimator.empty()) cfg.adv_estimator = o.estimator;
  if (!o.filters.empty()) cfg.filters = o.filters;
  // --set keys are relative to the "algorithm" section; a leading
  // "algorithm." is accepted too.
  std::vector<std::string> overrides;
  for (const auto& s : o.sets) overrides.push_back(s.rfind("algorithm.", 0) == 0 ? s : "algorithm." + s);
  if (!overrides.empty()) {
    config::apply_overrides([&](config::Visitor& v) { v.section("algorithm", cfg, "algorithm"); }, overrides);
  }
  if (!o.estimator.empty()) cfg.adv_estimator = o.estimator;  // the flag wins over --set
  if (o.no_filters) cfg.filters.clear();
  auto trajectories = algo::read_trajectories_jsonl(o.input);
  // As the trainer does: a failed (crashed, timed-out) episode is not trained on.
  const auto total = trajectories.size();
  trajectories.erase(std::remove_if(trajectories.begin(), trajectories.end(), [](const auto& t) { return t.failed; }),
                     trajectories.end());
  if (trajectories.size() != total)
    std::cerr << o.input << ": " << total - trajectories.size() << " failed episode(s) left out\n";
  auto report = algo::advantage_report(trajectories, cfg, local_collective());
  for (const auto& line : report.lines) std::cout << line << "\n";
  std::cout.flush();
  std::cerr << nlohmann::json(report.diagnostics).dump() << "\n";
}

const CommandRegistrar kAdvantages(60, [](CLI::App& root) {
  auto opts = std::make_shared<AdvantagesOptions>();
  CLI::App* cmd = root.add_subcommand(
      "advantages", "Print per-step rewards, step entropies and advantages of a trajectory dump (JSON lines)");
  cmd->add_option("rollouts", opts->input, "trajectory dump (JSONL, one trajectory per line)")->required();
  cmd->add_option("--estimator", opts->estimator, "advantage estimator (grpo, drgrpo, rloo, reinforce_pp, empg, gigpo)");
  cmd->add_option("--set", opts->sets, "override of the algorithm section, e.g. --set empg.k=2 (repeatable)");
  cmd->add_option("--filter", opts->filters, "trajectory filter to apply first (repeatable; default algorithm.filters)");
  cmd->add_flag("--no-filters", opts->no_filters, "apply no filter");
  cmd->callback([opts] { run_advantages(*opts); });
});

}  // namespace
}  // namespace agentrl::cli
