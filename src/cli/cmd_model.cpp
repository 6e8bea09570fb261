// `agentrl model init|info|score`: create, inspect and score HF-format model
// directories. Thin: the logic is in model/hf_checkpoint.* and model/logprobs.*.
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/core/jsonl.h"
#include "agentrl/model/hf_checkpoint.h"
#include "agentrl/model/hf_config.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/model/transformer.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::cli {
namespace {

namespace fs = std::filesystem;

void setup_init(CLI::App* model) {
  struct Opts {
    std::string config, out, dtype = "float32", tokenizer;
    uint64_t seed = 0;
    double std = 0.02;
    bool overwrite = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = model->add_subcommand("init", "Write an HF model directory with randomly initialised weights");
  cmd->add_option("--config", o->config, "model description: config.json, or YAML with the same keys")->required();
  cmd->add_option("--out", o->out, "output model directory (must not exist or be empty)")->required();
  cmd->add_option("--seed", o->seed, "seed of the initialisation");
  cmd->add_option("--init-std", o->std, "std of the normal init of weight matrices (HF initializer_range)");
  cmd->add_option("--dtype", o->dtype, "stored dtype")->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
  cmd->add_option("--tokenizer", o->tokenizer, "directory whose tokenizer files are copied into --out");
  cmd->add_flag("--overwrite", o->overwrite, "replace a non-empty --out");
  cmd->callback([o] {
    model::ModelArgs args = model::parse_model_description(o->config);
    model::SaveOptions save;
    save.dtype = o->dtype;
    save.tokenizer_dir = o->tokenizer;
    save.overwrite = o->overwrite;
    model::write_random_init(args, o->seed, o->std, o->out, save);
    std::cout << "wrote " << o->out << " (" << args.model_type << ", seed " << o->seed << ")\n";
  });
}

void setup_info(CLI::App* model) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = model->add_subcommand("info", "Print a model directory's config, parameter count and tensor shapes");
  cmd->add_option("--model", *dir, "HF model directory")->required();
  cmd->callback([dir] { std::cout << model::describe_checkpoint(*dir); });
}

std::vector<int64_t> parse_ids(const std::string& text, int64_t vocab) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty())
    throw UsageError("--ids: expected a non-empty JSON array of token ids, got '" + text + "'");
  std::vector<int64_t> ids;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab)
      throw UsageError("--ids: " + v.dump() + " is not a token id in [0, " + std::to_string(vocab) + ")");
    ids.push_back(v.get<int64_t>());
  }
  return ids;
}

bool has_tokenizer(const std::string& dir) {
  return fs::exists(fs::path(dir) / "tokenizer.json") || fs::exists(fs::path(dir) / "tokenizer.model");
}

void setup_score(CLI::App* model) {
  struct Opts {
    std::string dir, text, ids, device = "cpu", attention = "auto";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = model->add_subcommand(
      "score", "Print one JSON line per position: id, token, log-prob under the model and full-vocabulary entropy");
  cmd->add_option("--model", o->dir, "HF model directory")->required();
  auto* text = cmd->add_option("--text", o->text, "text to encode with the model's tokenizer");
  auto* ids = cmd->add_option("--ids", o->ids, "token ids as a JSON array, e.g. [1,2,3]");
  text->excludes(ids);
  cmd->add_option("--device", o->device, "cpu | cuda | auto");
  cmd->add_option("--attention", o->attention, "attention kernel: auto | eager | sdpa (as model.attention)");
  cmd->callback([o, text, ids] {
    if (text->count() == 0 && ids->count() == 0) throw UsageError("model score: give --text or --ids");
    const auto kernel = model::resolve_attention_kernel(o->attention);
    model::Pretrained p = model::load_pretrained(o->dir, model::resolve_device(o->device), torch::kFloat32);
    p.model->set_attention_kernel(kernel);
    std::shared_ptr<const text::Tokenizer> tok;
    if (ids->count() == 0 || has_tokenizer(o->dir)) tok = text::load_tokenizer(o->dir);
    std::vector<int64_t> seq;
    if (ids->count() > 0) {
      seq = parse_ids(o->ids, p.args.vocab_size);
    } else {
      for (auto id : tok->encode(o->text)) seq.push_back(id);
      if (seq.empty()) throw UsageError("model score: --text encodes to no tokens");
    }
    const int64_t t = static_cast<int64_t>(seq.size());
    torch::Device dev = p.model->device();
    torch::Tensor input = torch::tensor(seq, torch::kInt64).unsqueeze(0).to(dev);
    torch::Tensor mask = torch::ones({1, t}, torch::TensorOptions().dtype(torch::kBool).device(dev));
    torch::Tensor pos = torch::arange(t, torch::TensorOptions().dtype(torch::kInt64).device(dev)).unsqueeze(0);
    torch::NoGradGuard no_grad;
    model::TokenStats s = model::logprobs_and_entropy(p.model, input, mask, pos);
    torch::Tensor lp = s.logprobs[0].to(torch::kCPU), ent = s.entropy[0].to(torch::kCPU);
    for (int64_t i = 0; i < t; ++i) {
      nlohmann::json row = {{"pos", i}, {"id", seq[i]}};
      row["token"] = tok ? nlohmann::json(tok->decode({static_cast<text::TokenId>(seq[i])})) : nlohmann::json();
      // Position 0 has no prediction (nothing precedes it).
      row["logprob"] = i == 0 ? nlohmann::json() : nlohmann::json(lp[i].item<double>());
      row["entropy"] = i == 0 ? nlohmann::json() : nlohmann::json(ent[i].item<double>());
      std::cout << json_text(row) << "\n";
    }
  });
}

CommandRegistrar reg(30, [](CLI::App& root) {
  CLI::App* model = group(root, "model", "Create, inspect and score Hugging Face model directories");
  setup_init(model);
  setup_info(model);
  setup_score(model);
});

}  // namespace
}  // namespace agentrl::cli
