#include "agentrl/train/collect.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "agentrl/algo/diagnostics.h"
#include "agentrl/algo/trajectory_io.h"
#include "agentrl/rollout/rollout_pool.h"

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
  std::vector<algo::FilterReport> filter_totals;  // per filter, counts summed over the rounds
  int64_t next_group = 0;  // global group index of the next round's first group
};

void add_counts(algo::FilterReport& total, const algo::FilterReport& r) {
  total.filter = r.filter;
  total.input_trajectories += r.input_trajectories;
  total.input_groups += r.input_groups;
  total.dropped_groups += r.dropped_groups;
  total.dropped_trajectories += r.dropped_trajectories;
  total.masked_trajectories += r.masked_trajectories;
  total.flagged_trajectories += r.flagged_trajectories;
}

// Sums the count fields of every report over ranks (one collective).
void all_reduce_counts(std::vector<algo::FilterReport>& reports, Collective& collective) {
  std::vector<double> v;
  for (const auto& r : reports)
    v.insert(v.end(), {double(r.input_trajectories), double(r.input_groups), double(r.dropped_groups),
                       double(r.dropped_trajectories), double(r.masked_trajectories), double(r.flagged_trajectories)});
  if (v.empty()) return;
  collective.all_reduce_sum(v);
  for (size_t i = 0; i < reports.size(); ++i) {
    const double* x = &v[6 * i];
    auto& r = reports[i];
    r.input_trajectories = int64_t(x[0]);
    r.input_groups = int64_t(x[1]);
    r.dropped_groups = int64_t(x[2]);
    r.dropped_trajectories = int64_t(x[3]);
    r.masked_trajectories = int64_t(x[4]);
    r.flagged_trajectories = int64_t(x[5]);
  }
}

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
  const auto reports = algo::apply_filters(*in.filters, trajs, fc);
  if (g.filter_totals.empty()) g.filter_totals.resize(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) add_counts(g.filter_totals[i], reports[i]);
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
  all_reduce_counts(g.filter_totals, *in.collective);
  for (const auto& r : g.filter_totals) {
    metrics["filter/" + r.filter + "/dropped_groups"] = static_cast<double>(r.dropped_groups);
    metrics["filter/" + r.filter + "/masked_trajectories"] = static_cast<double>(r.masked_trajectories);
    metrics["filter/" + r.filter + "/flagged_trajectories"] = static_cast<double>(r.flagged_trajectories);
  }
  // Rates of the iteration's rounds over all ranks: filter/dropped_group_rate,
  // ..., and "<filter>/flagged_rate" (void_turn/flagged_rate: the void-turn rate).
  auto rates = algo::filter_metrics(g.filter_totals);
  metrics.insert(rates.begin(), rates.end());
  auto rs = g.stats.scalars();
  metrics.insert(rs.begin(), rs.end());
  metrics["rollout/trained_groups"] = kept_counts[0];
  metrics["rollout/trained_trajectories"] = kept_counts[1];
}

}  // namespace

std::string rollout_dump_path(const RunPaths& paths, int64_t iteration, int rank, int world, const std::string& suffix) {
  const std::string name = "iter_" + std::to_string(iteration) + (world > 1 ? "_rank" + std::to_string(rank) : "");
  return (fs::path(paths.rollouts) / (name + suffix)).string();
}

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
  if (cfg.rollout.dump_trajectories)
    algo::write_trajectories_jsonl(rollout_dump_path(*in.paths, iteration, rank, world, ".jsonl"), g.dumped);
  return g.kept;
}

}  // namespace agentrl::train
