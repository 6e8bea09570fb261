// Specification of model.attention: the kernel names a config may give, the
// error for a kernel this LibTorch lacks, and the kernel surviving the copy
// the trainer makes for its KL reference (train/run_setup.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include "agentrl/core/error.h"
#include "agentrl/model/attention.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/run_setup.h"
#include "train/train_test_support.h"

namespace agentrl::train {
namespace {

const std::string kConfig = std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml";

std::string error_of(const std::vector<std::string>& overrides) { return testing::config_error(kConfig, overrides); }

TEST(AttentionConfig, AutoByDefaultEagerAlwaysSdpaOnlyWhereTheLibTorchHasIt) {
  EXPECT_EQ(load_experiment_config(kConfig, {}).model.attention, "auto");
  EXPECT_EQ(error_of({"model.attention=eager"}), "(accepted)");
  if (model::sdpa_available()) {
    EXPECT_EQ(error_of({"model.attention=sdpa"}), "(accepted)");
  } else {
    const auto e = error_of({"model.attention=sdpa"});
    EXPECT_THAT(e, ::testing::HasSubstr(kConfig + ": model.attention: sdpa needs LibTorch >= 2.1"));
    EXPECT_THAT(e, ::testing::HasSubstr(TORCH_VERSION));
  }
  EXPECT_THAT(error_of({"model.attention=flash"}), ::testing::HasSubstr("model.attention"));
}

TEST(AttentionConfig, TheReferenceCopyKeepsTheKernel) {
  model::ModelArgs a;
  a.vocab_size = 11, a.hidden_size = 8, a.intermediate_size = 16, a.num_hidden_layers = 2;
  a.num_attention_heads = 2, a.num_key_value_heads = 1;
  model::TransformerLM m(a);
  for (auto kernel : {model::AttentionKernel::kSdpa, model::AttentionKernel::kEager}) {
    m->set_attention_kernel(kernel);
    auto copy = clone_model(m);
    EXPECT_EQ(copy->attention_kernel(), kernel);
    for (auto& layer : copy->model->layers) EXPECT_EQ(layer->self_attn->kernel, kernel);
  }
}

}  // namespace
}  // namespace agentrl::train
