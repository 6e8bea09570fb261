// Golden test of configs/paper/gigpo_alfworld_qwen2.5_1.5b.yaml: the prompts
// the rollout renders equal, string for string, what verl-agent's ALFWorld
// templates produce for the same state. The expected text is built here from
// the original's templates and formatting (verl-agent d0b9724:
// agent_system/environments/prompts/alfworld.py, env_manager.py
// AlfWorldEnvironmentManager.build_text_obs, memory/memory.py
// SimpleMemory.fetch), applied to the observations and admissible actions of
// a replica of the episode's env.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "agentrl/core/strings.h"
#include "agentrl/envs/codetool/codetool_env.h"
#include "agentrl/envs/deepsearch/deepsearch_env.h"
#include "agentrl/envs/projection.h"
#include "agentrl/envs/webshop/webshop_env.h"
#include "agentrl/envs/registry.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/experiment_config.h"
#include "rollout/rollout_test_support.h"

namespace agentrl::train {
namespace {

const std::string kPreset = std::string(AGENTRL_SOURCE_DIR) + "/configs/paper/gigpo_alfworld_qwen2.5_1.5b.yaml";

// verl-agent's ALFWORLD_TEMPLATE_NO_HIS and ALFWORLD_TEMPLATE (Python
// triple-quoted strings: they start and end with a newline; the reasoning
// line ends with a space).
const std::string kNoHis =
    "\nYou are an expert agent operating in the ALFRED Embodied Environment.\n"
    "Your current observation is: {current_observation}\n"
    "Your admissible actions of the current situation are: [{admissible_actions}].\n"
    "\n"
    "Now it's your turn to take an action.\n"
    "You should first reason step-by-step about the current situation. This reasoning process MUST be enclosed "
    "within <think> </think> tags. \n"
    "Once you've finished your reasoning, you should choose an admissible action for current step and present it "
    "within <action> </action> tags.\n";
const std::string kWithHis =
    "\nYou are an expert agent operating in the ALFRED Embodied Environment. Your task is to: {task_description}\n"
    "Prior to this step, you have already taken {step_count} step(s). Below are the most recent {history_length} "
    "observations and the corresponding actions you took: {action_history}\n"
    "You are now at step {current_step} and your current observation is: {current_observation}\n"
    "Your admissible actions of the current situation are: [{admissible_actions}].\n"
    "\n"
    "Now it's your turn to take an action.\n"
    "You should first reason step-by-step about the current situation. This reasoning process MUST be enclosed "
    "within <think> </think> tags. \n"
    "Once you've finished your reasoning, you should choose an admissible action for current step and present it "
    "within <action> </action> tags.\n";

// Python's str.format for the named fields used above (values inserted once).
std::string py_format(const std::string& t, const std::map<std::string, std::string>& kv) {
  std::string out;
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '{') {
      size_t close = t.find('}', i);
      out += kv.at(t.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      out += t[i++];
    }
  }
  return out;
}

// The rollout's context for a preset: its rollout and prompt settings, a
// byte tokenizer under ChatML.
std::shared_ptr<rollout::AgentContext> preset_context(const ExperimentConfig& cfg) {
  auto ctx = std::make_shared<rollout::AgentContext>();
  ctx->rollout = cfg.rollout;
  ctx->prompt = cfg.prompt;
  ctx->tokenizer = std::make_shared<agentrl::testing::ByteTokenizer>();
  ctx->chat = text::ChatTemplate::create("chatml", ctx->tokenizer, "");
  return ctx;
}

// "\n ".join(f"'{s}'" for s in admissible if s != 'help')
std::string admissible(const envs::Env& env) {
  std::string out;
  for (const auto& a : env.admissible_actions()) {
    if (a == "help") continue;
    out += (out.empty() ? "" : "\n ") + ("'" + a + "'");
  }
  return out;
}

TEST(PaperPreset, VerlAgentAlfworldPromptsMatchTheOriginalTemplatesStringForString) {
  auto cfg = load_experiment_config(kPreset, {});
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  auto ctx = preset_context(cfg);
  rollout::EpisodeSpec spec;
  spec.task = suite->tasks().get("valid_seen", 4);
  spec.env_seed = 11;
  rollout::EpisodeRunner runner(suite->make_env(), spec, ctx);
  auto traj = rollout::run_scripted_episode(runner, rollout::expert_policy(cfg.prompt));
  ASSERT_GE(traj.turns.size(), 4u) << "the expert's episode is too short for the test";

  // Replay the episode in a replica: the original's view of every state.
  auto env = suite->make_env();
  const std::string obs0 = env->reset(spec.task, spec.env_seed);
  const std::string task = obs0.substr(obs0.find("Your task is to: ") + 17);
  std::vector<std::string> obs = {obs0}, acts;
  for (size_t k = 0; k < 4; ++k) {
    const std::string adm = admissible(*env);
    std::string expected;
    if (k == 0) {
      expected = py_format(kNoHis, {{"current_observation", obs0}, {"admissible_actions", adm}});
    } else {
      const size_t begin = k > 2 ? k - 2 : 0;  // history_length 2
      std::string history;
      for (size_t j = begin; j < k; ++j)
        history += (j > begin ? "\n" : "") + ("[Observation " + std::to_string(j + 1) + ": '" + obs[j] + "', Action " +
                                              std::to_string(j + 1) + ": '" + acts[j] + "']");
      expected = py_format(kWithHis, {{"task_description", strings::trim(task)},
                                      {"step_count", std::to_string(k)},
                                      {"history_length", std::to_string(k - begin)},
                                      {"action_history", history},
                                      {"current_step", std::to_string(k + 1)},
                                      {"current_observation", obs[k]},
                                      {"admissible_actions", adm}});
    }
    EXPECT_EQ(traj.turns[k].user_message, expected) << "step " << k + 1;
    // The projected (lower-cased) action goes into the env and the history.
    acts.push_back(traj.turns[k].action);
    obs.push_back(env->step(acts.back()).observation);
  }
  // Each step is one user message under Qwen2.5's chat template, whose
  // default system message the preset spells out.
  const std::string rendered = ctx->tokenizer->decode(traj.turns[2].context_tokens, false);
  EXPECT_EQ(rendered, "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
                      "<|im_end|>\n<|im_start|>user\n" + traj.turns[2].user_message +
                      "<|im_end|>\n<|im_start|>assistant\n");
  // The expert's responses have the protocol's format: no penalty; a win pays 10.
  for (const auto& t : traj.turns) EXPECT_GE(t.reward, 0.0);
  EXPECT_TRUE(traj.success);
  EXPECT_DOUBLE_EQ(traj.reward, 10.0);
}

}  // namespace
}  // namespace agentrl::train

