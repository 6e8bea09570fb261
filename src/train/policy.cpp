#include "agentrl/train/policy.h"

#include <filesystem>
#include <fstream>

#include "agentrl/core/error.h"
#include "agentrl/core/logging.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/thread_pool.h"
#include "agentrl/model/hf_checkpoint.h"
#include "agentrl/model/lora_peft.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/text/sentencepiece_tokenizer.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

torch::Device policy_device(const ExperimentConfig& cfg) { return model::resolve_device(cfg.model.device); }

std::shared_ptr<const text::ChatTemplate> make_chat(const ExperimentConfig& cfg,
                                                    std::shared_ptr<const text::Tokenizer> tok,
                                                    const std::string& dir) {
  return text::ChatTemplate::create(cfg.tokenizer.chat_template, std::move(tok), dir);
}

}  // namespace

std::string collect_env_text(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                             const rollout::PromptConfig& prompt, uint64_t seed) {
  std::string corpus;
  for (const std::string* t : {&prompt.system, &prompt.first_user, &prompt.next_user, &prompt.window_user})
    corpus += *t + "\n";
  // Added after the others, and only when set, so that the corpus (and the
  // tokenizer) of configs without it stays what it was.
  if (!prompt.window_first_user.empty()) corpus += prompt.window_first_user + "\n";
  auto tasks = suite.tasks().ordered(split, seed);
  const auto policy = rollout::expert_policy(prompt);
  auto episode_text = [&](size_t i) {
    std::string text;
    auto env = suite.make_env();
    text += env->reset(tasks[i], mix_seed(seed, i)) + "\n";
    text += env->task_description() + "\n";
    for (int step = 0; step < env->max_steps(); ++step) {
      std::string admissible;
      for (const auto& a : env->admissible_actions()) admissible += a + ", ";
      text += admissible + "\n";
      auto response = policy(*env);
      if (!response) break;
      text += *response + "\n";
      auto action = env->extract_action(*response);
      auto r = env->step(action ? *action : *response);
      text += r.observation + "\n";
      if (r.done) break;
    }
    return text;
  };
  // Episodes in parallel (code-tool episodes wait on the sandbox), joined in order.
  int64_t left = std::max<int64_t>(episodes, 0);
  parallel_in_order(tasks.size(), [&] { return static_cast<size_t>(left); }, episode_text, [&](std::string text) {
    corpus += text;
    --left;
  });
  return corpus;
}

Policy load_policy_dir(const ExperimentConfig& cfg, const std::string& model_dir) {
  Policy p;
  p.device = policy_device(cfg);
  p.tokenizer_dir = cfg.tokenizer.path.empty() ? model_dir : cfg.tokenizer.path;
  p.tokenizer = text::load_tokenizer(p.tokenizer_dir);
  p.chat = make_chat(cfg, p.tokenizer, p.tokenizer_dir);
  auto pre = model::load_pretrained(model_dir, p.device, model::resolve_dtype(cfg.model.dtype));
  p.model = pre.model;
  p.model->set_gradient_checkpointing(cfg.model.gradient_checkpointing);
  p.model->set_attention_kernel(model::resolve_attention_kernel(cfg.model.attention));
  return p;
}

model::LoraOptions lora_options(const ExperimentConfig& cfg) {
  const auto& l = cfg.model.lora;
  model::LoraOptions o;
  o.rank = l.rank;
  o.alpha = l.alpha;
  o.dropout = l.dropout;
  o.use_rslora = l.use_rslora;
  o.target_modules = l.target_modules;
  o.init = l.init == "gaussian" ? model::LoraInit::kGaussian : model::LoraInit::kDefault;
  o.seed = mix_seed(static_cast<uint64_t>(cfg.runtime.seed), 0x10A);
  o.dtype = torch::kFloat32;  // fp32 adapters on any base dtype: no master copies needed
  return o;
}

namespace {
void log_lora(Policy& p, int64_t layers, const std::string& from) {
  int64_t trainable = 0, total = 0;
  for (const auto& t : p.model->parameters()) {
    total += t.numel();
    if (t.requires_grad()) trainable += t.numel();
  }
  log().info("LoRA: {} adapted layers{}, {} trainable of {} parameters ({:.2f}%)", layers, from, trainable, total,
             100.0 * static_cast<double>(trainable) / static_cast<double>(std::max<int64_t>(1, total)));
}
}  // namespace

