// Specification of model/hf_config.*: parsing the published config.json of
// Qwen2.5-0.5B, Qwen3-0.6B and Llama-3.2-1B (typed in from the model cards'
// config.json files on the Hugging Face Hub), HF defaults for absent keys,
// errors for unsupported values, and export that parses back.
#include "agentrl/model/hf_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"

namespace agentrl::model {
namespace {

using ::testing::HasSubstr;

const char* kQwen25_05B = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "max_window_layers": 24,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

const char* kQwen3_06B = R"({
  "architectures": ["Qwen3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 1024,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "max_position_embeddings": 40960,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

const char* kLlama32_1B = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})";

std::string config_error(const std::string& text) {
  try {
    parse_hf_config_text(text, "cfg/config.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Minimal valid llama config with one key replaced/added.
std::string llama_with(const std::string& extra) {
  return R"({"model_type":"llama","vocab_size":32,"hidden_size":16,"intermediate_size":32,)"
         R"("num_hidden_layers":1,"num_attention_heads":4)" +
         (extra.empty() ? "" : "," + extra) + "}";
}

TEST(HfConfigTest, ParsesQwen25_05B) {
  ModelArgs a = parse_hf_config_text(kQwen25_05B, "config.json");
  EXPECT_EQ(a.model_type, "qwen2");
  EXPECT_EQ(a.vocab_size, 151936);
  EXPECT_EQ(a.hidden_size, 896);
  EXPECT_EQ(a.intermediate_size, 4864);
  EXPECT_EQ(a.num_hidden_layers, 24);
  EXPECT_EQ(a.num_attention_heads, 14);
  EXPECT_EQ(a.num_key_value_heads, 2);
  EXPECT_EQ(a.head_dim, 64);  // 896 / 14
  EXPECT_DOUBLE_EQ(a.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(a.rope_theta, 1e6);
  EXPECT_EQ(a.rope_scaling.type, "none");
  EXPECT_EQ(a.max_position_embeddings, 32768);
  EXPECT_TRUE(a.tie_word_embeddings);
  EXPECT_TRUE(a.attention_bias);  // Qwen2 always has q/k/v bias
  EXPECT_FALSE(a.qk_norm);
  EXPECT_EQ(a.torch_dtype, "bfloat16");
  EXPECT_EQ(a.bos_token_id, 151643);
  EXPECT_EQ(a.eos_token_id, 151643);
  EXPECT_EQ(a.pad_token_id, -1);
}

TEST(HfConfigTest, ParsesQwen3_06BWithExplicitHeadDim) {
  ModelArgs a = parse_hf_config_text(kQwen3_06B, "config.json");
  EXPECT_EQ(a.model_type, "qwen3");
  EXPECT_EQ(a.hidden_size, 1024);
  EXPECT_EQ(a.num_attention_heads, 16);
  EXPECT_EQ(a.num_key_value_heads, 8);
  EXPECT_EQ(a.head_dim, 128);  // not 1024 / 16
  EXPECT_EQ(a.num_hidden_layers, 28);
  EXPECT_EQ(a.intermediate_size, 3072);
  EXPECT_EQ(a.max_position_embeddings, 40960);
  EXPECT_DOUBLE_EQ(a.rope_theta, 1e6);
  EXPECT_TRUE(a.qk_norm);
  EXPECT_FALSE(a.attention_bias);
  EXPECT_EQ(a.eos_token_id, 151645);
}

TEST(HfConfigTest, ParsesLlama32_1BWithLlama3RopeAndEosList) {
  ModelArgs a = parse_hf_config_text(kLlama32_1B, "config.json");
  EXPECT_EQ(a.model_type, "llama");
  EXPECT_EQ(a.vocab_size, 128256);
  EXPECT_EQ(a.hidden_size, 2048);
  EXPECT_EQ(a.num_hidden_layers, 16);
  EXPECT_EQ(a.num_attention_heads, 32);
  EXPECT_EQ(a.num_key_value_heads, 8);
  EXPECT_EQ(a.head_dim, 64);
  EXPECT_DOUBLE_EQ(a.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(a.rope_theta, 500000.0);
  EXPECT_EQ(a.rope_scaling.type, "llama3");
  EXPECT_DOUBLE_EQ(a.rope_scaling.factor, 32.0);
  EXPECT_DOUBLE_EQ(a.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(a.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(a.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(a.max_position_embeddings, 131072);
  EXPECT_FALSE(a.attention_bias);
  EXPECT_FALSE(a.qk_norm);
  EXPECT_EQ(a.bos_token_id, 128000);
  EXPECT_EQ(a.eos_token_id, 128001);  // first of the list
}

TEST(HfConfigTest, AbsentKeysTakeTheTransformersDefaults) {
  ModelArgs a = parse_hf_config_text(llama_with(""), "config.json");
  EXPECT_EQ(a.num_key_value_heads, 4);  // = num_attention_heads
  EXPECT_EQ(a.head_dim, 4);             // 16 / 4
  EXPECT_DOUBLE_EQ(a.rope_theta, 10000.0);
  EXPECT_DOUBLE_EQ(a.rms_norm_eps, 1e-6);
  EXPECT_EQ(a.max_position_embeddings, 2048);  // LlamaConfig
  EXPECT_FALSE(a.tie_word_embeddings);
  EXPECT_EQ(a.hidden_act, "silu");
  EXPECT_EQ(a.torch_dtype, "float32");
}

TEST(HfConfigTest, LegacyRopeTypeKeyAndLinearScaling) {
  ModelArgs a = parse_hf_config_text(llama_with(R"("rope_scaling":{"type":"linear","factor":2.0})"), "c");
  EXPECT_EQ(a.rope_scaling.type, "linear");
  EXPECT_DOUBLE_EQ(a.rope_scaling.factor, 2.0);
}

TEST(HfConfigTest, RopeParametersObjectOfNewTransformers) {
  ModelArgs a = parse_hf_config_text(llama_with(R"("rope_parameters":{"rope_type":"default","rope_theta":123.0})"), "c");
  EXPECT_EQ(a.rope_scaling.type, "none");
  EXPECT_DOUBLE_EQ(a.rope_theta, 123.0);
}

TEST(HfConfigTest, UnknownModelTypeNamesFileKeyAndValue) {
  EXPECT_THAT(config_error(R"({"model_type":"gpt2","vocab_size":5})"),
              HasSubstr("cfg/config.json: key 'model_type' = \"gpt2\": expected one of qwen2, qwen3, llama, mistral"));
}

TEST(HfConfigTest, UnsupportedRopeTypesAreRejected) {
  EXPECT_THAT(config_error(llama_with(R"("rope_scaling":{"rope_type":"yarn","factor":4.0})")),
              HasSubstr("cfg/config.json: key 'rope_scaling.rope_type' = \"yarn\" is not supported"));
  EXPECT_THAT(config_error(llama_with(R"("rope_scaling":{"type":"dynamic","factor":2.0})")),
              HasSubstr("key 'rope_scaling.type' = \"dynamic\" is not supported"));
}

TEST(HfConfigTest, Llama3RopeWithoutItsFieldsIsRejected) {
  EXPECT_THAT(config_error(llama_with(R"("rope_scaling":{"rope_type":"llama3","factor":8.0})")),
              HasSubstr("key 'rope_scaling.low_freq_factor' = (missing): expected a positive number"));
}

TEST(HfConfigTest, UnsupportedActivationAndBiasAndSlidingWindow) {
  EXPECT_THAT(config_error(llama_with(R"("hidden_act":"gelu")")),
              HasSubstr("cfg/config.json: key 'hidden_act' = \"gelu\" is not supported: only silu"));
  EXPECT_THAT(config_error(llama_with(R"("mlp_bias":true)")), HasSubstr("key 'mlp_bias' = true is not supported"));
  EXPECT_THAT(config_error(llama_with(R"("use_sliding_window":true)")),
              HasSubstr("key 'use_sliding_window' = true is not supported"));
}

TEST(HfConfigTest, WrongTypesAndMissingRequiredKeys) {
  EXPECT_THAT(config_error(R"({"model_type":"qwen2","vocab_size":"many"})"),
              HasSubstr("key 'vocab_size' = \"many\": expected an integer"));
  EXPECT_THAT(config_error(R"({"model_type":"qwen2","vocab_size":10})"),
              HasSubstr("key 'hidden_size' = (missing): expected a positive integer (this key is required)"));
  EXPECT_THAT(config_error(llama_with(R"("num_key_value_heads":3)")),
              HasSubstr("key 'num_key_value_heads' = 3: expected a divisor of num_attention_heads (4)"));
  EXPECT_THAT(config_error(llama_with(R"("tie_word_embeddings":"yes")")),
              HasSubstr("key 'tie_word_embeddings' = \"yes\": expected true or false"));
  EXPECT_THAT(config_error("{oops"), HasSubstr("cfg/config.json: not valid JSON"));
}

TEST(HfConfigTest, ExportedConfigParsesBackToTheSameArgs) {
  for (const char* text : {kQwen25_05B, kQwen3_06B, kLlama32_1B}) {
    ModelArgs a = parse_hf_config_text(text, "in");
    ModelArgs b = parse_hf_config_text(hf_config_json(a), "out");
    EXPECT_EQ(b.model_type, a.model_type);
    EXPECT_EQ(b.head_dim, a.head_dim);
    EXPECT_EQ(b.num_key_value_heads, a.num_key_value_heads);
    EXPECT_EQ(b.attention_bias, a.attention_bias);
    EXPECT_EQ(b.qk_norm, a.qk_norm);
    EXPECT_EQ(b.tie_word_embeddings, a.tie_word_embeddings);
    EXPECT_DOUBLE_EQ(b.rope_theta, a.rope_theta);
    EXPECT_EQ(b.rope_scaling.type, a.rope_scaling.type);
    EXPECT_DOUBLE_EQ(b.rope_scaling.factor, a.rope_scaling.factor);
    EXPECT_EQ(b.rope_scaling.original_max_position_embeddings, a.rope_scaling.original_max_position_embeddings);
    EXPECT_EQ(b.max_position_embeddings, a.max_position_embeddings);
    EXPECT_EQ(b.eos_token_id, a.eos_token_id);
  }
}

TEST(HfConfigTest, ExportNamesTheTransformersClass) {
  auto j = nlohmann::json::parse(hf_config_json(parse_hf_config_text(kQwen3_06B, "in"), "float32"));
  EXPECT_EQ(j["architectures"], nlohmann::json::array({"Qwen3ForCausalLM"}));
  EXPECT_EQ(j["torch_dtype"], "float32");
  EXPECT_EQ(j["transformers_version"], "4.51.0");
  EXPECT_EQ(j["use_sliding_window"], false);
  auto g = nlohmann::json::parse(hf_generation_config_json(parse_hf_config_text(kQwen3_06B, "in")));
  EXPECT_EQ(g["eos_token_id"], 151645);
  EXPECT_EQ(g["bos_token_id"], 151643);
}

TEST(HfConfigTest, ExportRefusesArgsTheHfClassCannotExpress) {
  ModelArgs a = parse_hf_config_text(kQwen25_05B, "in");
  a.attention_bias = false;
  try {
    hf_config_json(a);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot export model_type qwen2 with attention_bias=false"));
  }
}

TEST(HfConfigTest, YamlModelDescriptionUsesTheSameKeys) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/hf_config_test_model.yaml";
  std::ofstream(path) << "model_type: qwen2\nvocab_size: 100\nhidden_size: 32\nintermediate_size: 64\n"
                         "num_hidden_layers: 2\nnum_attention_heads: 4\nnum_key_value_heads: 2\n"
                         "rope_theta: 1.0e6\ntie_word_embeddings: true\ntorch_dtype: \"float32\"\n";
  ModelArgs a = parse_model_description(path);
  std::filesystem::remove(path);
  EXPECT_EQ(a.vocab_size, 100);
  EXPECT_EQ(a.num_key_value_heads, 2);
  EXPECT_EQ(a.head_dim, 8);
  EXPECT_DOUBLE_EQ(a.rope_theta, 1e6);
  EXPECT_TRUE(a.tie_word_embeddings);
  EXPECT_TRUE(a.attention_bias);
}

}  // namespace
}  // namespace agentrl::model