namespace agentrl::train {
namespace {

// The env-side protocol two presets share: prompts, projection, rewards,
// turns, context and evaluation settings.
void expect_same_env_protocol(const ExperimentConfig& small, const ExperimentConfig& big) {
  const auto& a = small.prompt;
  const auto& b = big.prompt;
  EXPECT_EQ(a.system, b.system);
  EXPECT_EQ(a.window_first_user, b.window_first_user);
  EXPECT_EQ(a.window_user, b.window_user);
  EXPECT_EQ(a.history_entry, b.history_entry);
  EXPECT_EQ(a.admissible_item, b.admissible_item);
  EXPECT_EQ(a.admissible_separator, b.admissible_separator);
  EXPECT_EQ(a.admissible_exclude, b.admissible_exclude);
  const auto& r = small.rollout;
  const auto& q = big.rollout;
  EXPECT_EQ(r.projection, q.projection);
  EXPECT_EQ(r.projection_fallback_chars, q.projection_fallback_chars);
  EXPECT_EQ(r.reward_on, q.reward_on);
  EXPECT_EQ(r.reward_scale, q.reward_scale);
  EXPECT_EQ(r.invalid_penalty_on, q.invalid_penalty_on);
  EXPECT_EQ(r.max_turns, q.max_turns);
  EXPECT_EQ(r.max_new_tokens, q.max_new_tokens);
  EXPECT_EQ(r.max_context_tokens, q.max_context_tokens);
  EXPECT_EQ(r.observation_token_budget, q.observation_token_budget);
  EXPECT_EQ(r.eval_temperature, q.eval_temperature);
  EXPECT_EQ(r.group_size, q.group_size);
  EXPECT_EQ(r.tasks_per_iteration, q.tasks_per_iteration);
  EXPECT_EQ(small.env.eval_split, big.env.eval_split);
  EXPECT_EQ(small.trainer.optim.lr, big.trainer.optim.lr);
  EXPECT_EQ(small.actor.kl.enabled, big.actor.kl.enabled);
  EXPECT_EQ(small.actor.kl.coef, big.actor.kl.coef);
}

// The protocol fields a 7B preset must keep from its 1.5B preset (only the
// model and its memory settings differ).
void expect_same_protocol(const ExperimentConfig& small, const ExperimentConfig& big) {
  EXPECT_EQ(big.model.path, "models/Qwen2.5-7B-Instruct");
  EXPECT_TRUE(big.dist.shard_optimizer);
  expect_same_env_protocol(small, big);
  EXPECT_EQ(small.algorithm.adv_estimator, big.algorithm.adv_estimator);
}

TEST(PaperPreset, The7BPresetKeepsTheProtocolOfThe15BOne) {
  expect_same_protocol(load_experiment_config(kPreset, {}),
                       load_experiment_config(std::string(AGENTRL_SOURCE_DIR) +
                                                  "/configs/paper/gigpo_alfworld_qwen2.5_7b.yaml",
                                              {}));
}

TEST(PaperPreset, TheEmpgPresetsKeepTheVerlAgentProtocolAndChangeOnlyTheAdvantage) {
  const std::string dir = std::string(AGENTRL_SOURCE_DIR) + "/configs/paper/";
  auto gigpo = load_experiment_config(kPreset, {});
  auto empg = load_experiment_config(dir + "empg_alfworld_qwen2.5_1.5b.yaml", {});
  expect_same_env_protocol(gigpo, empg);
  EXPECT_EQ(empg.model.path, gigpo.model.path);
  EXPECT_EQ(empg.algorithm.adv_estimator, "empg");
  EXPECT_EQ(gigpo.algorithm.adv_estimator, "gigpo");
  expect_same_protocol(empg, load_experiment_config(dir + "empg_alfworld_qwen2.5_7b.yaml", {}));
}

}  // namespace
}  // namespace agentrl::train

