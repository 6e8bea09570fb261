// `agentrl train | sft | eval | export | config show | rollouts show | env demos`.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "agentrl/algo/trajectory_io.h"
#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/jsonl.h"
#include "agentrl/core/logging.h"
#include "agentrl/envs/registry.h"
#include "agentrl/rollout/demos.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/rollout/trajectory_io.h"
#include "agentrl/train/checkpoint.h"
#include "agentrl/train/evaluator.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/policy.h"
#include "agentrl/train/run_setup.h"
#include "agentrl/train/sft.h"
#include "agentrl/train/trainer.h"

namespace fs = std::filesystem;

namespace agentrl::cli {
namespace {

struct ConfigArgs {
  std::string file;
  std::vector<std::string> overrides;
};

void add_config_args(CLI::App* cmd, ConfigArgs& a) {
  cmd->add_option("config", a.file, "YAML config file")->required();
  cmd->add_option("overrides", a.overrides, "key=value overrides (e.g. trainer.iterations=5)");
}

train::ExperimentConfig load(const ConfigArgs& a) { return train::load_experiment_config(a.file, a.overrides); }

CommandRegistrar train_cmd(10, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("train", "Train a policy with RL (tokenizer/init/SFT stages as configured)");
  auto a = std::make_shared<ConfigArgs>();
  auto resume = std::make_shared<std::string>();
  auto stop_after = std::make_shared<int64_t>(-1);
  add_config_args(cmd, *a);
  cmd->add_option("--resume", *resume, "resume from 'auto' (newest complete checkpoint of the run) or a checkpoint path");
  cmd->add_option("--stop-after", *stop_after, "stop (with a checkpoint) after N iterations of this process")
      ->group("");
  cmd->callback([a, resume, stop_after] {
    auto cfg = load(*a);
    train::install_stop_signal_handlers();
    train::TrainOptions opt;
    opt.resume = *resume;
    opt.stop_after_iterations = *stop_after;
    train::Trainer trainer(cfg, opt);
    auto s = trainer.run();
    std::cout << "run directory: " << s.run_dir << "\n"
              << "iterations: " << s.iterations_done
              << (!s.interrupted                ? ""
                  : s.last_checkpoint.empty()   ? " (interrupted during SFT, no checkpoint: the next run starts over)"
                                                : " (interrupted, checkpoint written)")
              << "\n"
              << "last checkpoint: " << s.last_checkpoint << "\n";
    if (s.final_eval_success >= 0) std::cout << "final eval success rate: " << s.final_eval_success << "\n";
  });
});

CommandRegistrar sft_cmd(11, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("sft", "Supervised fine-tuning on chat JSONL or env expert demos (no RL)");
  auto a = std::make_shared<ConfigArgs>();
  add_config_args(cmd, *a);
  cmd->callback([a] {
    auto cfg = load(*a);
    cfg.sft.enabled = true;
    cfg.trainer.iterations = 0;  // SFT stage only; the checkpoint is the RL starting point
    train::Trainer trainer(cfg, {});
    auto s = trainer.run();
    std::cout << "SFT checkpoint: " << s.last_checkpoint << "\n";
  });
});

