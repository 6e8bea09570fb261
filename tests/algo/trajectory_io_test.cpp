// Specifications of the JSONL trajectory record reader / writer and of the
// `agentrl advantages` report built on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agentrl/algo/advantage_report.h"
#include "agentrl/algo/trajectory_io.h"
#include "agentrl/core/error.h"
#include "algo_test_util.h"

namespace agentrl::algo {
namespace {

const char* kRecord = R"({"group_id": 3, "sample_index": 1, "episode_id": "7-3-1", "task_id": "t9", "reward": 1.0,
  "success": true, "context_mode": "window", "turns": [
  {"response": "go north", "action": "go north", "observation_before": "You are in a hall.", "reward": 0.0,
   "n_generated": 4, "mean_entropy": 0.5},
  {"response": "take key", "n_generated": 2, "entropies": [1.0, 3.0], "logprobs": [-0.1, -0.2], "void_turn": true}]})";

TEST(TrajectoryIo, ParsesTheDocumentedRecord) {
  auto t = parse_trajectory_json(kRecord, "dump.jsonl", 1);
  EXPECT_EQ(t.group_id, 3);
  EXPECT_EQ(t.sample_index, 1);
  EXPECT_EQ(t.episode_id, "7-3-1");
  EXPECT_EQ(t.context_mode, rollout::ContextMode::kWindow);
  EXPECT_TRUE(t.success);
  ASSERT_EQ(t.turns.size(), 2u);
  EXPECT_EQ(t.turns[0].generated_tokens.size(), 4u);
  EXPECT_THAT(t.turns[0].entropies, ::testing::ElementsAre(0.5f, 0.5f, 0.5f, 0.5f));  // from mean_entropy
  EXPECT_EQ(t.turns[0].observation_before, "You are in a hall.");
  EXPECT_THAT(t.turns[1].entropies, ::testing::ElementsAre(1.0f, 3.0f));
  EXPECT_TRUE(t.turns[1].void_turn);
}

TEST(TrajectoryIo, RoundTripsThroughTheWriter) {
  auto t = parse_trajectory_json(kRecord, "dump.jsonl", 1);
  auto u = parse_trajectory_json(trajectory_to_json(t), "again", 1);
  EXPECT_EQ(u.episode_id, t.episode_id);
  EXPECT_EQ(u.turns[1].entropies, t.turns[1].entropies);
  EXPECT_EQ(u.turns[1].logprobs, t.turns[1].logprobs);
  EXPECT_EQ(u.turns[0].generated_tokens.size(), 4u);
  EXPECT_EQ(u.context_mode, t.context_mode);
}

TEST(TrajectoryIo, InvalidUtf8InModelTextIsWrittenAsReplacementCharacters) {
  // A small policy samples byte-fallback tokens that are no UTF-8 character:
  // the rollout dump must still be written (it once ended a code-tool run).
  auto t = parse_trajectory_json(kRecord, "dump.jsonl", 1);
  t.turns[0].response = "x = \xfe\xff 1";
  t.turns[1].observation_before = "cut \xe2\x82";
  auto u = parse_trajectory_json(trajectory_to_json(t), "again", 1);
  EXPECT_EQ(u.turns[0].response, "x = \xef\xbf\xbd\xef\xbf\xbd 1");
  EXPECT_EQ(u.turns[1].observation_before, "cut \xef\xbf\xbd");
}

TEST(TrajectoryIo, DumpKeepsGeneratedIdsAndAdvantagesFileMatchesEpisodes) {
  // The dump carries the generated ids (the dashboard decodes them), not
  // the context; the advantages file has one line per trajectory, by id.
  auto t = parse_trajectory_json(kRecord, "dump.jsonl", 1);
  t.turns[0].generated_tokens = {5, 6, 7, 8};
  const auto dir = std::filesystem::temp_directory_path() / ("agentrl_traj_io_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_trajectories_jsonl((dir / "iter_1.jsonl").string(), {t});
  auto back = read_trajectories_jsonl((dir / "iter_1.jsonl").string());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].turns[0].generated_tokens, (std::vector<int32_t>{5, 6, 7, 8}));
  EXPECT_TRUE(back[0].turns[0].context_tokens.empty());
  AdvantageResult r;
  r.turn_advantages = {std::vector<float>(t.turns.size(), 0.5f)};
  r.turn_details = {std::vector<std::map<std::string, double>>(t.turns.size(), {{"empg/gain", 1.25}})};
  write_advantages_jsonl((dir / "iter_1.advantages.jsonl").string(), {t}, r);
  std::ifstream in(dir / "iter_1.advantages.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["episode_id"], t.episode_id);
  EXPECT_EQ(j["turn_advantages"].size(), t.turns.size());
  EXPECT_EQ(j["turn_details"][0]["empg/gain"], 1.25);
  EXPECT_FALSE(std::getline(in, line));
  std::filesystem::remove_all(dir);
}

TEST(TrajectoryIo, MissingRequiredKeyNamesFileLineAndKey) {
  try {
    parse_trajectory_json(R"({"sample_index": 0, "reward": 1, "turns": []})", "dump.jsonl", 12);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("dump.jsonl:12: key 'group_id': missing"));
  }
}

TEST(TrajectoryIo, WrongTypeAndLengthMismatchAreFormatErrors) {
  try {
    parse_trajectory_json(R"({"group_id": "a", "sample_index": 0, "reward": 1, "turns": []})", "f", 2);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("key 'group_id': expected an integer, got \"a\""));
  }
  try {
    parse_trajectory_json(R"({"group_id": 0, "sample_index": 0, "reward": 1,
      "turns": [{"n_generated": 3, "entropies": [1, 2]}]})", "f", 3);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("key 'turns[0].entropies': 2 entries for 3 generated tokens"));
  }
  EXPECT_THROW(parse_trajectory_json("{not json", "f", 4), FormatError);
}

TEST(TrajectoryIo, MissingFileIsAnIoError) {
  EXPECT_THROW(read_trajectories_jsonl("/nonexistent/dump.jsonl"), IoError);
}

TEST(AdvantageReport, OneLinePerStepWithRewardEntropyAndAdvantage) {
  const std::string path = std::string(AGENTRL_BINARY_DIR) + "/algo_report_test.jsonl";
  {
    std::ofstream out(path);
    out << R"({"group_id": 0, "sample_index": 0, "reward": 1, "turns": [{"n_generated": 2, "entropies": [1, 2]}, {"n_generated": 1, "mean_entropy": 0.5}]})"
        << "\n\n"
        << R"({"group_id": 0, "sample_index": 1, "reward": 0, "turns": [{"n_generated": 1, "mean_entropy": 4}]})" << "\n";
  }
  AlgorithmConfig cfg;
  cfg.adv_estimator = "drgrpo";
  LocalCollective local;
  auto report = advantage_report(read_trajectories_jsonl(path), cfg, local);
  ASSERT_EQ(report.lines.size(), 3u);
  auto first = nlohmann::json::parse(report.lines[0]);
  EXPECT_EQ(first["episode"], "0-0");
  EXPECT_EQ(first["step"], 0);
  EXPECT_DOUBLE_EQ(first["reward"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(first["step_entropy"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(first["advantage"].get<double>(), 0.5);  // Dr.GRPO: 1 - mean{1, 0}
  auto last = nlohmann::json::parse(report.lines[2]);
  EXPECT_DOUBLE_EQ(last["advantage"].get<double>(), -0.5);
  EXPECT_DOUBLE_EQ(report.diagnostics.at("advantage/steps"), 3.0);
}

}  // namespace
}  // namespace agentrl::algo