// Golden test of configs/paper/gigpo_webshop_qwen2.5_1.5b.yaml against
// verl-agent's WebShop templates (prompts/webshop.py) and formatting
// (env_manager.py WebshopEnvironmentManager: extract_task, format_obs,
// format_avail_actions, build_text_obs; memory/memory.py SimpleMemory.fetch),
// applied to WebShop's plain 'text'-mode pages of a replica of the episode.
namespace agentrl::train {
namespace {

const std::string kWebshopPreset =
    std::string(AGENTRL_SOURCE_DIR) + "/configs/paper/gigpo_webshop_qwen2.5_1.5b.yaml";

// WEBSHOP_TEMPLATE_NO_HIS and WEBSHOP_TEMPLATE as Python holds them ("e‑commerce"
// with U+2011; the first line of the no-history template and two other lines
// end with a space).
const std::string kShopIntro = "\nYou are an expert autonomous agent operating in the WebShop e\u2011commerce environment.";
const std::string kShopTail =
    "Your admissible actions of the current situation are: \n[\n{available_actions}\n].\n\n"
    "Now it's your turn to take one action for the current step.\n"
    "You should first reason step-by-step about the current situation, then think carefully which admissible "
    "action best advances the shopping goal. This reasoning process MUST be enclosed within <think> </think> tags. \n"
    "Once you've finished your reasoning, you should choose an admissible action for current step and present it "
    "within <action> </action> tags.\n";
const std::string kShopNoHis = kShopIntro + " \nYour task is to: {task_description}.\n"
                               "Your current observation is: {current_observation}.\n" + kShopTail;
const std::string kShopWithHis =
    kShopIntro + "\nYour task is to: {task_description}.\n"
    "Prior to this step, you have already taken {step_count} step(s). Below are the most recent {history_length} "
    "observations and the corresponding actions you took: {action_history}\n"
    "You are now at step {current_step} and your current observation is: {current_observation}.\n" + kShopTail;

std::vector<std::string> split_sep(const std::string& s) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = s.find(" [SEP] ", from)) != std::string::npos; from = at + 7) out.push_back(s.substr(from, at - from));
  out.push_back(s.substr(from));
  return out;
}

