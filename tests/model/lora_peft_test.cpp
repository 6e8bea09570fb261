// Specification of PEFT-format LoRA adapters (model/lora_peft.h): agentrl
// writes PEFT's exact key names and config fields; an adapter written by hand
// in PEFT's documented format loads and means what PEFT means (y = W x +
// alpha/r * B A x); export -> import round trips; what agentrl cannot
// represent, and adapters that do not fit the model, are refused with the
// key named. Also: HF model directories never hold adapter tensors, and
// folding adapters into the base keeps the model's output.
#include "agentrl/model/lora_peft.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/model/hf_checkpoint.h"
#include "agentrl/model/safetensors.h"
#include "tiny_model.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace agentrl::model {
namespace {

using namespace test_util;

std::string temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("agentrl_peft_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d.string();
}

torch::Tensor logits(TransformerLM& m) {
  torch::NoGradGuard g;
  return m->forward(random_ids(2, 7, 97, 5), arange_positions(2, 7), full_mask(2, 7));
}

// Every B random (after attach B = 0 and an adapter is a no-op).
void randomise_adapters(TransformerLM& m, uint64_t seed) {
  torch::NoGradGuard g;
  torch::manual_seed(seed);
  for (auto& [name, t] : named_lora_parameters(*m)) t.copy_(0.2 * torch::randn(t.sizes()));
}

TEST(LoraPeft, SavedAdapterHasPeftsKeyNamesAndConfigFields) {
  auto m = tiny_model(tiny_args("qwen2"));
  LoraOptions o;
  o.rank = 4;
  o.alpha = 16;
  o.dropout = 0.05;
  o.target_modules = {"q_proj", "v_proj", "down_proj"};
  attach_lora(*m, o);
  const auto dir = temp_dir("save");
  save_peft_adapter(*m, PeftAdapterConfig{o, "Qwen/Qwen2.5-0.5B"}, dir);

  const json c = json::parse(read_file(dir + "/adapter_config.json"));
  EXPECT_EQ(c.at("peft_type"), "LORA");
  EXPECT_EQ(c.at("task_type"), "CAUSAL_LM");
  EXPECT_EQ(c.at("base_model_name_or_path"), "Qwen/Qwen2.5-0.5B");
  EXPECT_EQ(c.at("r"), 4);
  EXPECT_EQ(c.at("lora_alpha"), 16.0);
  EXPECT_EQ(c.at("lora_dropout"), 0.05);
  EXPECT_EQ(c.at("target_modules"), json({"q_proj", "v_proj", "down_proj"}));
  EXPECT_EQ(c.at("bias"), "none");
  EXPECT_EQ(c.at("use_rslora"), false);
  EXPECT_EQ(c.at("use_dora"), false);
  EXPECT_EQ(c.at("fan_in_fan_out"), false);
  EXPECT_EQ(c.at("init_lora_weights"), true);
  EXPECT_EQ(c.at("inference_mode"), true);
  EXPECT_TRUE(c.at("modules_to_save").is_null());
  EXPECT_EQ(c.at("rank_pattern"), json::object());

  auto st = SafetensorsSet::open(dir + "/adapter_model.safetensors");
  auto names = st.names();
  EXPECT_EQ(names.size(), 2u * 3u * 2u);  // 2 layers x 3 targets x (A, B)
  EXPECT_TRUE(st.contains("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"));
  EXPECT_TRUE(st.contains("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"));
  EXPECT_EQ(st.info("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight").shape,
            std::vector<int64_t>({4, 32}));  // [r, in]
  EXPECT_EQ(st.info("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight").shape,
            std::vector<int64_t>({32, 4}));  // [out, r]
  EXPECT_EQ(st.info("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight").dtype, StDtype::F32);
  for (const auto& n : names) EXPECT_THAT(n, ::testing::StartsWith("base_model.model.model.layers."));
  fs::remove_all(dir);
}

TEST(LoraPeft, AHandWrittenPeftAdapterLoadsWithPeftsMeaning) {
  // An adapter in PEFT's documented format, written without agentrl's writer:
  // q_proj and v_proj, r = 2, lora_alpha = 4 (scaling 2).
  const auto dir = temp_dir("handwritten");
  fs::create_directories(dir);
  {
    std::ofstream f(dir + "/adapter_config.json");
    f << R"({"alpha_pattern": {}, "auto_mapping": null, "base_model_name_or_path": "tiny", "bias": "none",
             "fan_in_fan_out": false, "inference_mode": true, "init_lora_weights": true,
             "layers_pattern": null, "layers_to_transform": null, "loftq_config": {}, "lora_alpha": 4,
             "lora_dropout": 0.1, "megatron_config": null, "megatron_core": "megatron.core",
             "modules_to_save": null, "peft_type": "LORA", "r": 2, "rank_pattern": {}, "revision": null,
             "target_modules": ["v_proj", "q_proj"], "task_type": "CAUSAL_LM", "use_dora": false,
             "use_rslora": false})";
  }
  torch::manual_seed(3);
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> ab;  // module -> (A, B)
  for (int layer = 0; layer < 2; ++layer)
    for (const char* proj : {"q_proj", "v_proj"}) {
      const std::string module = "model.layers." + std::to_string(layer) + ".self_attn." + proj;
      const int64_t out = std::string(proj) == "q_proj" ? 32 : 16;  // 2 KV heads x 8
      auto a = torch::randn({2, 32}), b = torch::randn({out, 2});
      ab[module] = {a, b};
      tensors.emplace_back("base_model.model." + module + ".lora_A.weight", a);
      tensors.emplace_back("base_model.model." + module + ".lora_B.weight", b);
    }
  save_safetensors(dir + "/adapter_model.safetensors", tensors, {{"format", "pt"}});

  const auto cfg = read_peft_config(dir);
  EXPECT_EQ(cfg.options.rank, 2);
  EXPECT_EQ(cfg.options.alpha, 4.0);
  EXPECT_EQ(cfg.options.dropout, 0.1);
  EXPECT_EQ(cfg.base_model_name_or_path, "tiny");
  auto adapted = tiny_model(tiny_args("qwen2"));
  EXPECT_EQ(attach_lora(*adapted, cfg.options), 4);
  load_peft_adapter(*adapted, dir);
  adapted->eval();  // dropout off

  // The same model with W += (alpha / r) B A written into the weights by hand.
  auto expected = tiny_model(tiny_args("qwen2"));
  {
    torch::NoGradGuard g;
    auto params = expected->named_parameters();
    for (auto& [module, p] : ab) params[module + ".weight"].add_(2.0 * torch::matmul(p.second, p.first));
  }
  EXPECT_LT(max_abs_diff(logits(adapted), logits(expected)), 1e-4);
  auto plain = tiny_model(tiny_args("qwen2"));
  EXPECT_GT(max_abs_diff(logits(adapted), logits(plain)), 1e-2);  // and the adapter does change the model
  fs::remove_all(dir);
}

