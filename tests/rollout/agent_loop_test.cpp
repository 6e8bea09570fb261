// Specification of the agent loop and rollout pool: token-exact
// trajectories, both context modes, failure isolation, determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "agentrl/rollout/agent_loop.h"
#include "agentrl/core/error.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/rollout/demos.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/rollout/rollout_pool.h"
#include "rollout/rollout_test_support.h"

namespace agentrl::rollout {
namespace {

using testing::ByteTokenizer;
using testing::CountingEnv;
using testing::CountingSuite;
using testing::ScriptedGenerator;

std::shared_ptr<AgentContext> make_ctx(const std::string& mode) { return testing::make_byte_agent_context(mode); }

std::vector<EpisodeSpec> specs(int tasks, int group) {
  CountingSuite suite;
  std::vector<envs::Task> t;
  for (int i = 0; i < tasks; ++i) t.push_back(suite.tasks().get("train", static_cast<size_t>(i)));
  return make_group_episodes(t, group, 7, 1);
}

TEST(AgentLoop, FullModeTrajectoryTokensAreExactlyWhatTheGeneratorSawAndProduced) {
  auto ctx = make_ctx("full");
  auto suite = std::make_shared<CountingSuite>();
  ScriptedGenerator gen;
  RolloutPool pool(gen, suite, ctx);
  auto trajs = pool.run(specs(1, 1));
  ASSERT_EQ(trajs.size(), 1u);
  const Trajectory& t = trajs[0];
  ASSERT_FALSE(t.failed) << t.error;
  ASSERT_EQ(t.turns.size(), 2u);  // task 0 counts to 2
  ASSERT_EQ(gen.requests.size(), 2u);
  // Request k's prompt is the concatenation of every turn's context and
  // generated tokens before it, plus turn k's context.
  std::vector<int32_t> expect;
  for (size_t k = 0; k < t.turns.size(); ++k) {
    expect.insert(expect.end(), t.turns[k].context_tokens.begin(), t.turns[k].context_tokens.end());
    EXPECT_EQ(gen.requests[k].prompt, expect) << "turn " << k;
    expect.insert(expect.end(), t.turns[k].generated_tokens.begin(), t.turns[k].generated_tokens.end());
  }
  EXPECT_EQ(sequence_tokens(t), expect);
  // The second turn's context starts right after the generated <|im_end|>:
  // "\n" then the user message of the chat template.
  const auto& ctx1 = t.turns[1].context_tokens;
  ASSERT_GE(ctx1.size(), 2u);
  EXPECT_EQ(ctx1[0], '\n');
  EXPECT_EQ(ctx1[1], ByteTokenizer::kImStart);
  EXPECT_TRUE(t.success);
  EXPECT_DOUBLE_EQ(t.reward, 1.0);
}

TEST(AgentLoop, InlineModeSplicesTheObservationIntoTheAssistantMessage) {
  auto ctx = make_ctx("inline");
  ctx->prompt.inline_observation = "\n<obs>{observation}</obs>\n";
  auto suite = std::make_shared<CountingSuite>();
  ScriptedGenerator gen;  // every response ends with <|im_end|>
  RolloutPool pool(gen, suite, ctx);
  auto trajs = pool.run(specs(1, 1));
  ASSERT_EQ(trajs.size(), 1u);
  const Trajectory& t = trajs[0];
  ASSERT_FALSE(t.failed) << t.error;
  ASSERT_EQ(t.turns.size(), 2u);
  EXPECT_EQ(t.context_mode, ContextMode::kInline);
  ByteTokenizer tok;
  const std::string response = "<think>go</think><action>inc</action>";
  // One sequence: the chat prompt, then the whole episode as one assistant
  // message: the first response without its <|im_end|> (the episode goes
  // on), the spliced observation, the last response with it.
  const std::string text = tok.decode(sequence_tokens(t), false);
  const std::string prompt = tok.decode(gen.requests[0].prompt, false);
  EXPECT_EQ(text, prompt + response + "\n<obs>count=1</obs>\n" + response + "<|im_end|>");
  EXPECT_EQ(tok.decode(gen.requests[1].prompt, false), prompt + response + "\n<obs>count=1</obs>\n");
  EXPECT_EQ(t.turns[0].generated_tokens.size(), response.size());
  EXPECT_EQ(t.turns[0].logprobs.size(), response.size());
  EXPECT_EQ(t.turns[1].generated_tokens.size(), response.size() + 1);
  EXPECT_EQ(t.turns[1].user_message, "\n<obs>count=1</obs>\n");
  // Loss only on the model's own tokens: the spliced text is masked.
  auto batch = build_train_batch(trajs);
  ASSERT_EQ(batch.rows(), 1);
  EXPECT_EQ(batch.loss_mask[0].sum().item<float>(), static_cast<float>(2 * response.size() + 1));
}

TEST(AgentLoop, InlineObservationsAreCutToTheTokenBudgetWithoutAMarker) {
  auto ctx = make_ctx("inline");
  ctx->prompt.inline_observation = "[{observation}] and more text after it";
  ctx->rollout.observation_token_budget = 9;
  auto suite = std::make_shared<CountingSuite>();
  ScriptedGenerator gen;
  RolloutPool pool(gen, suite, ctx);
  auto trajs = pool.run(specs(1, 1));
  ASSERT_EQ(trajs[0].turns.size(), 2u);
  const Turn& second = trajs[0].turns[1];
  ByteTokenizer tok;
  EXPECT_EQ(tok.decode(second.context_tokens, false), "[count=1]");
  EXPECT_EQ(second.user_message, "[count=1]");
}

TEST(AgentLoop, InlineExpertDemoEndsAtTheStopStringLikeTheEngine) {
  struct StopEnv : CountingEnv {
    std::vector<std::string> stop_strings() const override { return {"</action>"}; }
  };
  auto spec = specs(1, 1)[0];
  EpisodeRunner inline_runner(std::make_unique<StopEnv>(), spec, make_ctx("inline"));
  EpisodeRunner full_runner(std::make_unique<StopEnv>(), spec, make_ctx("full"));
  ByteTokenizer tok;
  // Ends at the env's stop string: no end token in inline mode (the engine
  // stops there), the template's end token in full mode (as before).
  auto r = inline_runner.scripted_result("<action>inc</action>");
  EXPECT_EQ(tok.decode(r.tokens, false), "<action>inc</action>");
  EXPECT_EQ(r.finish_reason, FinishReason::kStopString);
  EXPECT_EQ(r.logprobs.size(), r.tokens.size());
  EXPECT_EQ(full_runner.scripted_result("<action>inc</action>").tokens.back(), ByteTokenizer::kImEnd);
  // A final text without a stop string keeps the end token in both modes.
  EXPECT_EQ(inline_runner.scripted_result("done").tokens.back(), ByteTokenizer::kImEnd);
  // Inline demos have no chat-conversation form that masks the tool output.
  Trajectory t;
  t.context_mode = ContextMode::kInline;
  EXPECT_THROW(trajectory_to_conversations(t, PromptConfig{}), UsageError);
}

TEST(AgentLoop, LossMaskIsOneExactlyOnGeneratedTokensWithTheirLogprobs) {
  auto ctx = make_ctx("full");
  ScriptedGenerator gen;
  RolloutPool pool(gen, std::make_shared<CountingSuite>(), ctx);
  auto trajs = pool.run(specs(2, 2));
  auto batch = build_train_batch(trajs);
  ASSERT_EQ(batch.rows(), 4);
  for (int64_t n = 0; n < batch.rows(); ++n) {
    const Trajectory& t = trajs[static_cast<size_t>(batch.trajectory_of_row[static_cast<size_t>(n)])];
    int64_t pos = 0;
    for (size_t k = 0; k < t.turns.size(); ++k) {
      for (size_t j = 0; j < t.turns[k].context_tokens.size(); ++j, ++pos) {
        EXPECT_EQ(batch.loss_mask[n][pos].item<float>(), 0.f);
        EXPECT_EQ(batch.turn_index[n][pos].item<int64_t>(), -1);
      }
      for (size_t j = 0; j < t.turns[k].generated_tokens.size(); ++j, ++pos) {
        EXPECT_EQ(batch.input_ids[n][pos].item<int64_t>(), t.turns[k].generated_tokens[j]);
        EXPECT_EQ(batch.loss_mask[n][pos].item<float>(), 1.f);
        EXPECT_FLOAT_EQ(batch.behaviour_logprobs[n][pos].item<float>(), t.turns[k].logprobs[j]);
        EXPECT_EQ(batch.turn_index[n][pos].item<int64_t>(), static_cast<int64_t>(k));
      }
    }
    // Padding after the sequence: no attention, no loss.
    for (; pos < batch.input_ids.size(1); ++pos) {
      EXPECT_FALSE(batch.attention_mask[n][pos].item<bool>());
      EXPECT_EQ(batch.loss_mask[n][pos].item<float>(), 0.f);
    }
  }
}

TEST(AgentLoop, WindowModeMakesOneRowPerStepWhosePromptIsThatRequest) {
  auto ctx = make_ctx("window");
  ctx->rollout.window_turns = 1;
  ScriptedGenerator gen;
  RolloutPool pool(gen, std::make_shared<CountingSuite>(), ctx);
  auto trajs = pool.run(specs(1, 1));
  ASSERT_EQ(trajs[0].turns.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(gen.requests[k].prompt, trajs[0].turns[k].context_tokens);
  // The second prompt shows the first step as history.
  EXPECT_NE(trajs[0].turns[1].user_message.find("Action: inc"), std::string::npos);
  auto batch = build_train_batch(trajs);
  EXPECT_EQ(batch.rows(), 2);
  EXPECT_EQ(batch.turn_of_row, (std::vector<int64_t>{0, 1}));
}

TEST(AgentLoop, WindowAndFullModeTakeTheSameActionsForTheSameSeeds) {
  std::vector<std::vector<std::string>> actions[2];
  int m = 0;
  for (const char* mode : {"full", "window"}) {
    ScriptedGenerator gen;
    RolloutPool pool(gen, std::make_shared<CountingSuite>(), make_ctx(mode));
    for (const auto& t : pool.run(specs(3, 2))) {
      std::vector<std::string> a;
      for (const auto& turn : t.turns) a.push_back(turn.action);
      actions[m].push_back(a);
    }
    ++m;
  }
  EXPECT_EQ(actions[0], actions[1]);
}

TEST(AgentLoop, UnparseableResponseIsAnInvalidTurnWithPenalty) {
  auto ctx = make_ctx("full");
  ctx->rollout.invalid_action_penalty = 0.1;
  ctx->rollout.max_turns = 3;
  ScriptedGenerator gen("I will not use tags");
  RolloutPool pool(gen, std::make_shared<CountingSuite>(), ctx);
  auto t = pool.run(specs(1, 1))[0];
  ASSERT_EQ(t.turns.size(), 3u);
  for (const auto& turn : t.turns) {
    EXPECT_TRUE(turn.invalid_action);
    EXPECT_DOUBLE_EQ(turn.reward, -0.1);
  }
  EXPECT_TRUE(t.truncated);
  EXPECT_FALSE(t.success);
}

TEST(AgentLoop, VerlAgentProjectionPenalisesFormatOnlyAndScalesTheReward) {
  // verl-agent: a response without <think> is a format error (penalised) even
  // when its action is fine; an action the env rejects is not penalised under
  // invalid_penalty_on: format; the win pays reward_scale.
  auto ctx = make_ctx("full");
  ctx->rollout.projection = "verl-agent";
  ctx->rollout.invalid_penalty_on = "format";
  ctx->rollout.invalid_action_penalty = 0.1;
  ctx->rollout.reward_scale = 10.0;
  CountingSuite suite;
  EpisodeSpec spec;
  spec.task = suite.tasks().get("train", 0);  // counts to 2
  EpisodeRunner runner(suite.make_env(), spec, ctx);
  const std::vector<std::string> script = {"<action>INC</action>", "<think>t</think><action>dec</action>",
                                           "<think>t</think><action>Inc</action>"};
  size_t next = 0;
  auto t = run_scripted_episode(runner, [&](envs::Env&) -> std::optional<std::string> {
    if (next >= script.size()) return std::nullopt;
    return script[next++];
  });
  ASSERT_EQ(t.turns.size(), 3u);
  EXPECT_EQ(t.turns[0].action, "inc");  // lower-cased, applied although the format is invalid
  EXPECT_TRUE(t.turns[0].invalid_action);
  EXPECT_DOUBLE_EQ(t.turns[0].reward, -0.1);
  EXPECT_TRUE(t.turns[1].invalid_action);  // the env rejects "dec": not a format error
  EXPECT_DOUBLE_EQ(t.turns[1].reward, 0.0);
  EXPECT_FALSE(t.turns[2].invalid_action);
  EXPECT_DOUBLE_EQ(t.turns[2].reward, 10.0);
  EXPECT_TRUE(t.success);
  EXPECT_DOUBLE_EQ(t.reward, 9.9);
}

TEST(AgentLoop, WindowTemplatesFillHistoryAndAdmissibleFormatsInOnePass) {
  auto ctx = make_ctx("window");
  ctx->prompt.system = "";
  ctx->prompt.window_first_user = "first {observation} [{admissible_actions}]";
  ctx->prompt.window_user = "{prev_steps}/{history_length}: {history} | now {observation} {unknown}";
  ctx->prompt.history_entry = "<{n}:{observation}->{action}>";
  ctx->prompt.history_separator = ";";
  ctx->prompt.admissible_item = "'{action}'";
  ctx->prompt.admissible_separator = " / ";
  ctx->rollout.window_turns = 2;
  CountingSuite suite;
  EpisodeSpec spec;
  spec.task = suite.tasks().get("train", 2);  // counts to 4
  EpisodeRunner runner(suite.make_env(), spec, ctx);
  auto t = run_scripted_episode(runner, [](envs::Env&) -> std::optional<std::string> {
    return std::string("<action>inc</action>");
  });
  ASSERT_EQ(t.turns.size(), 4u);
  EXPECT_EQ(t.turns[0].user_message, "first count=0 ['inc']");
  EXPECT_EQ(t.turns[1].user_message, "1/1: <1:count=0->inc> | now count=1 {unknown}");
  EXPECT_EQ(t.turns[3].user_message, "3/2: <2:count=1->inc>;<3:count=2->inc> | now count=3 {unknown}");
}

// A random policy (real engine) in choice mode writes only the responses of
// the shown admissible actions, so it wins the counting task without an
// invalid turn; unconstrained, the same policy does not.
Trajectory engine_episode(bool constrain, std::vector<GenerationRequest>* requests) {
  auto ctx = make_ctx("window");
  ctx->prompt.expert_response = "<action>{action}</action>";
  ctx->constrain_actions = constrain;
  ctx->sampling.temperature = 1.0;
  ctx->rollout.max_new_tokens = 40;
  auto policy = testing::tiny_byte_policy(32, 64, /*seed=*/3, /*std=*/0.3);
  EngineOptions o;
  o.max_seq_len = 1024;
  o.kv_budget_tokens = 4096;
  GenerationEngine engine(policy, ctx->tokenizer, o, ctx->chat->stop_token_ids());
  CountingSuite suite;
  EpisodeSpec spec;
  spec.task = suite.tasks().get("train", 1);  // counts to 3
  spec.sample_seed = 9;
  EpisodeRunner runner(suite.make_env(), spec, ctx);
  auto req = runner.start();
  while (req) {
    requests->push_back(*req);
    req = runner.on_generation(engine.submit(*req).get());
  }
  return runner.take_trajectory();
}

TEST(AgentLoop, ChoiceModeDecodesOnlyTheAdmissibleResponses) {
  std::vector<GenerationRequest> requests;
  auto t = engine_episode(/*constrain=*/true, &requests);
  EXPECT_TRUE(t.success);
  ASSERT_EQ(t.turns.size(), 3u);
  for (const auto& turn : t.turns) EXPECT_EQ(turn.response, "<action>inc</action>");
  for (const auto& r : requests) EXPECT_EQ(r.allowed_texts, std::vector<std::string>{"<action>inc</action>"});
  requests.clear();
  auto free = engine_episode(/*constrain=*/false, &requests);
  EXPECT_FALSE(free.success) << "the random policy should not win by itself";
  for (const auto& r : requests) EXPECT_TRUE(r.allowed_texts.empty());
}

// The engine's allowed_tokens travel with each turn into the train batch, at
// the columns of the tokens they constrained (all under the loss mask); a
// free rollout's batch has none, and a token outside its set is refused.
TEST(AgentLoop, ChoiceModeTurnsCarryTheirAllowedTokensIntoTheTrainBatch) {
  std::vector<GenerationRequest> requests;
  auto t = engine_episode(/*constrain=*/true, &requests);
  ASSERT_EQ(t.turns.size(), 3u);
  for (const auto& turn : t.turns) {
    ASSERT_EQ(turn.allowed_tokens.size(), turn.generated_tokens.size());
    // One admissible response: one choice per byte, then the end tokens.
    for (size_t k = 0; k + 1 < turn.generated_tokens.size(); ++k)
      EXPECT_EQ(turn.allowed_tokens[k], std::vector<int32_t>{turn.generated_tokens[k]}) << k;
    const auto& last = turn.allowed_tokens.back();
    EXPECT_TRUE(std::binary_search(last.begin(), last.end(), turn.generated_tokens.back()));
    for (int32_t id : last) EXPECT_GE(id, ByteTokenizer::kImStart) << "only end tokens once the text is complete";
  }
  auto batch = build_train_batch({t});
  ASSERT_EQ(batch.rows(), 3);  // window mode: a row per turn
  ASSERT_EQ(batch.allowed_tokens.size(), 3u);
  auto lm = batch.loss_mask.accessor<float, 2>();
  auto ids = batch.input_ids.accessor<int64_t, 2>();
  for (int64_t r = 0; r < 3; ++r) {
    const auto& turn = t.turns[static_cast<size_t>(r)];
    ASSERT_EQ(batch.allowed_tokens[static_cast<size_t>(r)].size(), turn.generated_tokens.size());
    const int64_t first = static_cast<int64_t>(turn.context_tokens.size());
    for (const auto& [c, allowed] : batch.allowed_tokens[static_cast<size_t>(r)]) {
      EXPECT_GE(c, first);
      EXPECT_EQ(lm[r][c], 1.f) << "row " << r << " column " << c;
      EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), static_cast<int32_t>(ids[r][c])));
    }
  }
  auto sub = select_rows(batch, {2, 0});
  ASSERT_EQ(sub.allowed_tokens.size(), 2u);
  EXPECT_EQ(sub.allowed_tokens[0], batch.allowed_tokens[2]);
  requests.clear();
  EXPECT_TRUE(build_train_batch({engine_episode(/*constrain=*/false, &requests)}).allowed_tokens.empty());
  auto refused = [](const Trajectory& bad, const std::string& needle) {
    try {
      build_train_batch({bad});
      ADD_FAILURE() << "expected an error containing " << needle;
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto outside = t;
  outside.turns[1].allowed_tokens[0] = {outside.turns[1].generated_tokens[0] + 1};
  refused(outside, "is not among the tokens its step allowed");
  auto short_sets = t;
  short_sets.turns[1].allowed_tokens.pop_back();
  refused(short_sets, "allowed-token sets for");
}

TEST(AgentLoop, ChoiceModeLeavesOutTheExcludedActions) {
  auto ctx = make_ctx("window");
  ctx->prompt.expert_response = "<action>{action}</action>";
  ctx->prompt.admissible_exclude = {"inc"};
  ctx->constrain_actions = true;
  CountingSuite suite;
  EpisodeSpec spec;
  spec.task = suite.tasks().get("train", 0);
  EpisodeRunner runner(suite.make_env(), spec, ctx);
  auto req = runner.start();
  ASSERT_TRUE(req);
  EXPECT_TRUE(req->allowed_texts.empty());
}

TEST(RolloutPool, ThrowingEnvFailsOnlyItsEpisode) {
  for (bool deterministic : {true, false}) {
    auto ctx = make_ctx("full");
    ctx->rollout.deterministic = deterministic;
    ScriptedGenerator gen;
    RolloutPool pool(gen, std::make_shared<CountingSuite>(CountingEnv::Fault::kThrowOnStep, 1), ctx);
    RolloutStats st;
    auto trajs = pool.run(specs(3, 2), &st);
    ASSERT_EQ(trajs.size(), 6u);
    for (size_t i = 0; i < trajs.size(); ++i) {
      const bool faulty = i == 2 || i == 3;  // the two samples of task 1
      EXPECT_EQ(trajs[i].failed, faulty) << i;
      if (faulty) EXPECT_NE(trajs[i].error.find("simulated env crash"), std::string::npos) << trajs[i].error;
      else EXPECT_TRUE(trajs[i].success) << i;
    }
    EXPECT_EQ(st.failed, 2);
  }
}

TEST(RolloutPool, HangingEnvTimesOutWithoutBlockingTheOthers) {
  for (bool deterministic : {true, false}) {
    auto ctx = make_ctx("full");
    ctx->rollout.deterministic = deterministic;
    ctx->rollout.episode_timeout_s = 0.5;
    ScriptedGenerator gen;
    RolloutPool pool(gen, std::make_shared<CountingSuite>(CountingEnv::Fault::kHangOnStep, 0), ctx);
    RolloutStats st;
    auto t0 = std::chrono::steady_clock::now();
    auto trajs = pool.run(specs(2, 2), &st);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(s, 2.5) << "the 3 s hang must not be waited for";
    for (size_t i = 0; i < trajs.size(); ++i) {
      const bool hung = i < 2;  // both samples of task 0
      EXPECT_EQ(trajs[i].failed, hung) << i << (deterministic ? " lock-step" : " threaded");
      if (hung) {
        EXPECT_NE(trajs[i].error.find("timeout"), std::string::npos) << trajs[i].error;
      }
    }
    EXPECT_EQ(st.timed_out, 2);
  }
}

TEST(RolloutPool, SameSeedsGiveIdenticalTrajectories) {
  auto run = [] {
    ScriptedGenerator gen;
    RolloutPool pool(gen, std::make_shared<CountingSuite>(), make_ctx("full"));
    std::vector<std::vector<int32_t>> seqs;
    for (const auto& t : pool.run(specs(3, 3))) seqs.push_back(sequence_tokens(t));
    std::vector<uint64_t> seeds;
    for (const auto& r : gen.requests) seeds.push_back(r.sampling.seed);
    return std::make_pair(seqs, seeds);
  };
  auto a = run(), b = run();
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
}

// A generator that can cache only `cap` sequences; records the lock-step
// batches and the releases, in the order they happened.
class CappedGenerator : public ScriptedGenerator {
 public:
  explicit CappedGenerator(int64_t cap) : cap_(cap) {}
  int64_t max_sequences() const override { return cap_; }
  std::vector<GenerationResult> generate_batch(std::vector<GenerationRequest> batch) override {
    events.push_back("batch " + std::to_string(batch.size()));
    batch_sizes.push_back(static_cast<int64_t>(batch.size()));
    return Generator::generate_batch(std::move(batch));
  }
  void release(const std::string& key) override { events.push_back("release " + key); }
  std::vector<int64_t> batch_sizes;
  std::vector<std::string> events;

 private:
  int64_t cap_;
};

TEST(RolloutPool, LockStepKeepsAtMostTheGeneratorsCapacityInFlight) {
  auto run = [](int64_t cap, CappedGenerator& gen) {
    RolloutPool pool(gen, std::make_shared<CountingSuite>(), make_ctx("full"));
    std::vector<std::vector<int32_t>> seqs;
    for (const auto& t : pool.run(specs(5, 2))) {  // 10 episodes of 2-4 turns
      EXPECT_TRUE(t.success) << t.episode_id << " cap " << cap;
      seqs.push_back(sequence_tokens(t));
    }
    return seqs;
  };
  CappedGenerator unlimited(0), capped(3);
  const auto all_at_once = run(0, unlimited);
  const auto three_at_a_time = run(3, capped);
  EXPECT_EQ(three_at_a_time, all_at_once) << "admission order must not change what an episode does";
  EXPECT_EQ(*std::max_element(unlimited.batch_sizes.begin(), unlimited.batch_sizes.end()), 10);
  EXPECT_EQ(*std::max_element(capped.batch_sizes.begin(), capped.batch_sizes.end()), 3);
  // Finished episodes are replaced right away: every batch but the last few is full.
  int64_t turns = 0;
  for (int64_t b : capped.batch_sizes) turns += b;
  EXPECT_EQ(turns, static_cast<int64_t>(capped.requests.size()));
  EXPECT_LE(capped.batch_sizes.size(), static_cast<size_t>(turns / 3 + 4));
  // A group's cached state is released when its last episode ends, while
  // later episodes are still running (not only at the end of the rollout).
  const auto first_release = std::find_if(capped.events.begin(), capped.events.end(),
                                          [](const std::string& e) { return e.rfind("release", 0) == 0; });
  ASSERT_NE(first_release, capped.events.end());
  EXPECT_NE(std::find(first_release, capped.events.end(), "batch 3"), capped.events.end());
}

TEST(RolloutPool, GroupSamplesShareEnvSeedButNotSampleSeed) {
  auto s = specs(2, 3);
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0].env_seed, s[1].env_seed);
  EXPECT_EQ(s[0].cache_key, s[2].cache_key);
  EXPECT_NE(s[0].env_seed, s[3].env_seed);
  std::set<uint64_t> sample_seeds;
  for (const auto& e : s) sample_seeds.insert(e.sample_seed);
  EXPECT_EQ(sample_seeds.size(), 6u);
}

TEST(AgentLoop, ContextLimitEndsTheEpisodeTruncated) {
  auto ctx = make_ctx("full");
  ScriptedGenerator gen;
  // Enough room for the first prompt + one response, not for a second turn.
  EpisodeRunner probe(std::make_unique<CountingEnv>(), specs(1, 1)[0], ctx);
  auto first = probe.start();
  ctx->rollout.max_context_tokens = static_cast<int64_t>(first->prompt.size()) + 60;
  RolloutPool pool(gen, std::make_shared<CountingSuite>(), ctx);
  auto t = pool.run(specs(1, 1))[0];
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.turns.size(), 1u);
  EXPECT_LE(static_cast<int64_t>(sequence_tokens(t).size()), ctx->rollout.max_context_tokens);
}

}  // namespace
}  // namespace agentrl::rollout