void attach_policy_lora(Policy& policy, const ExperimentConfig& cfg) {
  const auto& l = cfg.model.lora;
  if (!l.enabled) return;
  const auto o = lora_options(cfg);
  if (!l.path.empty()) {
    const auto adapter = model::read_peft_config(l.path);
    model::check_peft_matches(o, adapter, l.path, "model.lora");
    // The base is named loosely (a hub id, a local path): shapes are checked
    // when the weights load; a different name is worth a warning only.
    const auto name = [](const std::string& p) {
      auto f = fs::path(p).lexically_normal();
      return (f.filename().empty() ? f.parent_path().filename() : f.filename()).string();
    };
    if (!adapter.base_model_name_or_path.empty() && name(adapter.base_model_name_or_path) != name(cfg.model.path))
      log().warn("model.lora.path {} was trained on '{}', this run's model.path is '{}'", l.path,
                 adapter.base_model_name_or_path, cfg.model.path);
  }
  const int64_t layers = model::attach_lora(*policy.model, o);
  if (!l.path.empty()) model::load_peft_adapter(*policy.model, l.path);
  log_lora(policy, layers, l.path.empty() ? std::string() : " from " + l.path);
}

void attach_adapter_dir(Policy& policy, const std::string& adapter_dir) {
  auto adapter = model::read_peft_config(adapter_dir);
  const int64_t layers = model::attach_lora(*policy.model, adapter.options);
  model::load_peft_adapter(*policy.model, adapter_dir);
  log_lora(policy, layers, " from " + adapter_dir);
}

void save_policy_adapter(Policy& policy, const ExperimentConfig& cfg, const std::string& dir) {
  model::PeftAdapterConfig c;
  c.options = lora_options(cfg);
  c.base_model_name_or_path = cfg.model.path;
  model::save_peft_adapter(*policy.model, c, dir);
}

Policy load_policy_from(const ExperimentConfig& cfg, const std::string& path) {
  const fs::path p(path);
  const bool checkpoint_adapter = fs::exists(p / "adapter" / "adapter_config.json");
  const bool adapter_dir = fs::exists(p / "adapter_config.json");
  if (!checkpoint_adapter && !adapter_dir)
    return load_policy_dir(cfg, fs::exists(p / "model" / "config.json") ? (p / "model").string() : path);
  std::string base = checkpoint_adapter && fs::exists(p / "model" / "config.json") ? (p / "model").string() : "";
  if (base.empty()) base = cfg.model.path;
  if (base.empty())
    throw ConfigError("the LoRA adapter at " + path + " needs its base model: set model.path (the checkpoint holds "
                      "no model/ directory)");
  Policy policy = load_policy_dir(cfg, base);
  attach_adapter_dir(policy, checkpoint_adapter ? (p / "adapter").string() : path);
  return policy;
}

namespace {
// tokenizer.env_symbols: the env's identifiers become user-defined pieces,
// which SentencePiece counts inside vocab_size.
void add_env_symbols(const ExperimentConfig& cfg, const envs::EnvSuite& suite,
                     text::SentencePieceTrainOptions& options) {
  const auto ids = suite.identifiers();
  if (ids.empty())
    throw ConfigError("tokenizer.env_symbols: true, but env '" + suite.name() +
                      "' has no identifiers to keep whole (only webshop has: its ASINs); set it to false");
  for (const auto& id : ids) options.user_defined_symbols.push_back(id);
  const auto needed = static_cast<int64_t>(options.user_defined_symbols.size());
  if (cfg.tokenizer.vocab_size <= needed)
    throw ConfigError("tokenizer.vocab_size: " + std::to_string(cfg.tokenizer.vocab_size) +
                      " leaves no room for learnt pieces: tokenizer.env_symbols adds " + std::to_string(ids.size()) +
                      " identifiers of env '" + suite.name() + "' (" + std::to_string(needed) +
                      " symbols in all); set vocab_size above " + std::to_string(needed));
}
}  // namespace

