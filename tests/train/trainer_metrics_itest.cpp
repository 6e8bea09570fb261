// What one RL iteration of the real trainer logs besides the loss: filter
// rates (void-turn rate included) and Li's logit-update norm, every update.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "agentrl/train/trainer.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

TEST(TrainerMetrics, FilterRatesAndTheLogitUpdateNormAreLoggedEveryIteration) {
  const auto dir = fs::temp_directory_path() / ("agentrl_trainer_metrics_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto cfg = load_experiment_config(std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml",
                                    {"runtime.output_dir=" + dir.string(), "trainer.iterations=2",
                                     "algorithm.filters=[void_turn,overlong]", "algorithm.overlong.mode=penalty"});
  Trainer trainer(cfg, {});
  ASSERT_EQ(trainer.run().iterations_done, 2);
  std::ifstream in(dir / "tiny" / "metrics.jsonl");
  std::string line;
  int iterations = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("step").get<int>() == 0) continue;  // the SFT evaluation
    ++iterations;
    for (const char* key : {"filter/dropped_group_rate", "filter/dropped_trajectory_rate",
                            "filter/masked_trajectory_rate", "void_turn/flagged_rate", "overlong/flagged_rate",
                            "actor/logit_update_norm"}) {
      ASSERT_TRUE(j.contains(key)) << key << " missing at step " << j.at("step");
      if (std::string(key).rfind("actor/", 0) != 0) {
        EXPECT_GE(j.at(key).get<double>(), 0.0) << key;
        EXPECT_LE(j.at(key).get<double>(), 1.0) << key;
      }
    }
    EXPECT_GT(j.at("actor/logit_update_norm").get<double>(), 0.0);
    // The rate is the count over the trajectories the filters saw.
    const double episodes = j.at("rollout/episodes").get<double>() - j.at("rollout/failed_episodes").get<double>();
    EXPECT_DOUBLE_EQ(j.at("void_turn/flagged_rate").get<double>(),
                     j.at("filter/void_turn/flagged_trajectories").get<double>() / episodes);
  }
  EXPECT_EQ(iterations, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace agentrl::train
