// Prompt preview (`agentrl env prompt`): the printed text is the decoded
// token sequence the rollout builds, step by step, with its counts.
#include <gtest/gtest.h>

#include <sstream>

#include "agentrl/rollout/prompt_preview.h"
#include "rollout/rollout_test_support.h"

namespace agentrl::rollout {
namespace {

using testing::ByteTokenizer;
using testing::CountingSuite;

std::shared_ptr<AgentContext> make_ctx(const std::string& mode) { return testing::make_byte_agent_context(mode); }

struct Preview {
  PreviewSummary summary;
  Trajectory traj;
  std::string text;
};

Preview run(const std::string& mode, const ScriptedResponses& responses, size_t task = 0, bool whole = false) {
  CountingSuite suite;
  EpisodeSpec spec;
  spec.task = suite.tasks().get("test", task);
  auto ctx = make_ctx(mode);
  EpisodeRunner runner(suite.make_env(), spec, ctx);
  std::ostringstream out;
  PreviewOptions o;
  o.whole_context = whole;
  Preview p;
  p.summary = preview_episode(runner, *ctx->tokenizer, responses, o, out);
  p.traj = runner.take_trajectory();
  p.text = out.str();
  return p;
}

std::string decode(const std::vector<int32_t>& ids) { return ByteTokenizer().decode(ids, false); }

TEST(PromptPreview, FullModePrintsTheFirstPromptThenWhatEachStepAppends) {
  Preview p = run("full", expert_policy(PromptConfig{}));  // task 0 counts to 2
  ASSERT_EQ(p.traj.turns.size(), 2u);
  const auto& t0 = p.traj.turns[0];
  const auto& t1 = p.traj.turns[1];
  const size_t n0 = t0.context_tokens.size();
  const size_t total1 = n0 + t0.generated_tokens.size() + t1.context_tokens.size();
  EXPECT_EQ(p.summary.prompt_tokens, (std::vector<int64_t>{static_cast<int64_t>(n0), static_cast<int64_t>(total1)}));
  // Each section is the decoded tokens, chat specials included.
  const std::string first = "=== step 1: prompt, " + std::to_string(n0) + " tokens ===\n" +
                            decode(t0.context_tokens) + "\n";
  EXPECT_EQ(p.text.find(first), 0u) << p.text;
  EXPECT_NE(decode(t0.context_tokens).find("<|im_start|>user\nTask: count to 2\nObservation: count=0"),
            std::string::npos);
  const std::string second = "=== step 2: appended " + std::to_string(t1.context_tokens.size()) + " tokens, context " +
                             std::to_string(total1) + " tokens ===\n" + decode(t1.context_tokens) + "\n";
  EXPECT_NE(p.text.find(second), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("--- response, " + std::to_string(t0.generated_tokens.size()) + " tokens ---\n" +
                        decode(t0.generated_tokens) + "\n"),
            std::string::npos);
  EXPECT_NE(p.text.find("--- env: action \"inc\", reward 0 ---"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("=== episode over: success=1 steps=2 reward=1 ==="), std::string::npos) << p.text;
  EXPECT_TRUE(p.summary.success);
  EXPECT_FALSE(p.summary.out_of_responses);
}

TEST(PromptPreview, WholeContextAndWindowModePrintEveryPromptWhole) {
  Preview full = run("full", expert_policy(PromptConfig{}), 0, /*whole=*/true);
  ASSERT_EQ(full.traj.turns.size(), 2u);
  std::vector<int32_t> ctx2 = full.traj.turns[0].context_tokens;
  ctx2.insert(ctx2.end(), full.traj.turns[0].generated_tokens.begin(), full.traj.turns[0].generated_tokens.end());
  ctx2.insert(ctx2.end(), full.traj.turns[1].context_tokens.begin(), full.traj.turns[1].context_tokens.end());
  EXPECT_NE(full.text.find("=== step 2: prompt, " + std::to_string(ctx2.size()) + " tokens ===\n" + decode(ctx2)),
            std::string::npos)
      << full.text;

  Preview win = run("window", expert_policy(PromptConfig{}));
  ASSERT_EQ(win.traj.turns.size(), 2u);
  const auto& c1 = win.traj.turns[1].context_tokens;
  EXPECT_NE(win.text.find("=== step 2: prompt, " + std::to_string(c1.size()) + " tokens ===\n" + decode(c1)),
            std::string::npos)
      << win.text;
  EXPECT_EQ(win.summary.prompt_tokens[1], static_cast<int64_t>(c1.size()));
}

TEST(PromptPreview, ScriptedResponsesShowInvalidActionsAndRunningOut) {
  std::vector<std::string> script = {"<action>dec</action>", "<action>inc</action>"};
  size_t next = 0;
  Preview p = run("full", [&](envs::Env&) -> std::optional<std::string> {
    if (next >= script.size()) return std::nullopt;
    return script[next++];
  });
  EXPECT_EQ(p.summary.steps, 2);
  EXPECT_TRUE(p.summary.out_of_responses);
  EXPECT_FALSE(p.summary.success);
  EXPECT_NE(p.text.find("--- env: action \"dec\", reward 0, invalid ---"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("(no more responses: the episode stops here)"), std::string::npos);
  EXPECT_NE(p.text.find("=== episode over: success=0 steps=2 reward=0 ==="), std::string::npos) << p.text;
}

TEST(PromptPreview, SplitResponsesOnePerLineOrEndedByDotLines) {
  EXPECT_EQ(split_responses("a\n\n b \r\nc"), (std::vector<std::string>{"a", " b ", "c"}));
  EXPECT_EQ(split_responses("Let me compute.\n```python\nprint(1)\n```\n.\n\n<answer>1</answer>\n.\n"),
            (std::vector<std::string>{"Let me compute.\n```python\nprint(1)\n```", "<answer>1</answer>"}));
  // The last response needs no closing "." line; empty responses are dropped.
  EXPECT_EQ(split_responses(".\nx\ny\n.\n.\nz"), (std::vector<std::string>{"x\ny", "z"}));
  EXPECT_TRUE(split_responses("\n\n").empty());
}

}  // namespace
}  // namespace agentrl::rollout