CommandRegistrar eval_cmd(12, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("eval", "Evaluate a model on an env split; writes JSON metrics and trajectories");
  auto a = std::make_shared<ConfigArgs>();
  auto model_dir = std::make_shared<std::string>();
  auto split = std::make_shared<std::string>();
  auto episodes = std::make_shared<int64_t>(0);
  auto out = std::make_shared<std::string>();
  auto policy_name = std::make_shared<std::string>("model");
  auto sampled = std::make_shared<int64_t>(0);
  auto samples = std::make_shared<int64_t>(1);
  add_config_args(cmd, *a);
  cmd->add_option("--model", *model_dir, "HF model directory, checkpoint (…/step_N), or PEFT adapter directory (on model.path)");
  cmd->add_option("--split", *split, "split to evaluate (default: the env's eval split)");
  cmd->add_option("--episodes", *episodes, "episodes (0 = whole split)");
  cmd->add_option("--out", *out, "output directory (default: <run dir>/eval_<split>)");
  cmd->add_option("--policy", *policy_name, "model | expert (the env's scripted expert)")
      ->check(CLI::IsMember({"model", "expert"}));
  cmd->add_option("--sampled", *sampled,
                  "evaluate the sampling policy RL trains (rollout.temperature, top_p, top_k) with N episodes "
                  "per task instead of the greedy one (rollout.eval_temperature)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  cmd->add_option("--samples", *samples,
                  "episodes per task with the evaluation sampling settings (rollout.eval_temperature, eval_top_p; "
                  "SimpleTIR's avg@16 is --samples 16 at eval_temperature 1, eval_top_p 0.7)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  cmd->callback([=] {
    if (*sampled > 0 && *policy_name == "expert") throw UsageError("--sampled applies to --policy model only");
    if (*sampled > 0 && *samples > 1) throw UsageError("--samples and --sampled exclude each other");
    auto cfg = load(*a);
    if (*samples > 1 && cfg.rollout.eval_temperature == 0)
      throw UsageError("--samples " + std::to_string(*samples) + " needs rollout.eval_temperature > 0 (greedy "
                       "evaluation gives the same episode every time)");
    init_logging({});
    auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
    const std::string sp = !split->empty() ? *split : !cfg.env.eval_split.empty() ? cfg.env.eval_split : suite->eval_split();
    train::EvalReport report;
    if (*policy_name == "expert") {
      if (cfg.tokenizer.path.empty() && model_dir->empty())
        throw UsageError("--policy expert still renders prompts: give --model DIR or tokenizer.path");
    }
    // A checkpoint (with LoRA: its adapter on its base), a PEFT adapter (on
    // model.path) or an HF model directory.
    std::string dir = *model_dir;
    if (dir.empty()) dir = cfg.model.path;
    if (dir.empty()) throw UsageError("eval needs --model DIR (or model.path in the config)");
    auto policy = train::load_policy_from(cfg, dir);
    auto ctx = train::make_agent_context(cfg, policy, /*eval=*/*sampled == 0);
    if (*policy_name == "expert") {
      report = train::evaluate_scripted(rollout::expert_policy(cfg.prompt), *suite, ctx, sp, *episodes);
    } else {
      rollout::GenerationEngine engine(policy.model, policy.tokenizer, cfg.engine, policy.chat->stop_token_ids());
      report = train::evaluate(engine, suite, ctx, sp, *episodes, static_cast<uint64_t>(cfg.runtime.seed),
                               *sampled > 0 ? *sampled : *samples);
    }
    std::string od = !out->empty() ? *out : (fs::path(cfg.runtime.output_dir) / cfg.runtime.name / ("eval_" + sp)).string();
    ensure_dir(od);
    write_file_atomic((fs::path(od) / "metrics.json").string(), json_text(report.to_json(), 2));
    algo::write_trajectories_jsonl((fs::path(od) / "trajectories.jsonl").string(), report.trajectories);
    std::cout << json_text(report.to_json(), 2) << "\n";
  });
});

CommandRegistrar export_cmd(13, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "export", "Export a checkpoint as a plain HF model directory, or its LoRA adapter in PEFT's format");
  auto ckpt = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("hf");
  cmd->add_option("checkpoint", *ckpt, "checkpoint directory (…/checkpoints/step_N)")->required();
  cmd->add_option("--out", *out, "output directory")->required();
  cmd->add_option("--format", *format,
                  "hf: a plain HF model (LoRA adapters merged into the base) | peft: the LoRA adapter as a PEFT "
                  "directory (adapter_config.json + adapter_model.safetensors)")
      ->check(CLI::IsMember({"hf", "peft"}));
  cmd->callback([=] {
    const fs::path src(*ckpt);
    const bool lora = fs::exists(src / "adapter" / "adapter_config.json");
    if (!lora && !fs::exists(src / "model" / "config.json"))
      throw UsageError("export: " + *ckpt + " is not a checkpoint (no model/config.json or adapter/adapter_config.json)");
    if (*format == "peft" && !lora)
      throw UsageError("export --format peft: " + *ckpt + " is not a LoRA checkpoint (no adapter/); use --format hf");
    // The checkpoint's own config names a LoRA run's base model (model.path).
    train::ExperimentConfig cfg;
    if (lora && fs::exists(src / "config.yaml")) cfg = train::load_experiment_config((src / "config.yaml").string());
    cfg.model.device = "cpu";
    cfg.model.dtype = "float32";
    auto policy = train::load_policy_from(cfg, src.string());
    if (*format == "peft") {
      train::save_policy_adapter(policy, cfg, *out);
    } else {
      if (lora) model::merge_lora(*policy.model);  // W + scaling B A; the adapters themselves are not written
      train::save_policy(policy, *out);
    }
    std::cout << "exported " << src.string() << (lora ? " (LoRA, " + *format + ")" : std::string()) << " -> " << *out
              << "\n";
  });
});

CommandRegistrar config_cmd(2, [](CLI::App& root) {
  auto* grp = group(root, "config", "Inspect configuration");
  auto* cmd = grp->add_subcommand("show", "Print the resolved config (defaults, composition, overrides applied)");
  auto file = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  auto doc = std::make_shared<bool>(false);
  cmd->add_option("config", *file, "YAML config file (omit with --doc to list all keys)");
  cmd->add_option("overrides", *overrides, "key=value overrides");
  cmd->add_flag("--doc", *doc, "print every key with type, default, range and doc");
  cmd->callback([=] {
    train::ExperimentConfig cfg;
    if (!file->empty()) cfg = train::load_experiment_config(*file, *overrides);
    else if (!*doc) throw UsageError("config show: give a config file (or --doc)");
    if (*doc)
      std::cout << config::describe([&](config::Visitor& v) { cfg.visit(v); });
    else
      std::cout << config::to_yaml(cfg);
  });
});