// format_obs: the parts after the task, each in single quotes, " [SEP] "-joined.
std::string format_obs(const std::string& raw, const std::string& task) {
  const auto parts = split_sep(raw);
  const auto at = std::find(parts.begin(), parts.end(), task);
  if (at == parts.end()) return raw;
  std::string out;
  for (auto it = at + 1; it != parts.end(); ++it) out += (it == at + 1 ? "" : " [SEP] ") + ("'" + *it + "'");
  return out;
}

TEST(PaperPreset, VerlAgentWebshopPromptsMatchTheOriginalTemplatesStringForString) {
  auto cfg = load_experiment_config(kWebshopPreset, {});
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  auto ctx = preset_context(cfg);
  rollout::EpisodeSpec spec;
  spec.task = suite->tasks().get("train", 3);
  spec.env_seed = 5;
  rollout::EpisodeRunner runner(suite->make_env(), spec, ctx);
  auto traj = rollout::run_scripted_episode(runner, rollout::expert_policy(cfg.prompt));
  ASSERT_GE(traj.turns.size(), 3u) << "the expert's episode is too short for the test";

  // The replica shows WebShop's own pages ('text' mode); the admissible list
  // keeps verl-agent's order (checked against the page in the env's tests).
  auto plain = load_experiment_config(kWebshopPreset, {"webshop.observation_mode=simple"});
  auto env = envs::make_env_suite(plain.env.name, plain.envs)->make_env();
  std::vector<std::string> raw = {env->reset(spec.task, spec.env_seed)}, acts;
  const auto head = split_sep(raw[0]);
  ASSERT_GE(head.size(), 3u);
  ASSERT_EQ(head[1], "Instruction:");
  const std::string task = head[2];  // extract_task
  for (size_t k = 0; k < traj.turns.size(); ++k) {
    std::string adm;
    for (const auto& a : env->admissible_actions()) adm += (adm.empty() ? "" : "\n") + ("'" + a + "',");
    std::string expected;
    if (k == 0) {
      expected = py_format(kShopNoHis, {{"task_description", task},
                                        {"current_observation", format_obs(raw[0], task)},
                                        {"available_actions", adm}});
    } else {
      const size_t begin = k > 2 ? k - 2 : 0;
      std::string history;
      for (size_t j = begin; j < k; ++j)
        history += (j > begin ? "\n" : "") + ("[Observation " + std::to_string(j + 1) + ": '" +
                                              format_obs(raw[j], task) + "', Action " + std::to_string(j + 1) +
                                              ": '" + acts[j] + "']");
      expected = py_format(kShopWithHis, {{"task_description", task},
                                          {"step_count", std::to_string(k)},
                                          {"history_length", std::to_string(k - begin)},
                                          {"action_history", history},
                                          {"current_step", std::to_string(k + 1)},
                                          {"current_observation", format_obs(raw[k], task)},
                                          {"available_actions", adm}});
    }
    EXPECT_EQ(traj.turns[k].user_message, expected) << "step " << k + 1;
    acts.push_back(traj.turns[k].action);
    raw.push_back(env->step(acts.back()).observation);
  }
  // The search page offers the search bar and its button, as verl-agent lists them.
  EXPECT_NE(traj.turns[0].user_message.find("[\n'search[<your query>]',\n'click[search]',\n]."), std::string::npos)
      << traj.turns[0].user_message;
  // A win pays 10 (reward_on: success), a partial score nothing; the
  // expert's responses have the protocol's format: no penalty.
  EXPECT_DOUBLE_EQ(traj.reward, traj.success ? 10.0 : 0.0);
  EXPECT_TRUE(traj.success) << "pick a goal the expert wins, so that the reward is checked";
}

