// `agentrl env prompt CONFIG`: the exact text the policy of a config sees,
// step by step, for a scripted episode (the expert's, or responses from a
// file). Runs the rollout's own EpisodeRunner with the config's tokenizer,
// chat template and prompt templates (rollout/prompt_preview.h).
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/logging.h"
#include "agentrl/envs/env_tools.h"
#include "agentrl/envs/registry.h"
#include "agentrl/rollout/prompt_preview.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/policy.h"
#include "agentrl/train/run_setup.h"

namespace fs = std::filesystem;

namespace agentrl::cli {
namespace {

struct PromptArgs {
  std::string file;
  std::vector<std::string> overrides;
  std::string split, responses, tokenizer;
  int64_t task = 0;
  uint64_t seed = 0;
  bool whole_context = false;
};

std::vector<std::string> read_responses(const std::string& path) {
  auto out = rollout::split_responses(read_file(path));  // IoError names the file and the reason
  if (out.empty()) throw UsageError("--responses: " + path + " holds no responses");
  return out;
}

// A scratch directory for a tokenizer the config trains (tokenizer.train),
// removed when the command ends.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "agentrl-prompt-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw IoError("cannot create a scratch directory under " + tmpl);
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void run_prompt(const PromptArgs& a) {
  auto cfg = train::load_experiment_config(a.file, a.overrides);
  cfg.model.device = "cpu";  // no model is loaded: a GPU config previews on any machine
  if (!a.tokenizer.empty()) {
    cfg.tokenizer.path = a.tokenizer;
    cfg.tokenizer.train = false;
  }
  LogOptions lo;
  lo.level = "warn";  // the preview is the output; keep tokenizer training quiet
  init_logging(lo);
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  const std::string split =
      !a.split.empty() ? a.split : !cfg.env.eval_split.empty() ? cfg.env.eval_split : suite->eval_split();
  envs::Task task = envs::pick_task(*suite, split, a.task, a.seed);
  // Read before the tokenizer is trained: a bad file fails at once.
  rollout::ScriptedResponses responses = rollout::expert_policy(cfg.prompt);
  if (!a.responses.empty()) {
    auto list = std::make_shared<std::vector<std::string>>(read_responses(a.responses));
    auto next = std::make_shared<size_t>(0);
    responses = [list, next](envs::Env&) -> std::optional<std::string> {
      if (*next >= list->size()) return std::nullopt;
      return (*list)[(*next)++];
    };
  }
  ScratchDir scratch;
  if (cfg.tokenizer.train)
    std::cerr << "(tokenizer.train: trained the config's tokenizer in a scratch directory, as a run would; "
                 "--tokenizer runs/NAME/tokenizer uses a run's)\n";
  train::Policy policy = train::build_policy_tokenizer(cfg, *suite, scratch.path);
  auto ctx = train::make_agent_context(cfg, policy, /*eval=*/false);

  rollout::EpisodeSpec spec;
  spec.task = task;
  spec.env_seed = a.seed;
  spec.episode_id = "prompt";
  rollout::EpisodeRunner runner(suite->make_env(), spec, ctx);
  std::cout << "[" << suite->name() << " " << split << " #" << task.index << " " << task.id << ", context mode "
            << cfg.rollout.context_mode << ", chat template " << cfg.tokenizer.chat_template << ", responses: "
            << (a.responses.empty() ? "the expert's" : a.responses) << "]\n";
  rollout::PreviewOptions po;
  po.whole_context = a.whole_context;
  rollout::preview_episode(runner, *policy.tokenizer, responses, po, std::cout);
}

CommandRegistrar reg(41, [](CLI::App& root) {
  CLI::App* env = group(root, "env", "Environments: play, benchmark, demonstrations");
  auto a = std::make_shared<PromptArgs>();
  CLI::App* cmd = env->add_subcommand(
      "prompt", "Print, step by step, the exact text (and token count) the policy of CONFIG sees in a scripted "
                "episode: the expert's, or the responses of --responses FILE");
  cmd->add_option("config", a->file, "YAML config file")->required();
  cmd->add_option("overrides", a->overrides, "key=value overrides");
  cmd->add_option("--split", a->split, "split (default: env.eval_split, else the env's eval split)");
  cmd->add_option("--task", a->task, "task index within the split (default 0)");
  cmd->add_option("--seed", a->seed, "env seed of the episode (default 0)");
  cmd->add_option("--responses", a->responses,
                  "file of responses: one per line, or, when a line holds only '.', responses ended by such lines "
                  "(multi-line, e.g. code blocks)");
  cmd->add_option("--tokenizer", a->tokenizer,
                  "tokenizer directory to use instead of the config's (e.g. runs/quickstart/tokenizer)");
  cmd->add_flag("--whole-context", a->whole_context,
                "full context mode: print the whole context at every step, not only what the step appends");
  cmd->callback([a] { run_prompt(*a); });
});

}  // namespace
}  // namespace agentrl::cli