TEST(LoraPeft, ExportThenImportGivesTheSameAdaptersAndLogits) {
  auto a = tiny_model(tiny_args("llama"));
  LoraOptions o;
  o.rank = 3;
  o.alpha = 5;
  o.use_rslora = true;
  o.init = LoraInit::kGaussian;
  attach_lora(*a, o);
  randomise_adapters(a, 11);
  const auto dir = temp_dir("roundtrip");
  save_peft_adapter(*a, PeftAdapterConfig{o, ""}, dir);

  auto back = read_peft_config(dir);
  EXPECT_TRUE(back.options.use_rslora);
  EXPECT_EQ(back.options.init, LoraInit::kGaussian);
  EXPECT_EQ(back.options.target_modules, o.target_modules);
  auto b = tiny_model(tiny_args("llama"));
  attach_lora(*b, back.options);
  load_peft_adapter(*b, dir);
  auto na = named_lora_parameters(*a), nb = named_lora_parameters(*b);
  ASSERT_EQ(na.size(), nb.size());
  for (size_t i = 0; i < na.size(); ++i) {
    EXPECT_EQ(na[i].first, nb[i].first);
    EXPECT_TRUE(torch::equal(na[i].second, nb[i].second)) << na[i].first;
  }
  EXPECT_EQ(max_abs_diff(logits(a), logits(b)), 0.0);
  fs::remove_all(dir);
}

void write_config(const std::string& dir, const std::string& body) {
  fs::create_directories(dir);
  std::ofstream(dir + "/adapter_config.json") << body;
}

