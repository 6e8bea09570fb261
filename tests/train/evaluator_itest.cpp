// The evaluator with the scripted expert (what `agentrl eval --policy expert`
// runs: prompts rendered, responses parsed by the env like a model's) reports
// exactly what the env's own expert achieves when run directly on the env:
// per-episode success and score, overall success rate and mean score, and
// success per task type (ALFWorld, WebShop).
#include <gtest/gtest.h>

#include <filesystem>

#include "agentrl/envs/alfworld/alfworld_env.h"
#include "agentrl/envs/env_tools.h"
#include "agentrl/envs/registry.h"
#include "agentrl/envs/webshop/webshop_env.h"
#include "agentrl/train/evaluator.h"
#include "rollout/rollout_test_support.h"

namespace agentrl::train {
namespace {

namespace fs = std::filesystem;

struct DirectRun {
  bool success = false;
  double score = 0.0;
  int steps = 0;
  std::string task_type;
};

// The env's expert straight on the env: no prompts, no parsing.
DirectRun run_expert_on_env(const envs::EnvSuite& suite, const envs::Task& task, uint64_t seed) {
  auto env = suite.make_env();
  env->reset(task, seed);
  DirectRun d;
  d.task_type = task.task_type;
  for (int s = 0; s < env->max_steps(); ++s) {
    auto action = env->expert_action();
    if (!action) break;
    envs::StepResult r = env->step(*action);
    ++d.steps;
    d.success = r.info.success;
    d.score = r.info.score;
    if (!r.info.task_type.empty()) d.task_type = r.info.task_type;
    if (r.done) break;
  }
  return d;
}

std::shared_ptr<rollout::AgentContext> window_context() {
  auto ctx = std::make_shared<rollout::AgentContext>();
  ctx->rollout.context_mode = "window";
  ctx->rollout.max_context_tokens = 1 << 20;
  ctx->tokenizer = std::make_shared<agentrl::testing::ByteTokenizer>();
  ctx->chat = text::ChatTemplate::create("chatml", ctx->tokenizer, "");
  return ctx;
}

// Checks the evaluator's expert report against the direct runs; returns it.
EvalReport expect_report_matches_direct_expert(const envs::EnvSuite& suite, const std::string& split, int64_t n) {
  auto ctx = window_context();
  EvalReport report = evaluate_scripted(rollout::expert_policy(ctx->prompt), suite, ctx, split, n);
  EXPECT_EQ(report.episodes, n);
  EXPECT_EQ(report.failed, 0);
  if (report.trajectories.size() != static_cast<size_t>(n)) {
    ADD_FAILURE() << report.trajectories.size() << " trajectories for " << n << " episodes";
    return report;
  }
  int64_t successes = 0;
  double score = 0.0;
  std::map<std::string, std::pair<int64_t, int64_t>> per_type;
  for (int64_t i = 0; i < n; ++i) {
    const auto task = suite.tasks().get(split, static_cast<size_t>(i));
    const DirectRun d = run_expert_on_env(suite, task, static_cast<uint64_t>(i));
    const auto& t = report.trajectories[static_cast<size_t>(i)];
    EXPECT_EQ(t.success, d.success) << task.id;
    EXPECT_DOUBLE_EQ(t.score, d.score) << task.id;
    EXPECT_EQ(static_cast<int>(t.turns.size()), d.steps) << task.id;
    for (const auto& turn : t.turns) EXPECT_FALSE(turn.invalid_action) << task.id << ": " << turn.action;
    successes += d.success;
    score += d.score;
    per_type[d.task_type].first += d.success;
    per_type[d.task_type].second += 1;
  }
  EXPECT_DOUBLE_EQ(report.success_rate, static_cast<double>(successes) / n);
  EXPECT_NEAR(report.mean_score, score / n, 1e-12);
  EXPECT_EQ(report.per_type, per_type);
  EXPECT_DOUBLE_EQ(report.invalid_action_ratio, 0.0);
  // The env tools' own expert evaluation counts the same successes.
  envs::EvalOptions o;
  o.split = split;
  o.episodes = n;
  envs::EvalResult direct = envs::evaluate(suite, envs::expert_policy(), o);
  EXPECT_EQ(direct.successes, successes);
  for (const auto& [type, stats] : direct.per_type) EXPECT_EQ(stats.successes, per_type[type].first) << type;
  return report;
}

TEST(EvaluatorExpert, AlfworldReportMatchesTheEnvsExpertIncludingFailures) {
  config::ExtensionSections sections;
  auto& c = sections.as<envs::alfworld::AlfworldConfig>("alfworld");
  c.valid_seen_size = 24;
  c.max_steps = 6;  // too few for some plans: the expert fails some games, on both paths alike
  auto suite = envs::make_env_suite("alfworld", sections);
  EvalReport report = expect_report_matches_direct_expert(*suite, "valid_seen", 24);
  EXPECT_GT(report.success_rate, 0.0);
  EXPECT_LT(report.success_rate, 1.0) << "no failures: the step limit no longer bites; lower max_steps";
  EXPECT_GT(report.per_type.size(), 1u);
}

TEST(EvaluatorExpert, WebshopReportMatchesTheEnvsExpertIncludingFailures) {
  const fs::path dir = fs::temp_directory_path() / ("agentrl_eval_webshop_" + std::to_string(::getpid()));
  config::ExtensionSections sections;
  auto& c = sections.as<envs::webshop::WebshopConfig>("webshop");
  c.num_products = 300;
  c.num_goals = 60;
  c.test_goals = 20;
  c.eval_goals = 20;
  c.index_dir = dir.string();
  c.max_steps = 4;  // goals with several options need more: some purchases never happen
  auto suite = envs::make_env_suite("webshop", sections);
  EvalReport report = expect_report_matches_direct_expert(*suite, suite->eval_split(), 20);
  EXPECT_GT(report.success_rate, 0.0);
  EXPECT_LT(report.success_rate, 1.0) << "no failures: the step limit no longer bites; lower max_steps";
  fs::remove_all(dir);
}

TEST(EvalSummary, EnvMetricsAreMeansOverTheEpisodesThatDidNotFail) {
  std::vector<rollout::Trajectory> ts(4);
  ts[0].metrics = {{"code_blocks", 2}, {"solved_with_code", 1}};
  ts[1].metrics = {{"code_blocks", 1}};  // no solved_with_code: counts 0
  ts[2].metrics = {{"code_blocks", 3}, {"void_turn", 1}};
  ts[3].failed = true;
  ts[3].metrics = {{"code_blocks", 100}};
  const auto r = summarize("test", ts);
  EXPECT_DOUBLE_EQ(r.env_metrics.at("code_blocks"), 2.0);
  EXPECT_DOUBLE_EQ(r.env_metrics.at("solved_with_code"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(r.env_metrics.at("void_turn"), 1.0 / 3);
  const auto m = r.scalars();
  EXPECT_DOUBLE_EQ(m.at("eval/env/code_blocks"), 2.0);
  EXPECT_DOUBLE_EQ(r.to_json()["env_metrics"]["solved_with_code"].get<double>(), 1.0 / 3);
}

TEST(EvaluatorExpert, EpisodesTheContextLimitEndsAreCountedAsCutAndFailed) {
  // Full context: each step adds its observation and response to one
  // sequence, so a small limit ends the expert's longer episodes.
  config::ExtensionSections sections;
  auto& c = sections.as<envs::alfworld::AlfworldConfig>("alfworld");
  c.valid_seen_size = 12;
  auto suite = envs::make_env_suite("alfworld", sections);
  auto ctx = window_context();
  ctx->rollout.context_mode = "full";
  const EvalReport roomy = evaluate_scripted(rollout::expert_policy(ctx->prompt), *suite, ctx, "valid_seen", 12);
  EXPECT_EQ(roomy.context_cut, 0);
  ctx->rollout.max_context_tokens = 1500;  // bytes (byte tokenizer)
  const EvalReport cut = evaluate_scripted(rollout::expert_policy(ctx->prompt), *suite, ctx, "valid_seen", 12);
  EXPECT_GT(cut.context_cut, 0);
  EXPECT_LT(cut.success_rate, roomy.success_rate);
  int64_t flagged = 0;
  for (const auto& t : cut.trajectories) {
    flagged += t.context_cut;
    if (t.context_cut) {
      EXPECT_FALSE(t.success);
      EXPECT_TRUE(t.truncated);
    }
  }
  EXPECT_EQ(flagged, cut.context_cut);
  EXPECT_EQ(cut.to_json().at("context_cut").get<int64_t>(), cut.context_cut);
}

}  // namespace
}  // namespace agentrl::train
