#include "agentrl/train/evaluator.h"

#include <algorithm>

#include "agentrl/core/error.h"
#include "agentrl/core/logging.h"
#include "agentrl/core/rng.h"
#include "agentrl/rollout/rollout_pool.h"

namespace agentrl::train {

std::map<std::string, double> EvalReport::scalars(const std::string& p) const {
  std::map<std::string, double> m;
  m[p + "success_rate"] = success_rate;
  m[p + "score"] = mean_score;
  m[p + "reward"] = mean_reward;
  m[p + "turns"] = mean_turns;
  m[p + "invalid_action_ratio"] = invalid_action_ratio;
  m[p + "episodes"] = static_cast<double>(episodes);
  m[p + "failed"] = static_cast<double>(failed);
  for (const auto& [type, c] : per_type)
    if (!type.empty()) m[p + "success/" + type] = c.second ? static_cast<double>(c.first) / c.second : 0.0;
  for (const auto& [name, v] : env_metrics) m[p + "env/" + name] = v;
  return m;
}

nlohmann::json EvalReport::to_json() const {
  nlohmann::json j;
  j["split"] = split;
  j["episodes"] = episodes;
  j["failed"] = failed;
  j["success_rate"] = success_rate;
  j["mean_score"] = mean_score;
  j["mean_reward"] = mean_reward;
  j["mean_turns"] = mean_turns;
  j["invalid_action_ratio"] = invalid_action_ratio;
  j["context_cut"] = context_cut;
  nlohmann::json types = nlohmann::json::object();
  for (const auto& [type, c] : per_type)
    types[type.empty() ? "all" : type] = {{"successes", c.first},
                                          {"episodes", c.second},
                                          {"success_rate", c.second ? static_cast<double>(c.first) / c.second : 0.0}};
  j["per_task_type"] = types;
  j["env_metrics"] = env_metrics;
  return j;
}

EvalReport summarize(const std::string& split, std::vector<rollout::Trajectory> trajectories) {
  EvalReport r;
  r.split = split;
  int64_t ok = 0, turns = 0, invalid = 0, successes = 0;
  double score = 0, reward = 0;
  for (const auto& t : trajectories) {
    ++r.episodes;
    if (t.failed) {
      ++r.failed;
      continue;
    }
    ++ok;
    r.context_cut += t.context_cut;
    successes += t.success;
    score += t.score;
    reward += t.reward;
    turns += static_cast<int64_t>(t.turns.size());
    for (const auto& turn : t.turns) invalid += turn.invalid_action;
    for (const auto& [name, v] : t.metrics) r.env_metrics[name] += v;
    auto& c = r.per_type[t.task_type];
    c.first += t.success;
    c.second += 1;
  }
  // Failed episodes count as unsuccessful: an env crash must not inflate the score.
  r.success_rate = r.episodes ? static_cast<double>(successes) / r.episodes : 0.0;
  r.mean_score = ok ? score / ok : 0.0;
  r.mean_reward = ok ? reward / ok : 0.0;
  r.mean_turns = ok ? static_cast<double>(turns) / ok : 0.0;
  r.invalid_action_ratio = turns ? static_cast<double>(invalid) / turns : 0.0;
  for (auto& [name, sum] : r.env_metrics) sum /= static_cast<double>(ok);
  r.trajectories = std::move(trajectories);
  return r;
}

namespace {

// An episode the context limit ended is scored as a failure; say so, since
// a too-small limit otherwise looks like a weak policy.
EvalReport warn_on_context_cuts(EvalReport r, const rollout::AgentContext& ctx) {
  if (r.context_cut > 0)
    log().warn("{} of {} {} episodes ended because the context was full (rollout.max_context_tokens = {}); they "
               "count as failures: raise rollout.max_context_tokens or use rollout.context_mode window",
               r.context_cut, r.episodes, r.split, ctx.rollout.max_context_tokens);
  return r;
}

}  // namespace

EvalReport evaluate(rollout::Generator& generator, std::shared_ptr<const envs::EnvSuite> suite,
                    std::shared_ptr<const rollout::AgentContext> ctx, const std::string& split, int64_t episodes,
                    uint64_t seed, int64_t samples_per_task) {
  if (samples_per_task < 1) throw Error("evaluate: samples_per_task must be >= 1");
  const size_t n = suite->tasks().size(split);
  const size_t count = episodes > 0 ? std::min(n, static_cast<size_t>(episodes)) : n;
  std::vector<envs::Task> tasks;
  for (size_t i = 0; i < count; ++i) tasks.push_back(suite->tasks().get(split, i));
  auto specs = rollout::make_group_episodes(tasks, samples_per_task, mix_seed(seed, 0xE7A1), 0);
  for (auto& s : specs) {
    s.episode_id = "eval-" + std::to_string(s.group_id);
    if (samples_per_task > 1) s.episode_id += "-" + std::to_string(s.sample_index);
    s.cache_key = "eval-" + std::to_string(s.group_id);
  }
  const auto context = ctx;
  rollout::RolloutPool pool(generator, std::move(suite), std::move(ctx));
  return warn_on_context_cuts(summarize(split, pool.run(specs)), *context);
}

EvalReport evaluate_scripted(const std::function<std::optional<std::string>(envs::Env&)>& policy,
                             const envs::EnvSuite& suite, std::shared_ptr<const rollout::AgentContext> ctx,
                             const std::string& split, int64_t episodes) {
  const size_t n = suite.tasks().size(split);
  const size_t count = episodes > 0 ? std::min(n, static_cast<size_t>(episodes)) : n;
  std::vector<rollout::Trajectory> trajs;
  for (size_t i = 0; i < count; ++i) {
    rollout::EpisodeSpec spec;
    spec.task = suite.tasks().get(split, i);
    spec.episode_id = "eval-" + std::to_string(i);
    spec.env_seed = spec.sample_seed = i;
    rollout::EpisodeRunner runner(suite.make_env(), spec, ctx);
    trajs.push_back(rollout::run_scripted_episode(runner, policy));
  }
  return warn_on_context_cuts(summarize(split, std::move(trajs)), *ctx);
}

}  // namespace agentrl::train
