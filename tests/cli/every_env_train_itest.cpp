// One RL iteration end to end on every environment, through the binary and
// the shipped configs (configs/<env>_<estimator>.yaml), with the GPU model
// swapped for a tiny randomly initialised CPU policy and a tokenizer trained
// on the env's own text. Each run must roll out, update and checkpoint.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/envs/codetool/sandbox.h"
#include "cli/cli_test_support.h"
#include "envs/shared_data.h"

namespace fs = std::filesystem;

namespace agentrl {
namespace {

using testing::run_agentrl;

// Overrides that turn a GPU config into a seconds-long CPU run.
const char* kTiny =
    " model.path= model.dtype=float32 model.device=cpu model.gradient_checkpointing=false"
    " model.init.hidden_size=32 model.init.num_hidden_layers=1 model.init.num_attention_heads=2"
    " model.init.num_key_value_heads=1 model.init.intermediate_size=64 model.init.max_position_embeddings=4096"
    " tokenizer.train=true tokenizer.vocab_size=600 tokenizer.vocab_size_is_limit=true tokenizer.corpus_episodes=4"
    " engine.max_batch_size=8 engine.kv_budget_tokens=65536 engine.kv_memory_fraction=0 engine.max_seq_len=4096"
    " rollout.group_size=2 rollout.tasks_per_iteration=2 rollout.max_turns=2 rollout.max_new_tokens=12"
    " rollout.max_context_tokens=4096 rollout.concurrency=4 rollout.deterministic=true"
    " trainer.iterations=1 trainer.eval_every=0 trainer.eval_episodes=1 trainer.save_every=1"
    " trainer.micro_batch_tokens=8192 runtime.num_threads=1 sft.enabled=false";

struct Run {
  testing::CommandResult result;
  std::string run_dir;
  nlohmann::json last_metrics;
};

// `name` (default: the config's) names the run and its output directory.
Run train_one_iteration(const std::string& config, const std::string& extra = "", std::string name = "") {
  Run r;
  if (name.empty()) name = config;
  const auto out = fs::temp_directory_path() / ("agentrl_every_env_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string cfg = std::string(AGENTRL_SOURCE_DIR) + "/configs/" + config + ".yaml";
  r.result = run_agentrl("train " + cfg + " runtime.output_dir=" + out.string() + " runtime.name=" + name + kTiny +
                         " " + extra);
  r.run_dir = (out / name).string();
  std::ifstream in(fs::path(r.run_dir) / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) r.last_metrics = nlohmann::json::parse(line);
  return r;
}

void expect_one_trained_iteration(const Run& r) {
  ASSERT_EQ(r.result.exit_code, 0) << r.result.output;
  ASSERT_TRUE(r.last_metrics.is_object()) << "no metrics in " << r.run_dir << "\n" << r.result.output;
  EXPECT_EQ(r.last_metrics.value("step", -1), 1);
  // Every episode of the 2 x 2 batch ran (none failed), tokens were
  // generated, and the PPO update took at least one optimizer step.
  EXPECT_EQ(r.last_metrics.value("rollout/episodes", 0.0), 4.0) << r.last_metrics.dump();
  EXPECT_EQ(r.last_metrics.value("rollout/failed_episodes", -1.0), 0.0) << r.last_metrics.dump();
  EXPECT_GT(r.last_metrics.value("rollout/generated_tokens", 0.0), 0.0) << r.last_metrics.dump();
  EXPECT_GE(r.last_metrics.value("actor/optimizer_steps", 0.0), 1.0) << r.last_metrics.dump();
  EXPECT_TRUE(std::isfinite(r.last_metrics.value("actor/pg_loss", NAN))) << r.last_metrics.dump();
  EXPECT_TRUE(fs::exists(fs::path(r.run_dir) / "checkpoints" / "step_000001" / "model" / "model.safetensors"));
  EXPECT_TRUE(fs::exists(fs::path(r.run_dir) / "rollouts" / "iter_1.jsonl"));
}

TEST(EveryEnvTraining, AlfworldGrpoRunsOneIteration) {
  expect_one_trained_iteration(train_one_iteration("alfworld_grpo"));
}

TEST(EveryEnvTraining, EngineLogprobsAsPiOldGiveTheSameUpdateAsRescoring) {
  // Same seed, deterministic rollout: the two runs see the same batch; pi_old
  // either comes from the engine or is rescored by the trainer. The engine
  // used the same weights, so the two agree to float error and so does the
  // update.
  const auto a = train_one_iteration("alfworld_grpo", "", "pi_old_rescored").last_metrics;
  const auto b =
      train_one_iteration("alfworld_grpo", "trainer.recompute_old_logprobs=false", "pi_old_engine").last_metrics;
  ASSERT_EQ(a.value("step", -1), 1) << a.dump();
  ASSERT_EQ(b.value("step", -1), 1) << b.dump();
  EXPECT_LT(a.value("rollout/logprob_mismatch_max", 1.0), 1e-3) << a.dump();
  EXPECT_FALSE(b.contains("rollout/logprob_mismatch_max")) << "no rescoring, no mismatch to report: " << b.dump();
  EXPECT_EQ(a.value("rollout/generated_tokens", -1.0), b.value("rollout/generated_tokens", -2.0));
  EXPECT_GE(b.value("actor/optimizer_steps", 0.0), 1.0) << b.dump();
  EXPECT_NEAR(a.value("actor/pg_loss", NAN), b.value("actor/pg_loss", NAN), 1e-4);
  EXPECT_NEAR(a.value("actor/grad_norm", NAN), b.value("actor/grad_norm", NAN), 1e-3 * a.value("actor/grad_norm", 1.0));
}

TEST(EveryEnvTraining, SampledEvaluationAddsGroupsOfTheSamplingPolicyAndLeavesGreedyAlone) {
  // trainer.eval_sampled_per_task=3: the final evaluation also runs 3 sampled
  // episodes per held-out task (eval_sampled/*, eval_sampled.json); the greedy
  // evaluation is the same as without it.
  const std::string tasks = "trainer.eval_episodes=2";
  const auto plain = train_one_iteration("alfworld_grpo", tasks, "eval_greedy_only");
  const auto both = train_one_iteration("alfworld_grpo", tasks + " trainer.eval_sampled_per_task=3", "eval_sampled");
  ASSERT_EQ(plain.result.exit_code, 0) << plain.result.output;
  ASSERT_EQ(both.result.exit_code, 0) << both.result.output;
  const auto& a = plain.last_metrics;
  const auto& b = both.last_metrics;
  EXPECT_EQ(a.value("eval/episodes", -1.0), 2.0) << a.dump();
  EXPECT_FALSE(a.contains("eval_sampled/episodes")) << a.dump();
  EXPECT_FALSE(fs::exists(fs::path(plain.run_dir) / "eval_sampled.json"));
  EXPECT_EQ(b.value("eval/episodes", -1.0), 2.0) << b.dump();
  EXPECT_EQ(b.value("eval_sampled/episodes", -1.0), 6.0) << b.dump();
  EXPECT_EQ(b.value("eval_sampled/failed", -1.0), 0.0) << b.dump();
  for (const char* key : {"eval/success_rate", "eval/turns", "eval/invalid_action_ratio", "eval/reward"})
    EXPECT_EQ(a.value(key, -1.0), b.value(key, -2.0)) << key;
  std::ifstream in(fs::path(both.run_dir) / "eval_sampled.json");
  ASSERT_TRUE(in.good()) << both.run_dir;
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report.value("episodes", -1), 6);
  EXPECT_EQ(report.value("success_rate", -1.0), b.value("eval_sampled/success_rate", -2.0));
}

TEST(EveryEnvTraining, AlfworldGigpoRunsOneIteration) {
  expect_one_trained_iteration(train_one_iteration("alfworld_gigpo"));
}

TEST(EveryEnvTraining, WebshopEmpgRunsOneIteration) {
  expect_one_trained_iteration(train_one_iteration("webshop_empg"));
}

TEST(EveryEnvTraining, DeepsearchGrpoRunsOneIteration) {
  expect_one_trained_iteration(train_one_iteration("deepsearch_grpo"));
}

TEST(EveryEnvTraining, CodetoolSimpletirRunsOneIteration) {
  if (!envs::codetool::probe_sandbox(envs::codetool::SandboxConfig{}).available)
    GTEST_SKIP() << "bubblewrap unusable here: the code tool cannot run";
  // A random policy never writes code, so every turn is void: SimpleTIR's
  // filter (on in the shipped config) masks every trajectory out of the loss
  // and the iteration takes no optimizer step; with the filter off the same
  // batch trains.
  auto filtered = train_one_iteration("codetool_simpletir");
  ASSERT_EQ(filtered.result.exit_code, 0) << filtered.result.output;
  EXPECT_EQ(filtered.last_metrics.value("rollout/episodes", 0.0), 4.0) << filtered.last_metrics.dump();
  EXPECT_EQ(filtered.last_metrics.value("filter/void_turn/masked_trajectories", -1.0), 4.0)
      << filtered.last_metrics.dump();
  EXPECT_EQ(filtered.last_metrics.value("actor/optimizer_steps", -1.0), 0.0) << filtered.last_metrics.dump();
  expect_one_trained_iteration(train_one_iteration("codetool_simpletir", "algorithm.filters=[]"));
}

// The per-env CPU recipes (configs/<env>_cpu.yaml), shrunk to seconds: the
// whole pipeline of the recipe (tokenizer, init, SFT on expert
// demonstrations, RL, evaluation before and after) runs and writes its
// metrics. Whether the recipe learns is shown by runs (docs/results.md).
Run run_cpu_recipe(const std::string& config, const std::string& extra = "") {
  return train_one_iteration(
      config,
      "model.init.hidden_size=32 model.init.num_hidden_layers=1 model.init.intermediate_size=64"
      " tokenizer.corpus_episodes=8 sft.enabled=true sft.demo_episodes=8 sft.epochs=1 trainer.eval_every=1"
      " trainer.eval_episodes=2 trainer.eval_sampled_per_task=1 " +
          extra,
      config + "_recipe");
}

// step -> the metrics row of the evaluation at that step, checked: the
// recipe evaluated after SFT (step 0) and after its one RL iteration (step
// 1), each on the 2 configured episodes, and every row holds `keys`.
std::map<int, nlohmann::json> evaluations_after_sft_and_rl(const Run& r, const std::vector<std::string>& keys) {
  std::ifstream in(fs::path(r.run_dir) / "metrics.jsonl");
  std::map<int, nlohmann::json> evals;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    if (j.contains("eval/success_rate")) evals[j.value("step", -1)] = j;
  }
  EXPECT_EQ(evals.count(0), 1u) << "no evaluation after SFT";
  EXPECT_EQ(evals.count(1), 1u) << "no evaluation after RL";
  for (const auto& [step, j] : evals) {
    EXPECT_EQ(j.value("eval/episodes", -1.0), 2.0) << j.dump();
    for (const auto& key : keys) EXPECT_TRUE(j.contains(key)) << key << " missing at step " << step << ": " << j.dump();
  }
  return evals;
}

TEST(EveryEnvTraining, CodetoolCpuRecipeRunsSftRlAndEvaluation) {
  if (!envs::codetool::probe_sandbox(envs::codetool::SandboxConfig{}).available)
    GTEST_SKIP() << "bubblewrap unusable here: the code tool cannot run";
  // A policy this small after 8 demonstrations writes no complete code
  // block: every trajectory has a void turn, which the recipe's filter masks
  // out of the loss (CodetoolSimpletirRunsOneIteration); without the filter
  // the same batch trains.
  const auto r = run_cpu_recipe("codetool_cpu", "algorithm.filters=[]");
  expect_one_trained_iteration(r);
  evaluations_after_sft_and_rl(r, {"eval/env/solved_with_code", "eval_sampled/success_rate"});
  // The spike statistics of SimpleTIR's filter study are logged every update.
  for (const char* key : {"actor/grad_norm_max", "actor/grad_norm_p99", "actor/low_prob_frac"})
    EXPECT_TRUE(r.last_metrics.contains(key)) << key << " missing: " << r.last_metrics.dump();
  EXPECT_GE(r.last_metrics.value("actor/grad_norm_max", -1.0), r.last_metrics.value("actor/grad_norm_p99", 0.0));
}

TEST(EveryEnvTraining, DeepsearchCpuRecipeRunsSftRlAndEvaluation) {
  // Search-R1's inline context on the built-in world: SFT on the expert's
  // searches, one GRPO iteration, exact match and searches per question on
  // the test split after SFT and after RL, greedy and sampled.
  const auto r = run_cpu_recipe("deepsearch_cpu");
  expect_one_trained_iteration(r);
  // EM is the success rate (eval/success_rate); eval/env/em exists only
  // where an episode ended in the env, which this untrained policy's do not.
  const auto evals =
      evaluations_after_sft_and_rl(r, {"eval/env/searches", "eval_sampled/success_rate", "eval_sampled/env/searches"});
  for (const auto& [step, j] : evals) EXPECT_GE(j.value("eval/env/searches", -1.0), 0.0) << j.dump();
}

TEST(EveryEnvTraining, WebshopCpuRecipeRunsSftRlAndEvaluation) {
  // The built-in catalog in full context: SFT on the expert's episodes (and,
  // down-weighted, on the pages), one GRPO iteration on the purchase score,
  // success rate and mean score on the test split after SFT and after RL.
  // (The expert needs 4-7 steps: the tiny runs' 2-turn cap would leave no
  // complete demonstration. The recipe keeps the 3000 catalog ASINs as
  // pieces, tokenizer.env_symbols: the tiny runs' 600 pieces cannot.)
  const auto r = run_cpu_recipe("webshop_cpu", "rollout.max_turns=8 tokenizer.vocab_size=3600");
  expect_one_trained_iteration(r);
  const auto evals = evaluations_after_sft_and_rl(r, {"eval/score", "eval_sampled/success_rate", "eval_sampled/score"});
  for (const auto& [step, j] : evals) {
    EXPECT_GE(j.value("eval/score", -1.0), 0.0) << j.dump();
    EXPECT_LE(j.value("eval/score", 2.0), 1.0) << j.dump();
  }
}

TEST(EveryEnvTraining, AlfworldRealCpuRecipeRunsSftRlAndEvaluatesOnTheRealGames) {
  // Built-in scenes of the fitted tables, verl-agent's 2-step window with the
  // admissible commands, SFT on the prior expert (prompts down-weighted in
  // the loss), one EMPG iteration, evaluations after SFT and after RL; then
  // the SFT checkpoint on real ALFWorld games, as
  // scripts/experiments/alfworld_real.sh evaluates it.
  const auto r = run_cpu_recipe("alfworld_real_cpu", "rollout.max_turns=6 alfworld.max_steps=6");
  expect_one_trained_iteration(r);
  evaluations_after_sft_and_rl(r, {"eval_sampled/success_rate"});
  const std::string data = std::string(AGENTRL_SHARED_DATA_DIR) + "/alfworld/json_2.1.1";
  REQUIRE_SHARED_DATA(data);
  const auto out = fs::path(r.run_dir) / "real_valid_unseen";
  const auto eval = run_agentrl("eval " + std::string(AGENTRL_SOURCE_DIR) + "/configs/alfworld_real_cpu.yaml" +
                                kTiny + " tokenizer.train=false tokenizer.path=" + r.run_dir + "/tokenizer" +
                                " alfworld.data_dir=" + data + " --model " + r.run_dir +
                                "/checkpoints/step_000000/model --split valid_unseen --episodes 3 --out " + out.string());
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  std::ifstream in(out / "metrics.json");
  const auto m = nlohmann::json::parse(in);
  EXPECT_EQ(m.value("episodes", 0), 3) << m.dump();
  EXPECT_EQ(m.value("split", std::string()), "valid_unseen") << m.dump();
  EXPECT_TRUE(m.contains("per_task_type")) << m.dump();
}

}  // namespace
}  // namespace agentrl