// build_text_obs: a prompt with history longer than 13,000 characters
// (Python len) is replaced by the history-free template of the same step.
TEST(PaperPreset, VerlAgentWebshopPromptsOver13000CharactersDropTheirHistory) {
  EXPECT_EQ(load_experiment_config(kWebshopPreset, {}).prompt.window_fallback_chars, 13000);
  auto second_prompt = [](int64_t limit) {
    auto cfg = load_experiment_config(kWebshopPreset, {"prompt.window_fallback_chars=" + std::to_string(limit)});
    auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
    rollout::EpisodeSpec spec;
    spec.task = suite->tasks().get("train", 3);
    spec.env_seed = 5;
    rollout::EpisodeRunner runner(suite->make_env(), spec, preset_context(cfg));
    auto traj = rollout::run_scripted_episode(runner, rollout::expert_policy(cfg.prompt));
    EXPECT_GE(traj.turns.size(), 2u);
    return traj.turns.size() < 2 ? std::string() : traj.turns[1].user_message;
  };
  const std::string with_history = second_prompt(0);
  ASSERT_NE(with_history.find("Prior to this step"), std::string::npos);
  const int64_t chars = static_cast<int64_t>(strings::utf8_code_points(with_history));
  EXPECT_EQ(second_prompt(chars), with_history) << "exactly at the limit: kept";
  const std::string fallback = second_prompt(chars - 1);
  EXPECT_EQ(fallback.rfind(kShopIntro + " \nYour task is to: ", 0), 0u) << fallback;
  EXPECT_EQ(fallback.find("Prior to this step"), std::string::npos);
  const auto obs_at = with_history.find("your current observation is: ");
  ASSERT_NE(obs_at, std::string::npos);
  EXPECT_NE(fallback.find(with_history.substr(obs_at + 29)), std::string::npos)
      << "the same observation and actions, without the history";
}

TEST(PaperPreset, TheWebshop7BPresetKeepsTheProtocolOfThe15BOne) {
  auto small = load_experiment_config(kWebshopPreset, {});
  auto big =
      load_experiment_config(std::string(AGENTRL_SOURCE_DIR) + "/configs/paper/gigpo_webshop_qwen2.5_7b.yaml", {});
  expect_same_protocol(small, big);
  const auto& ws = small.envs.as<envs::webshop::WebshopConfig>("webshop");
  const auto& wb = big.envs.as<envs::webshop::WebshopConfig>("webshop");
  EXPECT_EQ(ws.observation_mode, wb.observation_mode);
  EXPECT_EQ(ws.admissible_format, wb.admissible_format);
}

TEST(PaperPreset, VerlAgentWebshopPaysNothingForAPartialScore) {
  // Buying the first search result without choosing options scores partly
  // (WebShop's reward in (0, 1)); verl-agent's env pays 10 x won only.
  auto cfg = load_experiment_config(kWebshopPreset, {});
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  auto ctx = preset_context(cfg);
  rollout::EpisodeSpec spec;
  spec.task = suite->tasks().get("train", 3);
  rollout::EpisodeRunner runner(suite->make_env(), spec, ctx);
  // search the instruction, click the first product link (after back and
  // next), buy; a fresh policy per episode
  auto buy_first_result = [] {
    return [step = 0](envs::Env& env) mutable -> std::optional<std::string> {
      if (step > 2) return std::nullopt;
      const std::string action = step == 0   ? "search[" + env.task_description() + "]"
                                 : step == 1 ? env.admissible_actions().at(2)
                                             : std::string("click[buy now]");
      ++step;
      return "<think>t</think><action>" + action + "</action>";
    };
  };
  auto traj = rollout::run_scripted_episode(runner, buy_first_result());
  ASSERT_EQ(traj.turns.size(), 3u);
  ASSERT_GT(traj.score, 0.0);
  ASSERT_LT(traj.score, 1.0) << "the bought product happens to score 1: pick another goal";
  EXPECT_FALSE(traj.success);
  EXPECT_DOUBLE_EQ(traj.reward, 0.0);
  // The same episode under the env's own reward pays its score, scaled.
  ctx->rollout.reward_on = "env";
  rollout::EpisodeRunner again(suite->make_env(), spec, ctx);
  auto scored = rollout::run_scripted_episode(again, buy_first_result());
  EXPECT_DOUBLE_EQ(scored.reward, 10.0 * traj.score);
}

