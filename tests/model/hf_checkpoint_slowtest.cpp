// The "Done when" round trip at full size: a Qwen2.5-0.5B-shaped
// model (hidden 896, 24 layers, 14 heads, 2 KV heads, intermediate 4864,
// vocab 151936, tied embeddings, rope_theta 1e6; random init) written by
// write_random_init (what `agentrl model init` runs) -> load_pretrained ->
// save_pretrained -> load_pretrained gives bit-identical logits. Needs about
// 6 GB of RAM and 4 GB of disk, and tens of seconds: label "slow".
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>

#include "agentrl/model/hf_checkpoint.h"
#include "agentrl/model/hf_config.h"

namespace agentrl::model {
namespace {

namespace fs = std::filesystem;

ModelArgs qwen25_05b_shape() {
  ModelArgs a;
  a.model_type = "qwen2";
  a.vocab_size = 151936;
  a.hidden_size = 896;
  a.intermediate_size = 4864;
  a.num_hidden_layers = 24;
  a.num_attention_heads = 14;
  a.num_key_value_heads = 2;
  a.head_dim = 64;
  a.rms_norm_eps = 1e-6;
  a.rope_theta = 1e6;
  a.max_position_embeddings = 32768;
  a.tie_word_embeddings = true;
  a.attention_bias = true;
  a.bos_token_id = 151643;
  a.eos_token_id = 151643;
  return a;
}

torch::Tensor logits_of(TransformerLM m) {
  torch::NoGradGuard g;
  torch::Tensor ids = torch::tensor({{151643, 9707, 11, 1879, 0, 151935, 42}}, torch::kInt64);
  torch::Tensor pos = torch::arange(7, torch::kInt64).unsqueeze(0);
  torch::Tensor mask = torch::ones({1, 7}, torch::kBool);
  return m->forward(ids, pos, mask);
}

TEST(HfCheckpointSlowTest, Qwen25HalfBillionShapedRoundTripIsBitIdentical) {
  std::string tmpl = (fs::path(::testing::TempDir()) / "qwen05b_XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path root = tmpl;
  write_random_init(qwen25_05b_shape(), /*seed=*/1234, /*initializer_range=*/0.02, (root / "init").string());
  torch::Tensor first_logits;
  {
    Pretrained first = load_pretrained((root / "init").string());
    // 494,032,768 parameters: the published Qwen2.5-0.5B count (tied embedding counted once).
    EXPECT_EQ(parameter_count(first.model), 494032768);
    first_logits = logits_of(first.model);
    ASSERT_TRUE(torch::isfinite(first_logits).all().item<bool>());
    SaveOptions opts;
    opts.max_shard_bytes = 1'000'000'000;  // force the sharded layout on the re-export
    save_pretrained(first.model, (root / "export").string(), opts);
  }
  EXPECT_TRUE(fs::exists(root / "export" / "model.safetensors.index.json"));
  Pretrained second = load_pretrained((root / "export").string());
  EXPECT_TRUE(torch::equal(logits_of(second.model), first_logits));
  fs::remove_all(root);
}

}  // namespace
}  // namespace agentrl::model
