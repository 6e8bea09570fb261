// The agentrl binary: help, version, config show, exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/cli_test_support.h"

namespace fs = std::filesystem;

namespace agentrl {
namespace {

using testing::run_agentrl;

std::string write_tmp(const std::string& name, const std::string& text) {
  auto p = fs::temp_directory_path() / ("agentrl_cli_" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(Cli, HelpListsTheSubcommandsAndExitsZero) {
  auto r = run_agentrl("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"version", "config", "train", "sft", "eval", "export", "launch", "env"})
    EXPECT_NE(r.output.find(sub), std::string::npos) << sub << "\n" << r.output;
}

TEST(Cli, VersionReportsLibtorchBlasAndThreads) {
  auto r = run_agentrl("version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("libtorch [12]\\.[0-9]+"))) << r.output;
  EXPECT_NE(r.output.find("attention kernels: eager"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("blas:"), std::string::npos);
  EXPECT_NE(r.output.find("threads:"), std::string::npos);
}

TEST(Cli, UnknownSubcommandIsAUsageError) { EXPECT_EQ(run_agentrl("frobnicate").exit_code, 2); }

TEST(Cli, ConfigShowAppliesOverrides) {
  auto r = run_agentrl(std::string("config show ") + AGENTRL_SOURCE_DIR + "/configs/alfworld_grpo.yaml trainer.optim.lr=1e-5");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("lr: 1e-05"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("lr: 1e-06  # peak"), r.output.rfind("lr: 1e-06  # peak")) << "only sft.optim keeps 1e-6";
}

TEST(Cli, EveryShippedConfigLoads) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(AGENTRL_SOURCE_DIR) / "configs")) {
    // base/ holds fragments that other configs compose; paper/ holds presets.
    if (e.path().extension() != ".yaml" || e.path().parent_path().filename() == "base") continue;
    auto r = run_agentrl("config show " + e.path().string());
    EXPECT_EQ(r.exit_code, 0) << e.path() << "\n" << r.output;
    ++n;
  }
  EXPECT_GE(n, 7);
}

TEST(Cli, EnvPromptPrintsTheQuickstartPromptsOfAnExpertEpisode) {
  // tokenizer.train: the command trains the config's tokenizer first, as a run would.
  auto r = run_agentrl(std::string("env prompt ") + AGENTRL_SOURCE_DIR + "/configs/quickstart.yaml --task 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[alfworld valid_seen #2 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("=== step 1: prompt, "), std::string::npos) << r.output;
  // The quickstart's chat template (ChatML) and its prompt: the observation,
  // then from step 2 on the task repeated after it.
  EXPECT_NE(r.output.find("<|im_start|>user\n-= Welcome to TextWorld, ALFRED! =-"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("=== step 2: appended "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nTask: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--- response, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("<action>"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("=== episode over: success=1 "), std::string::npos) << r.output;
}

TEST(Cli, EnvPromptPlaysTheResponsesOfAFileAndNamesAMissingOne) {
  const std::string file = write_tmp("responses.txt", "<action>look</action>\n<action>fly away</action>\n");
  auto r = run_agentrl(std::string("env prompt ") + AGENTRL_SOURCE_DIR + "/configs/quickstart.yaml --task 0 --responses " +
                       file);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--- env: action \"look\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--- env: action \"fly away\", reward 0, invalid ---"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(no more responses: the episode stops here)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("=== episode over: success=0 steps=2 "), std::string::npos) << r.output;

  auto missing = run_agentrl(std::string("env prompt ") + AGENTRL_SOURCE_DIR +
                             "/configs/quickstart.yaml --responses /nonexistent/responses.txt");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("cannot read '/nonexistent/responses.txt'"), std::string::npos) << missing.output;
}

TEST(Cli, UnknownConfigKeyExitsTwoWithFileLineAndSuggestion) {
  auto f = write_tmp("bad_key.yaml", "trainer:\n  iterations: 3\n  optim:\n    lrr: 0.1\n");
  auto r = run_agentrl("config show " + f);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad_key.yaml:4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("trainer.optim.lrr"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("trainer.optim.lr"), std::string::npos) << r.output;
}

TEST(Cli, OutOfRangeValueExitsTwo) {
  auto f = write_tmp("bad_range.yaml", "rollout:\n  group_size: 0\n");
  auto r = run_agentrl("config show " + f);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rollout.group_size"), std::string::npos) << r.output;
}

TEST(Cli, SeqMeanTokenSumNormWithoutItsConstantIsRefusedAtLoad) {
  auto f = write_tmp("sum_norm.yaml", "actor:\n  loss_agg: seq-mean-token-sum-norm\n");
  auto r = run_agentrl("train " + f);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sum_norm.yaml: actor.loss_agg seq-mean-token-sum-norm needs a constant divisor"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("actor.loss_agg_norm_length"), std::string::npos) << r.output;
}

TEST(Cli, EvalSampledNeedsAModelPolicyAndAPositiveCount) {
  const std::string cfg = std::string(AGENTRL_SOURCE_DIR) + "/configs/quickstart.yaml";
  auto expert = run_agentrl("eval " + cfg + " --policy expert --sampled 2");
  EXPECT_EQ(expert.exit_code, 2) << expert.output;
  EXPECT_NE(expert.output.find("--sampled applies to --policy model only"), std::string::npos) << expert.output;
  auto zero = run_agentrl("eval " + cfg + " --sampled 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
  // CLI11's wording of the range differs between versions ("1 to 1000000", "[1 - 1000000]").
  EXPECT_NE(zero.output.find("--sampled: Value 0 not in range"), std::string::npos) << zero.output;
}

TEST(Cli, EvalSamplesNeedASamplingEvaluationAndExcludeSampled) {
  const std::string cfg = std::string(AGENTRL_SOURCE_DIR) + "/configs/quickstart.yaml";
  auto greedy = run_agentrl("eval " + cfg + " --samples 4");
  EXPECT_EQ(greedy.exit_code, 2) << greedy.output;
  EXPECT_NE(greedy.output.find("--samples 4 needs rollout.eval_temperature > 0"), std::string::npos) << greedy.output;
  auto both = run_agentrl("eval " + cfg + " --samples 4 --sampled 2");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--samples and --sampled exclude each other"), std::string::npos) << both.output;
}

TEST(Cli, DemoMistakeRateOutsideZeroToOneIsRefusedNamingTheValue) {
  const std::string cfg = std::string(AGENTRL_SOURCE_DIR) + "/configs/quickstart.yaml";
  auto flag = run_agentrl("env demos alfworld --config " + cfg + " --mistake-rate 1.5 --out /tmp/agentrl_never.jsonl");
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
  EXPECT_NE(flag.output.find("--mistake-rate must be in [0, 1), got 1.5"), std::string::npos) << flag.output;
  auto key = run_agentrl("config show " + cfg + " sft.demo_mistake_rate=1");
  EXPECT_EQ(key.exit_code, 2) << key.output;
  EXPECT_NE(key.output.find("key 'sft.demo_mistake_rate': value 1 is out of range, expected a number in [0, 1)"),
            std::string::npos)
      << key.output;
}

TEST(Cli, ConfigDocListsEveryKeyWithItsDoc) {
  auto r = run_agentrl("config show --doc");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("algorithm.empg.zeta"), std::string::npos);
  EXPECT_NE(r.output.find("alfworld.max_steps"), std::string::npos);
}

TEST(Cli, ConfigReferenceDocIsWhatTheBinaryDocuments) {
  // docs/config_reference.md is generated from `agentrl config show --doc`:
  // every key the binary knows has its row there, with its type and doc, and
  // the file has no row for a key that no longer exists.
  auto r = run_agentrl("config show --doc");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(std::string(AGENTRL_SOURCE_DIR) + "/docs/config_reference.md");
  std::map<std::string, std::string> rows;  // key -> whole row
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("| `", 0) == 0) rows[line.substr(3, line.find('`', 3) - 3)] = line;
  std::istringstream out(r.output);
  std::set<std::string> keys;
  while (std::getline(out, line)) {
    std::istringstream words(line);
    std::string key, type;
    if (!(words >> key >> type)) continue;
    keys.insert(key);
    auto it = rows.find(key);
    if (it == rows.end()) {
      ADD_FAILURE() << "docs/config_reference.md has no row for " << key;
      continue;
    }
    EXPECT_EQ(it->second.rfind("| `" + key + "` | " + type + " |", 0), 0u) << it->second;
    // The doc is the last column of both.
    const std::string& row = it->second;
    const auto cut = row.rfind(" | ");
    const std::string doc = row.substr(cut + 3, row.size() - cut - 5);
    EXPECT_EQ(line.size() >= doc.size() ? line.substr(line.size() - doc.size()) : "", doc) << key;
  }
  EXPECT_GT(keys.size(), 150u);
  for (const auto& [key, row] : rows) EXPECT_TRUE(keys.count(key)) << "stale row: " << key;
}

}  // namespace
}  // namespace agentrl