TEST(PaperPreset, VerlAgentWebshopInvalidResponsesSendTheirLast20Characters) {
  auto cfg = load_experiment_config(kWebshopPreset, {});
  EXPECT_EQ(cfg.rollout.projection_fallback_chars, 20);
  // webshop/projection.py: actions[i][-20:] of the lower-cased response.
  EXPECT_EQ(envs::verl_agent_projection("I will click on the First product now", 20).action, "he first product now");
  EXPECT_FALSE(envs::verl_agent_projection("I will click on the First product now", 20).valid);
}

// configs/paper/search_r1_qwen2.5_3b.yaml on the built-in world (the QA
// files and the e5 server are not here), with a local retriever. The expected
// text is built the way Search-R1 builds it (a14dc3a):
// qa_search_train_merge.py make_prefix on the stripped question ended with
// '?', generation.py's information block and invalid-action message.
const std::string kSearchR1Preset = std::string(AGENTRL_SOURCE_DIR) + "/configs/paper/search_r1_qwen2.5_3b.yaml";
const std::string kSearchR1Prefix =
    "Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get new "
    "information. After reasoning, if you find you lack some knowledge, you can call a search engine by <search> "
    "query </search> and it will return the top searched results between <information> and </information>. You can "
    "search as many times as your want. If you find no further external knowledge needed, you can directly provide "
    "the answer inside <answer> and </answer>, without detailed illustrations. For example, <answer> Beijing "
    "</answer>. Question: ";

ExperimentConfig search_r1_on_the_world() {
  // The byte tokenizer of the test makes every byte a token: the budget is
  // raised so that the prompt (~600 bytes, ~150 Qwen tokens) is not cut.
  return load_experiment_config(
      kSearchR1Preset, {"rollout.observation_token_budget=5000", "deepsearch.data=world", "deepsearch.retriever.kind=local", "deepsearch.world.people=200",
                        "deepsearch.world.cities=20", "deepsearch.world.organisations=40", "deepsearch.world.works=80",
                        "deepsearch.world.questions=400",
                        "deepsearch.retriever.cache_dir=" + std::string(AGENTRL_BINARY_DIR) + "/train-searchr1-cache"});
}

TEST(PaperPreset, SearchR1EpisodeIsOneAssistantMessageStringForString) {
  auto cfg = search_r1_on_the_world();
  EXPECT_EQ(cfg.rollout.context_mode, "inline");
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  auto ctx = preset_context(cfg);
  rollout::EpisodeSpec spec;
  spec.task = suite->tasks().get("train", 7);
  rollout::EpisodeRunner runner(suite->make_env(), spec, ctx);
  auto traj = rollout::run_scripted_episode(runner, rollout::expert_policy(cfg.prompt));
  ASSERT_GE(traj.turns.size(), 2u) << "the expert answers at once: pick a question that needs a search";
  ASSERT_TRUE(traj.success);
  // The prompt: Qwen's default system message and make_prefix's user message.
  const std::string question = strings::trim(suite->make_env()->reset(spec.task, 0).substr(kSearchR1Prefix.size()));
  ASSERT_EQ(question.back(), '?');
  EXPECT_EQ(traj.turns[0].user_message, kSearchR1Prefix + question + "\n");
  // The whole sequence: the chat prompt, then each response followed by the
  // information block of its search, inside one assistant message.
  agentrl::testing::ByteTokenizer tok;
  std::string expected = "<|im_start|>system\n" + cfg.prompt.system + "<|im_end|>\n<|im_start|>user\n" +
                         kSearchR1Prefix + question + "\n<|im_end|>\n<|im_start|>assistant\n";
  auto replica = suite->make_env();
  replica->reset(spec.task, 0);
  for (size_t k = 0; k < traj.turns.size(); ++k) {
    const auto& turn = traj.turns[k];
    if (k > 0) expected += turn.user_message;
    expected += turn.response;
    const std::string obs = replica->step(turn.response).observation;
    if (k + 1 < traj.turns.size()) {
      // generation.py: f'\n\n<information>{search_results.strip()}</information>\n\n'
      ASSERT_EQ(obs.rfind("\n\n<information>Doc 1(Title: ", 0), 0u) << obs;
      EXPECT_EQ(traj.turns[k + 1].user_message, obs);
      EXPECT_EQ(obs.find("\n</information>"), std::string::npos) << "the passages are stripped";
    }
  }
  // The last response ends at </answer>, where generation stops.
  EXPECT_EQ(tok.decode(rollout::sequence_tokens(traj), false), expected);
  EXPECT_EQ(traj.turns.back().response.substr(traj.turns.back().response.size() - 9), "</answer>");
  EXPECT_DOUBLE_EQ(traj.reward, 1.0);
}