TEST(LoraPeft, WhatAgentrlCannotRepresentIsRefusedNamingTheKey) {
  const auto dir = temp_dir("refuse");
  const std::string base = R"("peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj"])";
  auto error_of = [&](const std::string& extra) {
    write_config(dir, "{" + base + extra + "}");
    try {
      read_peft_config(dir);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_THAT(error_of(R"(, "use_dora": true)"), ::testing::HasSubstr("use_dora = true is not supported"));
  EXPECT_THAT(error_of(R"(, "rank_pattern": {"q_proj": 8})"), ::testing::HasSubstr("rank_pattern"));
  EXPECT_THAT(error_of(R"(, "bias": "all")"), ::testing::HasSubstr("bias = \"all\" is not supported"));
  EXPECT_THAT(error_of(R"(, "modules_to_save": ["lm_head"])"), ::testing::HasSubstr("modules_to_save"));
  EXPECT_THAT(error_of(R"(, "layers_to_transform": [0])"), ::testing::HasSubstr("layers_to_transform"));
  EXPECT_EQ(error_of(R"(, "bias": "none", "use_dora": false, "modules_to_save": null)"), "(accepted)");
  write_config(dir, R"({"peft_type": "LORA", "r": 4, "target_modules": ".*proj"})");
  EXPECT_THROW(read_peft_config(dir), ConfigError);
  write_config(dir, R"({"peft_type": "IA3", "r": 4, "target_modules": ["q_proj"]})");
  EXPECT_THAT([&] {
    try {
      read_peft_config(dir);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  }(), ::testing::HasSubstr("peft_type = \"IA3\"; expected \"LORA\""));
  write_config(dir, R"({"peft_type": "LORA", "r": 4, "target_modules": "all-linear"})");
  EXPECT_EQ(read_peft_config(dir).options.target_modules.size(), 7u);
  EXPECT_EQ(read_peft_config(dir).options.alpha, 8.0);  // absent: PEFT's default lora_alpha
  EXPECT_THROW(read_peft_config(temp_dir("absent")), ConfigError);
  fs::remove_all(dir);
}

TEST(LoraPeft, AnAdapterThatDoesNotFitTheModelIsRefusedListingTheTensors) {
  auto small = tiny_model(tiny_args("qwen2"));
  LoraOptions o;
  o.rank = 4;
  o.target_modules = {"q_proj"};
  attach_lora(*small, o);
  const auto dir = temp_dir("mismatch");
  save_peft_adapter(*small, PeftAdapterConfig{o, ""}, dir);
  // Another base: wider model (an adapter of a different base model).
  auto args = tiny_args("qwen2");
  args.hidden_size = 48;
  auto wide = tiny_model(args);
  attach_lora(*wide, o);
  try {
    load_peft_adapter(*wide, dir);
    FAIL() << "adapter of another base accepted";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("0 missing, 0 unexpected, 4 wrongly shaped"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("wrong shape: base_model.model.model.layers.0.self_attn.q_proj.lora_A."
                                               "weight (adapter [4, 32], model [4, 48])"));
  }
  // Same base, other targets: missing and unexpected tensors.
  auto other = tiny_model(tiny_args("qwen2"));
  LoraOptions ov = o;
  ov.target_modules = {"v_proj"};
  attach_lora(*other, ov);
  EXPECT_THROW(load_peft_adapter(*other, dir), FormatError);
  // The trainer's check names the key and both values before anything loads.
  LoraOptions configured = o;
  configured.rank = 8;
  try {
    check_peft_matches(configured, read_peft_config(dir), dir, "model.lora");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("model.lora.rank: 8, but the adapter at " + dir + " has 4"));
  }
  configured = o;
  configured.target_modules = {"q_proj", "k_proj"};
  EXPECT_THROW(check_peft_matches(configured, read_peft_config(dir), dir, "model.lora"), ConfigError);
  EXPECT_NO_THROW(check_peft_matches(o, read_peft_config(dir), dir, "model.lora"));
  fs::remove_all(dir);
}

TEST(LoraPeft, ModelDirectoriesHoldTheBaseOnlyAndFoldingKeepsTheOutput) {
  auto m = tiny_model(tiny_args("qwen3"));
  const auto base_logits = logits(m);
  attach_lora(*m, LoraOptions{});
  randomise_adapters(m, 4);
  const auto adapted = logits(m);
  const auto dir = temp_dir("base_only");
  save_pretrained(m, dir);
  auto st = SafetensorsSet::open(dir);
  for (const auto& n : st.names()) EXPECT_THAT(n, ::testing::Not(::testing::HasSubstr("lora_"))) << n;
  // The saved directory is the base; it loads into a model with adapters attached.
  auto back = load_pretrained(dir).model;
  EXPECT_EQ(max_abs_diff(logits(back), base_logits), 0.0);
  attach_lora(*back, LoraOptions{});
  EXPECT_NO_THROW(load_state_dict(*back, st));

  fold_lora_into_base(*m, 99);
  EXPECT_LT(max_abs_diff(logits(m), adapted), 1e-5);
  for (auto& [name, t] : named_lora_parameters(*m)) {
    if (name.back() == 'B') {
      EXPECT_EQ(t.abs().max().item<double>(), 0.0) << name;
    }
  }
  {
    LoraOffScope off(*m);  // the base is now the adapted model
    EXPECT_LT(max_abs_diff(logits(m), adapted), 1e-5);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace agentrl::model
