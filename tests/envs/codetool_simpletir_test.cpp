// Specification of the code-tool env's SimpleTIR protocol (codetool/
// simpletir.h, `codetool.protocol: simpletir`), on the cases of the original
// (ltzheng/SimpleTIR e7b5b44, recipe/simpletir/agent_utils.py,
// utils/reward_score/hf_math_verify.py, qwen_math_eval_toolkit/parser.py).
// The expected strings are what those Python functions return for the same
// inputs.
#include <gtest/gtest.h>

#include "agentrl/core/regex.h"
#include "agentrl/envs/codetool/codetool_env.h"
#include "agentrl/envs/codetool/simpletir.h"

namespace agentrl::envs::codetool {
namespace {

bool sandbox_ok() { return probe_sandbox(SandboxConfig{}).available; }
#define REQUIRE_SANDBOX() \
  if (!sandbox_ok()) GTEST_SKIP() << "bubblewrap unusable here: " << probe_sandbox(SandboxConfig{}).reason

TEST(SimpleTir, TheFirstCompleteBlockCountsAndItsTagIsOptional) {
  using simpletir::first_code_block;
  EXPECT_EQ(first_code_block("Let me see.\n```\n  x = 1\nprint(x)  \n```"), "x = 1\nprint(x)");  // a bare fence
  EXPECT_EQ(first_code_block("```py\na\n```\n```python\nb\n```"), "a");                        // the first one
  // An unclosed fence after a complete block: the complete block.
  EXPECT_EQ(first_code_block("```python\nprint(1)\n```\nthen ```python\nprint(2)\n"), "print(1)");
  EXPECT_FALSE(first_code_block("```python\nprint(1)\n").has_value());
  EXPECT_FALSE(first_code_block("```bash\nls\n```").has_value());
  EXPECT_FALSE(first_code_block("```python\nprint(1)```").has_value()) << "the closing fence follows a newline";
}

TEST(SimpleTir, AnyBoxedOpeningIsAnAnswerAndVoidTurnsHaveNeither) {
  EXPECT_TRUE(simpletir::has_answer("so \\boxed{12"));  // braces need not close
  EXPECT_FALSE(simpletir::has_answer("\\boxed 12"));
  CodeToolConfig c;
  c.protocol = "simpletir";
  c.builtin_train = c.builtin_test = 2;
  c.sandbox.allow_unsandboxed = true;
  CodeToolSuite suite(c);
  auto env = suite.make_env();
  EXPECT_FALSE(env->is_void_turn("```\nprint(1)\n```", ""));
  EXPECT_FALSE(env->is_void_turn("```python\nprint(1)\n```\n```python\nprint(2", ""));
  EXPECT_FALSE(env->is_void_turn("The answer is \\boxed{4", ""));
  EXPECT_TRUE(env->is_void_turn("The answer is 4.", ""));
  EXPECT_TRUE(env->is_void_turn("```python\nprint(1)", ""));
  EXPECT_TRUE(env->stop_strings().empty());
  EXPECT_EQ(env->stop_regex(), simpletir::kCodeBlockPattern);
}

TEST(SimpleTir, OutputsAreFormattedAndCutAsTheOriginal) {
  ExecResult r;
  r.stdout_text = "42\n";
  EXPECT_EQ(simpletir::execution_output(r), "\nCode execution result: 42\n\n");  // stdout as it is
  r.stderr_text = "Traceback (most recent call last):\n  File \"x\"\nNameError: name 'y' is not defined\n";
  EXPECT_EQ(simpletir::execution_output(r), "\nCode execution result: NameError: name 'y' is not defined\n");
  r.stderr_text = "warning\n\n";  // splitlines()[-1] is the empty last line
  EXPECT_EQ(simpletir::execution_output(r), "\nCode execution result: \n");
  EXPECT_EQ(simpletir::execution_output(ExecResult{}), "");  // a silent block shows nothing
  // 512 characters: the first and last 256 code points around the marker.
  std::string accents;
  for (int i = 0; i < 600; ++i) accents += i < 300 ? "\xc3\xa9" : "b";
  EXPECT_EQ(simpletir::truncate(accents),
            [] {
              std::string head;
              for (int i = 0; i < 256; ++i) head += "\xc3\xa9";
              return head;
            }() + "\n..._This content has been truncated to stay below 512 characters_...\n" + std::string(256, 'b'));
  EXPECT_EQ(simpletir::truncate(std::string(512, 'x')), std::string(512, 'x'));
}

TEST(SimpleTir, AnswersAreExtractedAsTheMathToolkitDoes) {
  using simpletir::extract_answer;
  EXPECT_EQ(extract_answer("so \\boxed{\\frac{1}{2}} and"), "\\frac{1}{2}");
  EXPECT_EQ(extract_answer("\\boxed{1} then \\boxed{ {2}+3 }."), "{2}+3");          // the last one, stripped
  EXPECT_EQ(extract_answer("result \\boxed{12"), "12");                               // unclosed: to the end
  EXPECT_EQ(extract_answer("it is \\boxed 5$ so"), "5");                            // no brace: up to $
  EXPECT_EQ(extract_answer("The final answer is $7$. I hope it is correct."), "7");   // Minerva's phrase
  EXPECT_EQ(extract_answer("So the answer is 42."), "42");
  EXPECT_EQ(extract_answer("x = 3, then 1,234.5 apples"), "1234.5");                // the last number
  EXPECT_EQ(extract_answer("\\boxed{1}<|im_end|>\\boxed{2}"), "1");                  // cut at a stop word
  EXPECT_EQ(extract_answer("nothing here"), "");
  EXPECT_EQ(extract_answer("ends with boxed"), "");
  // Newlines and their indent are removed, then a leading ':' (the spaces are
  // left to the normalisation of the comparison, as strip_string does).
  EXPECT_EQ(extract_answer("the answer is: 3\n  4."), " 34");
}

// A one-problem JSONL file.
std::string problem_file(const std::string& answer) {
  const std::string path = ::testing::TempDir() + "/simpletir_problem.jsonl";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fprintf(f, "{\"problem\": \"What is 6 * 7?\", \"answer\": \"%s\"}\n", answer.c_str());
  std::fclose(f);
  return path;
}

CodeToolConfig simpletir_config(int turns) {
  CodeToolConfig c;
  c.protocol = "simpletir";
  c.max_turns = turns;
  c.train_file = c.test_file = problem_file("42");
  c.instruction = "Question:\n";
  return c;
}

TEST(SimpleTirEnv, AnEpisodeRunsAndIsGradedAsTheOriginal) {
  REQUIRE_SANDBOX();
  CodeToolSuite suite(simpletir_config(3));
  auto env = suite.make_env();
  EXPECT_EQ(env->reset(suite.get("test", 0), 0), "Question:\nWhat is 6 * 7?");
  auto first = env->step("Compute.\n```\nprint(6 * 7)\n```");
  EXPECT_FALSE(first.done);
  EXPECT_EQ(first.observation, "\nCode execution result: 42\n\n");
  // A silent block splices nothing in; before the last turn a "\n" is added
  // to a non-empty output only.
  auto second = env->step("```python\nx = 1\n```");
  EXPECT_EQ(second.observation, "");
  EXPECT_FALSE(second.done);
  // The last turn: its block is not shown, the episode ends and is graded on
  // the whole text: no boxed answer, so the last number (42 from turn 1's
  // output, 7 from this one's code) decides.
  auto last = env->step("Check 6 * 7:\n```python\nprint(6 * 7)\n```");
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.observation, "");
  EXPECT_EQ(last.reward, 0.0) << "the last number of the text is the 7 of `6 * 7`";
}

TEST(SimpleTirEnv, FinalPromptNewlineAndAnswersFromTheOutput) {
  REQUIRE_SANDBOX();
  CodeToolSuite suite(simpletir_config(2));
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  auto first = env->step("```py\nprint('hi')\n```");
  EXPECT_EQ(first.observation, "\nCode execution result: hi\n\n\n");  // the final prompt "\n"
  EXPECT_FALSE(first.done);
  // final_answer() prints \boxed{...}: the output ends the episode and its
  // answer is graded.
  env->reset(suite.get("test", 0), 0);
  auto answered = env->step("```python\nfinal_answer(6 * 7)\n```");
  EXPECT_TRUE(answered.done);
  EXPECT_EQ(answered.reward, 1.0);
  EXPECT_EQ(answered.info.metrics.at("boxed"), 1);
}

TEST(SimpleTirEnv, AVoidTurnEndsTheEpisodeYetIsGraded) {
  REQUIRE_SANDBOX();
  CodeToolSuite suite(simpletir_config(5));
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  auto r = env->step("I think the answer is 42.");
  EXPECT_TRUE(r.done);
  EXPECT_TRUE(r.info.invalid_action);
  EXPECT_EQ(r.info.metrics.at("void_turn"), 1);
  EXPECT_EQ(r.observation, "\n");
  EXPECT_EQ(r.reward, 1.0) << "the toolkit finds 'answer is 42' although the turn is void";
}

TEST(SimpleTirEnv, TheExpertEndsItsTurnAtTheStopRegex) {
  REQUIRE_SANDBOX();
  CodeToolConfig c;
  c.protocol = "simpletir";
  c.builtin_train = c.builtin_test = 3;
  CodeToolSuite suite(c);
  Regex stop(simpletir::kCodeBlockPattern, "test");
  for (size_t i = 0; i < 3; ++i) {
    auto env = suite.make_env();
    env->reset(suite.get("test", i), 0);
    const std::string action = *env->expert_action();
    auto m = stop.search(action);
    ASSERT_TRUE(m) << action;
    EXPECT_EQ(m->end, action.size()) << action;
    auto r = env->step(action);
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.reward, 1.0) << r.observation;
  }
}

}  // namespace
}  // namespace agentrl::envs::codetool