TEST(PaperPreset, SearchR1TurnsParseAndScoreAsTheOriginal) {
  auto cfg = search_r1_on_the_world();
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  auto env = suite->make_env();
  const auto task = suite->tasks().get("train", 7);
  env->reset(task, 0);
  // An invalid turn gets the original's message and the episode goes on.
  auto invalid = env->step("I do not know what to do.");
  EXPECT_FALSE(invalid.done);
  EXPECT_EQ(invalid.observation,
            "\nMy previous action is invalid. If I want to search, I should put the query between <search> and "
            "</search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. "
            "Let me try again.\n");
  // <access> is not a Search-R1 action; the first tag counts.
  auto access = env->step("<access> w1 </access>");
  EXPECT_TRUE(access.info.invalid_action);
  // max_turns 2 + the final turn: the third turn ends the episode, a search
  // in it brings nothing back and scores 0.
  auto last = env->step("<search> anything </search>");
  EXPECT_TRUE(last.done);
  EXPECT_DOUBLE_EQ(last.reward, 0.0);
  // The retriever URL of train_grpo.sh is accepted as written.
  EXPECT_EQ(cfg.envs.as<envs::deepsearch::DeepSearchConfig>("deepsearch").retriever.url,
            "http://127.0.0.1:8000/retrieve");
}

// SimpleTIR's prompt (recipe/simpletir/config/simpletir_trainer.yaml at
// e7b5b44, data.prompt: a YAML block scalar, so one final newline), which
// rl_dataset.py puts before the question of the user message.
const std::string kSimpleTirPrompt =
    "Solve the following problem step by step. You now have the ability to selectively write executable Python code "
    "to enhance your reasoning process. The Python code will be executed by an external sandbox, and the output "
    "(after \"Code execution result: \") is returned to aid your reasoning and help you arrive at the final answer. "
    "The Python code should be complete scripts, including necessary imports.\n\nCode Format:\nEach code snippet is "
    "wrapped between ```. You need to use `print()` to output intermediate results.\n\nAnswer Format:\nYou can use "
    "the `final_answer()` function in the code to return your final answer. For example, to answer the User "
    "Question: What is the result of the 5 + 3 + 1294.678?, you can write:\n```py\nanswer = 5 + 3 + "
    "1294.678\nfinal_answer(answer)\n```\n\nYou can also use \\boxed to return your answer. The last part of your "
    "response should be:\n\\boxed{'The final answer goes here.'}\n\nUser Question:\n";

ExperimentConfig simpletir_preset() {
  const std::string data = ::testing::TempDir() + "/simpletir_preset.jsonl";
  FILE* f = std::fopen(data.c_str(), "w");
  std::fputs("{\"problem\": \"What is $6 \\\\times 7$?\", \"answer\": \"42\"}\n", f);
  std::fclose(f);
  return load_experiment_config(std::string(AGENTRL_SOURCE_DIR) + "/configs/paper/simpletir_qwen2.5_7b.yaml",
                                {"codetool.train_file=" + data, "codetool.test_file=" + data});
}