Policy build_policy_tokenizer(const ExperimentConfig& cfg, const envs::EnvSuite& suite, const std::string& run_dir) {
  if (!cfg.model.path.empty() && cfg.tokenizer.train)
    throw ConfigError("tokenizer.train: true needs a from-scratch model (model.path must be empty, got '" +
                      cfg.model.path + "')");
  Policy p;
  p.device = policy_device(cfg);
  if (!cfg.model.path.empty()) {
    p.tokenizer_dir = cfg.tokenizer.path.empty() ? cfg.model.path : cfg.tokenizer.path;
  } else if (cfg.tokenizer.train) {
    p.tokenizer_dir = (fs::path(run_dir) / "tokenizer").string();
    const std::string split = cfg.env.train_split.empty() ? suite.train_split() : cfg.env.train_split;
    std::string corpus = collect_env_text(suite, split, cfg.tokenizer.corpus_episodes, cfg.prompt,
                                          static_cast<uint64_t>(cfg.runtime.seed));
    fs::create_directories(p.tokenizer_dir);
    const std::string corpus_path = (fs::path(run_dir) / "tokenizer_corpus.txt").string();
    {
      std::ofstream f(corpus_path, std::ios::binary);
      f << corpus;
      if (!f) throw IoError("cannot write " + corpus_path);
    }
    text::SentencePieceTrainOptions options;
    options.hard_vocab_limit = !cfg.tokenizer.vocab_size_is_limit;
    options.model_type = cfg.tokenizer.model_type;
    options.split_digits = cfg.tokenizer.split_digits;
    for (const auto& sym : cfg.tokenizer.symbols) options.user_defined_symbols.push_back(sym);
    if (cfg.tokenizer.env_symbols) add_env_symbols(cfg, suite, options);
    text::train_sentencepiece(corpus_path, static_cast<int>(cfg.tokenizer.vocab_size), p.tokenizer_dir, options);
    log().info("trained a SentencePiece tokenizer ({} requested{}) on {} bytes of env text -> {}",
               cfg.tokenizer.vocab_size, cfg.tokenizer.vocab_size_is_limit ? " as a limit" : "", corpus.size(),
               p.tokenizer_dir);
  } else if (!cfg.tokenizer.path.empty()) {
    p.tokenizer_dir = cfg.tokenizer.path;
  } else {
    throw ConfigError(
        "model.path is empty (random init) but no tokenizer is configured: set tokenizer.path or tokenizer.train: true");
  }
  p.tokenizer = text::load_tokenizer(p.tokenizer_dir);
  if (cfg.tokenizer.train) log().info("tokenizer: {} tokens", p.tokenizer->vocab_size());
  p.chat = make_chat(cfg, p.tokenizer, p.tokenizer_dir);
  return p;
}

Policy build_initial_policy(const ExperimentConfig& cfg, const envs::EnvSuite& suite, const std::string& run_dir) {
  if (!cfg.model.path.empty()) {
    if (cfg.tokenizer.train)
      throw ConfigError("tokenizer.train: true needs a from-scratch model (model.path must be empty, got '" +
                        cfg.model.path + "')");
    return load_policy_dir(cfg, cfg.model.path);
  }
  Policy p = build_policy_tokenizer(cfg, suite, run_dir);
  model::ModelArgs args = cfg.model.init.to_args(p.tokenizer->vocab_size());
  if (auto eos = p.tokenizer->eos_id()) args.eos_token_id = *eos;
  if (auto bos = p.tokenizer->bos_id()) args.bos_token_id = *bos;
  if (auto pad = p.tokenizer->pad_id()) args.pad_token_id = *pad;
  p.model = model::TransformerLM(args);
  p.model->init_weights(static_cast<uint64_t>(cfg.model.init.seed), cfg.model.init.initializer_range);
  p.model->to(p.device, model::resolve_dtype(cfg.model.dtype));
  p.model->set_gradient_checkpointing(cfg.model.gradient_checkpointing);
  p.model->set_attention_kernel(model::resolve_attention_kernel(cfg.model.attention));
  return p;
}

void save_policy(Policy& policy, const std::string& dir, const MasterWeights* masters) {
  model::SaveOptions opts;
  opts.tokenizer_dir = policy.tokenizer_dir;
  // Stored in the training dtype, so that a reload (resume) is bit-exact.
  const auto dt = policy.model->dtype();
  opts.dtype = dt == torch::kBFloat16 ? "bfloat16" : dt == torch::kFloat16 ? "float16" : "float32";
  if (masters != nullptr && masters->enabled()) {
    opts.dtype = "float32";
    opts.replace = masters->named();
  }
  model::save_pretrained(policy.model, dir, opts);
}

}  // namespace agentrl::train
