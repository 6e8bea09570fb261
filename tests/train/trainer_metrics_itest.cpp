// What one RL iteration of the real trainer logs besides the loss: filter
// rates (void-turn rate included), Li's logit-update norm, every update, and
// the rollout/trainer log-prob agreement of choice-mode rollouts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "agentrl/train/trainer.h"
#include "train/train_test_support.h"

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

// Choice-mode training rollouts (rollout.constrain_actions): the trainer
// scores the masked distributions the engine sampled from, so the recomputed
// pi_old equals the behaviour log-probs up to float rounding on every loss
// token, and the share of constrained loss tokens is logged; with
// actor.choice_mass_coef the unmasked policy's mass term is logged too.
TEST(TrainerMetrics, ChoiceModeRolloutsAreScoredUnderTheEnginesMasks) {
  const auto dir = fs::temp_directory_path() / ("agentrl_trainer_choice_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto cfg = load_experiment_config(std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml",
                                    {"runtime.output_dir=" + dir.string(), "trainer.iterations=1",
                                     "rollout.constrain_actions=true", "trainer.recompute_old_logprobs=true",
                                     "actor.choice_mass_coef=1"});
  Trainer trainer(cfg, {});
  ASSERT_EQ(trainer.run().iterations_done, 1);
  std::ifstream in(dir / "tiny" / "metrics.jsonl");
  std::string line;
  bool seen = false;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("step").get<int>() != 1) continue;
    seen = true;
    ASSERT_TRUE(j.contains("rollout/constrained_token_rate")) << line;
    EXPECT_GT(j.at("rollout/constrained_token_rate").get<double>(), 0.5);
    EXPECT_LT(j.at("rollout/logprob_mismatch_max").get<double>(), 1e-3);
    // The unmasked policy's -log mass on the allowed ids: positive (an SFT-less
    // tiny policy spreads its mass), finite, and in the loss.
    ASSERT_TRUE(j.contains("actor/choice_mass_nll")) << line;
    EXPECT_GT(j.at("actor/choice_mass_nll").get<double>(), 0.01);
    EXPECT_LT(j.at("actor/choice_mass_nll").get<double>(), 50.0);
    EXPECT_GT(j.at("actor/choice_mass_loss").get<double>(), 0.01);
  }
  EXPECT_TRUE(seen);
  fs::remove_all(dir);
}

TEST(TrainerMetrics, TheChoiceMassTermWithoutChoiceModeRolloutsIsRefused) {
  const auto error = testing::config_error(std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml",
                                           {"actor.choice_mass_coef=0.5"});
  EXPECT_NE(error.find("actor.choice_mass_coef is 0.5"), std::string::npos) << error;
  EXPECT_NE(error.find("rollout.constrain_actions is false"), std::string::npos) << error;
}

}  // namespace
}  // namespace agentrl::train