CommandRegistrar rollouts_cmd(30, [](CLI::App& root) {
  auto* grp = group(root, "rollouts", "Inspect trajectory dumps");
  auto* cmd = grp->add_subcommand("show", "Print trajectories of a rollouts/iter_N.jsonl file readably");
  auto file = std::make_shared<std::string>();
  auto episode = std::make_shared<int64_t>(-1);
  cmd->add_option("file", *file, "trajectory JSONL")->required();
  cmd->add_option("--episode", *episode, "index of the episode (line) to show; default all");
  cmd->callback([=] {
    std::ifstream in(*file);
    if (!in) throw UsageError("rollouts show: cannot open " + *file);
    std::string line;
    int64_t idx = 0, shown = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (*episode < 0 || idx == *episode) {
        nlohmann::json j;
        try {
          j = nlohmann::json::parse(line);
        } catch (const std::exception& e) {
          throw FormatError(*file + ":" + std::to_string(idx + 1) + ": invalid JSON: " + e.what());
        }
        std::cout << rollout::format_trajectory(j) << "\n";
        ++shown;
      }
      ++idx;
    }
    if (*episode >= 0 && shown == 0)
      throw UsageError("rollouts show: episode " + std::to_string(*episode) + " not found (" + std::to_string(idx) +
                       " episodes in " + *file + ")");
  });
});

CommandRegistrar demos_cmd(40, [](CLI::App& root) {
  auto* grp = group(root, "env", "Environments: play, demos, bench");
  auto* cmd = grp->add_subcommand("demos", "Write expert demonstrations of an env as SFT chat JSONL");
  auto a = std::make_shared<ConfigArgs>();
  auto env = std::make_shared<std::string>();
  auto episodes = std::make_shared<int64_t>(100);
  auto out = std::make_shared<std::string>();
  auto split = std::make_shared<std::string>();
  auto seed = std::make_shared<uint64_t>(0);
  auto mistake_rate = std::make_shared<double>(-1.0);
  cmd->add_option("name", *env, "env name")->required();
  cmd->add_option("--config", a->file, "config (prompt templates, env section, tokenizer); default: built-in defaults");
  cmd->add_option("--set", a->overrides, "key=value overrides");
  cmd->add_option("--episodes", *episodes, "expert episodes");
  cmd->add_option("--split", *split, "split (default: train)");
  cmd->add_option("--seed", *seed, "task order seed");
  cmd->add_option("--mistake-rate", *mistake_rate,
                  "per step, probability of a mistaken command before the expert's (written with \"weight\": 0); "
                  "default: the config's sft.demo_mistake_rate");
  cmd->add_option("--out", *out, "output JSONL")->required();
  cmd->callback([=] {
    // Checked before anything loads (the config's own value is range-checked by the config).
    if (*mistake_rate != -1.0 && !(*mistake_rate >= 0.0 && *mistake_rate < 1.0))
      throw UsageError("--mistake-rate must be in [0, 1), got " + fmt::format("{}", *mistake_rate));
    train::ExperimentConfig cfg;
    if (!a->file.empty()) cfg = train::load_experiment_config(a->file, a->overrides);
    else config::apply_overrides([&](config::Visitor& v) { cfg.visit(v); }, a->overrides);
    init_logging({});
    auto suite = envs::make_env_suite(*env, cfg.envs);
    const std::string sp = split->empty() ? suite->train_split() : *split;
    // Demos are text: a byte-level stand-in tokenizer would do, but the agent
    // loop needs *a* tokenizer for observation budgets; a plain template over
    // the configured tokenizer is used when one is given.
    std::string tok_dir = !cfg.tokenizer.path.empty() ? cfg.tokenizer.path : cfg.model.path;
    if (tok_dir.empty()) throw UsageError("env demos needs a tokenizer: --set tokenizer.path=DIR (or model.path)");
    train::Policy p;
    p.tokenizer = text::load_tokenizer(tok_dir);
    p.chat = text::ChatTemplate::create(cfg.tokenizer.chat_template, p.tokenizer, tok_dir);
    auto ctx = train::make_agent_context(cfg, p, false);
    const double rate = *mistake_rate < 0.0 ? cfg.sft.demo_mistake_rate : *mistake_rate;
    auto trajs = rollout::expert_trajectories(*suite, sp, *episodes, *seed, ctx, rate);
    std::string data;
    int64_t n = 0;
    for (const auto& t : trajs)
      for (const auto& conv : rollout::trajectory_to_conversations(t, cfg.prompt)) {
        data += json_text(conv) + "\n";
        ++n;
      }
    write_file_atomic(*out, data);
    std::cout << "wrote " << n << " conversations from " << trajs.size() << " successful expert episodes to " << *out
              << "\n";
  });
});

}  // namespace
}  // namespace agentrl::cli
