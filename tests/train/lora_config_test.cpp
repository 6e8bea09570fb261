// Specification of the model.lora config section and its wiring into the
// policy (train/policy.h): PEFT's defaults, the rules that tie keys
// together, and a model.lora.path adapter that does not match the section.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agentrl/core/error.h"
#include "agentrl/model/lora_peft.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/policy.h"
#include "train/train_test_support.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

const std::string kConfig = std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml";

std::string error_of(const std::vector<std::string>& overrides) { return testing::config_error(kConfig, overrides); }

TEST(LoraConfig, DefaultsArePeftsAndOverridesReachTheAdapterOptions) {
  auto cfg = load_experiment_config(kConfig, {});
  EXPECT_FALSE(cfg.model.lora.enabled);
  EXPECT_EQ(cfg.model.lora.rank, 8);       // PEFT's r
  EXPECT_EQ(cfg.model.lora.alpha, 8.0);    // PEFT's lora_alpha
  EXPECT_EQ(cfg.model.lora.dropout, 0.0);  // PEFT's lora_dropout
  EXPECT_EQ(cfg.model.lora.target_modules.size(), 7u);
  cfg = load_experiment_config(kConfig, {"model.lora.enabled=true", "model.lora.rank=16", "model.lora.alpha=32",
                                         "model.lora.target_modules=[q_proj,v_proj]", "model.lora.init=gaussian",
                                         "model.lora.use_rslora=true"});
  const auto o = lora_options(cfg);
  EXPECT_EQ(o.rank, 16);
  EXPECT_EQ(o.alpha, 32.0);
  EXPECT_TRUE(o.use_rslora);
  EXPECT_EQ(o.init, model::LoraInit::kGaussian);
  EXPECT_EQ(o.target_modules, std::vector<std::string>({"q_proj", "v_proj"}));
  EXPECT_EQ(o.dtype, torch::kFloat32);
}

TEST(LoraConfig, BadKeysAreRefusedNamingTheKey) {
  EXPECT_THAT(error_of({"model.lora.path=/some/adapter"}),
              ::testing::HasSubstr("model.lora.path is '/some/adapter' but model.lora.enabled is false"));
  EXPECT_THAT(error_of({"model.lora.enabled=true", "model.lora.target_modules=[q_proj,c_attn]"}),
              ::testing::HasSubstr("c_attn"));
  EXPECT_THAT(error_of({"model.lora.enabled=true", "model.lora.target_modules=[]"}),
              ::testing::HasSubstr("model.lora.target_modules is empty"));
  EXPECT_THAT(error_of({"model.lora.rank=0"}), ::testing::HasSubstr("model.lora.rank"));
  EXPECT_THAT(error_of({"model.lora.init=pissa"}), ::testing::HasSubstr("model.lora.init"));
}

TEST(LoraConfig, AnAdapterPathThatDoesNotMatchTheSectionIsRefusedBeforeLoading) {
  Policy p;
  p.model = testing::tiny_train_model();
  model::LoraOptions written;
  written.rank = 2;
  written.alpha = 4;
  {
    auto donor = testing::tiny_train_model();
    model::attach_lora(*donor, written);
    const auto dir = (fs::temp_directory_path() / ("agentrl_lora_cfg_" + std::to_string(::getpid()))).string();
    model::save_peft_adapter(*donor, model::PeftAdapterConfig{written, ""}, dir);
    auto cfg = load_experiment_config(kConfig, {"model.lora.enabled=true", "model.lora.rank=4",
                                                "model.lora.alpha=4", "model.lora.path=" + dir});
    try {
      attach_policy_lora(p, cfg);
      FAIL() << "an adapter of rank 2 accepted for model.lora.rank 4";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("model.lora.rank: 4, but the adapter at " + dir + " has 2"));
    }
    EXPECT_TRUE(model::named_lora_parameters(*p.model).empty()) << "nothing attached by the refused call";
    cfg.model.lora.rank = 2;
    attach_policy_lora(p, cfg);
    auto ours = model::named_lora_parameters(*p.model), theirs = model::named_lora_parameters(*donor);
    ASSERT_EQ(ours.size(), theirs.size());
    for (size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(torch::equal(ours[i].second, theirs[i].second));
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace agentrl::train
