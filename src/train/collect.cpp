#include "agentrl/train/collect.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "agentrl/rollout/rollout_pool.h"
#include "agentrl/rollout/trajectory_io.h"

namespace fs = std::filesystem;

namespace agentrl::train {

int64_t rollout_round(int64_t iteration, int64_t attempt) {
  // Rounds 0..63 of an iteration keep the numbers of earlier versions
  // (iteration * 64 + attempt), so existing runs reproduce. Round 64 of
  // iteration i would be round 0 of iteration i + 1: later rounds take
  // numbers from a disjoint range (the sign bit set), one per (iteration,
  // attempt) while both are below 2^31.
  if (attempt < 64) return iteration * 64 + attempt;
  const uint64_t tagged = (uint64_t{1} << 63) | (static_cast<uint64_t>(iteration) << 31) | static_cast<uint64_t>(attempt);
  return static_cast<int64_t>(tagged);
}

namespace {

// What the rounds of one iteration gathered on this rank.
struct Gathered {
  std::vector<rollout::Trajectory> kept, dumped;
  std::set<int64_t> kept_groups;
  rollout::RolloutStats stats;
  std::map<std::string, double> filter_metrics;
  int64_t next_group = 0;  // global group index of the next round's first group
};

// Rolls out this rank's slice of `n_tasks` new groups, drops failed episodes,
// applies the filters and keeps groups up to this rank's share `my_want`.
void run_round(const CollectInputs& in, const ExperimentConfig& cfg, TaskCursor& cursor, int64_t iteration,
               int64_t attempt, int64_t n_tasks, int64_t my_want, Gathered& g) {
  const int rank = in.collective->rank(), world = in.collective->world_size();
  auto tasks = cursor.next(in.suite->tasks(), n_tasks);
  auto all_specs = rollout::make_group_episodes(tasks, cfg.rollout.group_size, static_cast<uint64_t>(cfg.runtime.seed),
                                                rollout_round(iteration, attempt));
  std::vector<rollout::EpisodeSpec> specs;
  for (auto& sp : all_specs) {
    if (sp.group_id < rank * n_tasks / world || sp.group_id >= (rank + 1) * n_tasks / world) continue;
    sp.group_id += g.next_group;
    specs.push_back(std::move(sp));
  }
  g.next_group += n_tasks;
  rollout::RolloutPool pool(*in.generator, in.suite, in.ctx);
  rollout::RolloutStats st;
  auto trajs = pool.run(specs, &st);
  g.stats += st;
  if (cfg.rollout.dump_trajectories) g.dumped.insert(g.dumped.end(), trajs.begin(), trajs.end());
  // A failed episode (env crash, timeout) is excluded; its group keeps the
  // remaining samples.
  trajs.erase(std::remove_if(trajs.begin(), trajs.end(), [](const auto& t) { return t.failed; }), trajs.end());
  algo::FilterContext fc;
  fc.training = true;
  for (const auto& rep : algo::apply_filters(*in.filters, trajs, fc)) {
    g.filter_metrics["filter/" + rep.filter + "/dropped_groups"] += static_cast<double>(rep.dropped_groups);
    g.filter_metrics["filter/" + rep.filter + "/masked_trajectories"] += static_cast<double>(rep.masked_trajectories);
    g.filter_metrics["filter/" + rep.filter + "/flagged_trajectories"] += static_cast<double>(rep.flagged_trajectories);
  }
  for (auto& t : trajs) {
    if (static_cast<int64_t>(g.kept_groups.size()) >= my_want && !g.kept_groups.count(t.group_id)) continue;
    g.kept_groups.insert(t.group_id);
    g.kept.push_back(std::move(t));
  }
}

// Sums the iteration's statistics over ranks into `metrics`.
void report(const CollectInputs& in, Gathered& g, std::map<std::string, double>& metrics) {
  g.stats.all_reduce(*in.collective);
  std::vector<double> kept_counts{double(g.kept_groups.size()), double(g.kept.size())};
  in.collective->all_reduce_sum(kept_counts);
  for (auto& [k, v] : g.filter_metrics) {
    std::vector<double> x{v};
    in.collective->all_reduce_sum(x);
    v = x[0];
  }
  auto rs = g.stats.scalars();
  metrics.insert(rs.begin(), rs.end());
  metrics.insert(g.filter_metrics.begin(), g.filter_metrics.end());
  metrics["rollout/trained_groups"] = kept_counts[0];
  metrics["rollout/trained_trajectories"] = kept_counts[1];
}

}  // namespace

std::vector<rollout::Trajectory> collect_groups(const CollectInputs& in, const ExperimentConfig& cfg,
                                                TaskCursor& cursor, int64_t iteration,
                                                std::map<std::string, double>& metrics) {
  const int rank = in.collective->rank(), world = in.collective->world_size();
  const int64_t want = cfg.rollout.tasks_per_iteration;
  const int64_t my_want = (rank + 1) * want / world - rank * want / world;  // this rank's share of groups
  const algo::TrajectoryFilter* refill = algo::refilling_filter(*in.filters);
  Gathered g;
  int64_t missing = want;  // groups still wanted over all ranks (identical on every rank)
  for (int64_t attempt = 0;; ++attempt) {
    const int64_t n_tasks = attempt == 0 ? want : refill->refill_groups(missing);
    run_round(in, cfg, cursor, iteration, attempt, n_tasks, my_want, g);
    // All ranks agree on how many groups are still missing.
    std::vector<double> have{static_cast<double>(g.kept_groups.size())};
    in.collective->all_reduce_sum(have);
    missing = want - static_cast<int64_t>(have[0]);
    if (missing <= 0 || refill == nullptr || attempt >= refill->max_refill_rounds()) break;
  }
  report(in, g, metrics);
  if (cfg.rollout.dump_trajectories) {
    const std::string name =
        "iter_" + std::to_string(iteration) + (world > 1 ? "_rank" + std::to_string(rank) : "") + ".jsonl";
    rollout::write_trajectories_jsonl((fs::path(in.paths->rollouts) / name).string(), g.dumped);
  }
  return g.kept;
}

}  // namespace agentrl::train