TEST(PaperPreset, SimpleTirSettingsAreTheOriginals) {
  auto cfg = simpletir_preset();
  const auto& c = cfg.envs.as<envs::codetool::CodeToolConfig>("codetool");
  EXPECT_EQ(c.protocol, "simpletir");
  EXPECT_EQ(c.instruction, kSimpleTirPrompt);
  EXPECT_EQ(c.max_turns, 5);
  EXPECT_EQ(cfg.rollout.context_mode, "inline");
  EXPECT_EQ(cfg.rollout.group_size, 16);
  EXPECT_EQ(cfg.rollout.tasks_per_iteration, 512);
  EXPECT_DOUBLE_EQ(cfg.rollout.eval_temperature, 1.0);
  EXPECT_DOUBLE_EQ(cfg.rollout.eval_top_p, 0.7);
  EXPECT_DOUBLE_EQ(cfg.actor.clip_low, 0.2);
  EXPECT_DOUBLE_EQ(cfg.actor.clip_high, 0.28);
  EXPECT_DOUBLE_EQ(cfg.actor.dual_clip, 3.0);
  EXPECT_FALSE(cfg.actor.kl.enabled);
  EXPECT_DOUBLE_EQ(cfg.trainer.optim.lr, 1e-6);
  EXPECT_EQ(cfg.algorithm.filters.front(), "void_turn");
}

TEST(PaperPreset, SimpleTirEpisodeIsOneAssistantMessageStringForString) {
  auto cfg = simpletir_preset();
  if (!envs::codetool::probe_sandbox(cfg.envs.as<envs::codetool::CodeToolConfig>("codetool").sandbox).available)
    GTEST_SKIP() << "bubblewrap unusable here";
  auto suite = envs::make_env_suite(cfg.env.name, cfg.envs);
  auto ctx = preset_context(cfg);
  rollout::EpisodeSpec spec;
  spec.task = suite->tasks().get("train", 0);
  rollout::EpisodeRunner runner(suite->make_env(), spec, ctx);
  // Text after the first block is never generated (the stop regex); a
  // silent block splices nothing in; the last response ends the episode with
  // a boxed answer.
  const std::vector<std::string> responses = {"Let me compute.\n```\nprint(6 * 7)\n```", "```python\nx = 1\n```",
                                              "So the product is \\boxed{42}."};
  size_t next = 0;
  auto traj = rollout::run_scripted_episode(runner, [&](envs::Env&) -> std::optional<std::string> {
    if (next == responses.size()) return std::nullopt;
    return responses[next++];
  });
  ASSERT_EQ(traj.turns.size(), 3u);
  EXPECT_TRUE(traj.success);
  EXPECT_DOUBLE_EQ(traj.reward, 1.0);
  // The chat prompt (apply_chat_template with Qwen's default system message),
  // the first response ending at the closing fence (no end-of-turn token),
  // the output exactly as agent_utils.py formats it, the final response.
  agentrl::testing::ByteTokenizer tok;
  const std::string expected = "<|im_start|>system\n" + cfg.prompt.system + "<|im_end|>\n<|im_start|>user\n" +
                               kSimpleTirPrompt + "What is $6 \\times 7$?<|im_end|>\n<|im_start|>assistant\n" +
                               responses[0] + "\nCode execution result: 42\n\n" + responses[1] + responses[2] +
                               "<|im_end|>";
  EXPECT_EQ(tok.decode(rollout::sequence_tokens(traj), false), expected);
  EXPECT_EQ(traj.turns[0].finish_reason, "stop_string");
  EXPECT_TRUE(traj.turns[2].context_tokens.empty()) << "nothing spliced after a silent block";
  // The trainer's row: the same tokens, the loss exactly on the responses.
  auto batch = rollout::build_train_batch({traj});
  ASSERT_EQ(batch.input_ids.size(0), 1);
  int64_t response_tokens = 0;
  for (const auto& t : traj.turns) response_tokens += static_cast<int64_t>(t.generated_tokens.size());
  EXPECT_EQ(batch.loss_mask.sum().item<double>(), static_cast<double>(response_tokens));
}

}  // namespace
}  // namespace agentrl::train
