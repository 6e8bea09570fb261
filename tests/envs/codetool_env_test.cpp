// Specification of the code-tool env: parsing, output formats, episode
// termination, modes, built-in problems + expert, JSONL loading.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "agentrl/core/error.h"
#include "agentrl/envs/codetool/codetool_env.h"
#include "agentrl/envs/registry.h"

namespace agentrl::envs::codetool {
namespace {

CodeToolConfig small_config() {
  CodeToolConfig c;
  c.builtin_train = 12;
  c.builtin_test = 12;
  return c;
}

bool sandbox_ok() { return probe_sandbox(SandboxConfig{}).available; }
#define REQUIRE_SANDBOX() \
  if (!sandbox_ok()) GTEST_SKIP() << "bubblewrap unusable here: " << probe_sandbox(SandboxConfig{}).reason

std::string code(const std::string& body) { return "Let me compute.\n```python\n" + body + "\n```\n"; }

TEST(CodetoolEnv, LastCodeBlockFindsTheLastClosedPythonFence) {
  EXPECT_EQ(last_code_block("a\n```python\nprint(1)\n```\nb\n```python\nprint(2)\n```\n"), "print(2)\n");
  EXPECT_EQ(last_code_block("```py\nx = 1\n```"), "x = 1\n");
}

TEST(CodetoolEnv, LastCodeBlockRejectsUnclosedAndOtherLanguages) {
  EXPECT_FALSE(last_code_block("```python\nprint(1)\n").has_value());
  EXPECT_FALSE(last_code_block("```bash\nls\n```\n").has_value());
  EXPECT_FALSE(last_code_block("no code at all").has_value());
}

TEST(CodetoolEnv, StopStringDoesNotMatchTheOpeningFence) {
  CodeToolSuite suite(small_config());
  auto env = suite.make_env();
  ASSERT_EQ(env->stop_strings(), std::vector<std::string>{"```\n"});
  EXPECT_EQ(std::string("```python\nprint(1)\n").find("```\n"), std::string::npos);
  EXPECT_NE(std::string("```python\nprint(1)\n```\n").find("```\n"), std::string::npos);
}

TEST(CodetoolEnv, TruncationKeepsFirstAndLast256Characters) {
  std::string text = std::string(300, 'a') + std::string(300, 'b');
  std::string t = truncate_output(text, 512);
  // Head: the first 256 characters (all 'a'); tail: the last 256 (all 'b').
  EXPECT_EQ(t, std::string(256, 'a') + "\n...(truncated)...\n" + std::string(256, 'b'));
  EXPECT_EQ(truncate_output("short", 512), "short");
}

TEST(CodetoolEnv, SimpleTirFormatShowsStdout) {
  REQUIRE_SANDBOX();
  CodeToolSuite suite(small_config());
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 1);
  StepResult r = env->step(code("print(2 + 3)"));
  EXPECT_EQ(r.observation, "\nCode execution result: 5\n");
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.reward, 0.0);
}

TEST(CodetoolEnv, ErrorShowsLastLineOfStderr) {
  REQUIRE_SANDBOX();
  CodeToolSuite suite(small_config());
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 1);
  StepResult r = env->step(code("print(undefined_name)"));
  EXPECT_EQ(r.observation, "\nCode execution result: NameError: name 'undefined_name' is not defined\n");
  EXPECT_EQ(r.info.metrics.at("exec_errors"), 1);
}

TEST(CodetoolEnv, TorlAndRetoolFormats) {
  REQUIRE_SANDBOX();
  CodeToolConfig c = small_config();
  c.output_format = "torl";
  CodeToolSuite torl(c);
  auto env = torl.make_env();
  env->reset(torl.get("test", 0), 1);
  EXPECT_EQ(env->step(code("print('hi')")).observation, "\n```output\nhi\n```\n");
  c.output_format = "retool";
  CodeToolSuite retool(c);
  auto env2 = retool.make_env();
  env2->reset(retool.get("test", 0), 1);
  EXPECT_EQ(env2->step(code("print('hi')")).observation, "<interpreter>\nhi\n</interpreter>\n");
}

TEST(CodetoolEnv, StatefulModeKeepsVariablesStatelessDoesNot) {
  REQUIRE_SANDBOX();
  CodeToolConfig c = small_config();
  c.mode = "stateful";
  CodeToolSuite stateful(c);
  auto env = stateful.make_env();
  env->reset(stateful.get("test", 0), 1);
  env->step(code("a = 41"));
  EXPECT_EQ(env->step(code("print(a + 1)")).observation, "\nCode execution result: 42\n");
  CodeToolSuite stateless(small_config());
  auto env2 = stateless.make_env();
  env2->reset(stateless.get("test", 0), 1);
  env2->step(code("a = 41"));
  EXPECT_EQ(env2->step(code("print(a + 1)")).observation,
            "\nCode execution result: NameError: name 'a' is not defined\n");
}

TEST(CodetoolEnv, VoidTurnEndsTheEpisodeWithoutReward) {
  CodeToolSuite suite(small_config());
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 1);
  const std::string response = "I think about it but write no code.";
  EXPECT_TRUE(env->is_void_turn(response, ""));
  StepResult r = env->step(response);
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.reward, 0.0);
  EXPECT_EQ(r.info.metrics.at("void_turn"), 1);
  EXPECT_FALSE(env->is_void_turn(code("print(1)"), ""));
  EXPECT_FALSE(env->is_void_turn("so \\boxed{3}", ""));
  EXPECT_FALSE(env->is_void_turn("```python\nfinal_answer(3)\n", "\\boxed{3}"));
}

// SimpleTIR's void turn (arXiv 2509.02479 sec. 3.3), through the predicate the
// agent loop calls (Env::is_void_turn) on crafted responses.
class CodetoolVoidTurn : public ::testing::Test {
 protected:
  CodeToolSuite suite{small_config()};
  std::unique_ptr<Env> env = suite.make_env();
};

TEST_F(CodetoolVoidTurn, ClosedPythonFenceIsNotVoidUnclosedIs) {
  EXPECT_FALSE(env->is_void_turn("Let me compute.\n```python\nprint(6*7)\n```\n", ""));
  EXPECT_TRUE(env->is_void_turn("Let me compute.\n```python\nprint(6*7)\n", ""));
  EXPECT_TRUE(env->is_void_turn("```python", ""));  // EOS right after the opening fence
}

TEST_F(CodetoolVoidTurn, EarlyEosOrRepetitionWithoutCodeIsVoid) {
  EXPECT_TRUE(env->is_void_turn("First, we note that the sum", ""));
  std::string text;
  for (int i = 0; i < 200; ++i) text += "we need to check again. ";
  EXPECT_TRUE(env->is_void_turn(text, ""));
}

TEST_F(CodetoolVoidTurn, ClosedAnswerInResponseOrOutputIsNotVoidUnclosedIs) {
  EXPECT_FALSE(env->is_void_turn("So the answer is \\boxed{42}.", ""));
  EXPECT_FALSE(env->is_void_turn("The result is printed above.", "\\boxed{\\frac{1}{2}}\n"));
  EXPECT_TRUE(env->is_void_turn("The answer is \\boxed{\\frac{1}{2}", ""));
}

TEST_F(CodetoolVoidTurn, FenceOfAnotherLanguageIsVoid) {
  EXPECT_TRUE(env->is_void_turn("```bash\nls\n```\n", ""));
  EXPECT_TRUE(env->is_void_turn("```pyproject\nx = 1\n```\n", ""));
}

TEST_F(CodetoolVoidTurn, AnswerCutOffByTheLengthLimitEndsTheEpisodeAsAVoidTurn) {
  env->reset(suite.get("test", 0), 1);
  StepResult r = env->step("The answer is \\boxed{\\frac{1}{2}");
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.reward, 0.0);
  EXPECT_EQ(r.info.metrics.at("void_turn"), 1);
}

TEST(CodetoolEnv, BoxedAnswerInResponseIsGraded) {
  CodeToolSuite suite(small_config());
  auto env = suite.make_env();
  Task task = suite.get("test", 0);
  env->reset(task, 1);
  StepResult right = env->step("The answer is \\boxed{" + suite.problem(task).answer + "}.");
  EXPECT_TRUE(right.done);
  EXPECT_EQ(right.reward, 1.0);
  EXPECT_TRUE(right.info.success);
  env->reset(task, 1);
  StepResult wrong = env->step("The answer is \\boxed{" + suite.problem(task).answer + "1}.");
  EXPECT_TRUE(wrong.done);
  EXPECT_EQ(wrong.reward, 0.0);
}

TEST(CodetoolEnv, MaxTurnsEndsTheEpisode) {
  REQUIRE_SANDBOX();
  CodeToolConfig c = small_config();
  c.max_turns = 2;
  CodeToolSuite suite(c);
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 1);
  EXPECT_FALSE(env->step(code("print(1)")).done);
  StepResult last = env->step(code("print(2)"));
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.reward, 0.0);
  EXPECT_EQ(last.info.metrics.at("turns"), 2);
}

TEST(CodetoolEnv, ExpertProgramsSolveEveryKindOfBuiltinProblem) {
  REQUIRE_SANDBOX();
  CodeToolSuite suite(small_config());
  auto env = suite.make_env();
  std::set<std::string> kinds;
  for (size_t i = 0; i < suite.size("test"); ++i) {
    Task task = suite.get("test", i);
    env->reset(task, 1);
    auto action = env->expert_action();
    ASSERT_TRUE(action.has_value());
    StepResult r = env->step(*action);
    // The Python program computes the answer independently of the C++
    // generator; agreement checks both.
    EXPECT_TRUE(r.done) << task.id << ": " << r.observation;
    EXPECT_EQ(r.reward, 1.0) << task.id << " gold " << suite.problem(task).answer << " got " << r.observation;
    kinds.insert(task.task_type);
  }
  EXPECT_EQ(kinds.size(), 7u);  // 6 generators, one of which has two variants
}

TEST(CodetoolEnv, BuiltinProblemsAreDeterministicAndSplitsDiffer) {
  MathProblem a = generate_problem(7, "train", 3), b = generate_problem(7, "train", 3);
  EXPECT_EQ(a.problem, b.problem);
  EXPECT_EQ(a.answer, b.answer);
  EXPECT_NE(generate_problem(7, "test", 3).problem, a.problem);
  EXPECT_NE(generate_problem(8, "train", 3).problem, a.problem);
}

TEST(CodetoolEnv, BuiltinKindsAreUsedInTurnAndTheDefaultIsEveryKind) {
  // The default order is the generators' historical one: problem i is of kind i % 6.
  EXPECT_EQ(generate_problem(7, "train", 4).kind, "linear_system");
  EXPECT_EQ(generate_problem(7, "train", 4).problem, generate_problem(7, "train", 4, builtin_problem_kinds()).problem);
  const std::vector<std::string> kinds{"binomial", "power_sum"};
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(generate_problem(7, "train", i, kinds).kind, kinds[i % 2]) << i;
  EXPECT_NE(generate_problem(7, "train", 2, kinds).problem, generate_problem(7, "train", 4, kinds).problem);
  // Power sums say "n + 1" in code: the policy copies n, it does not add.
  const auto ps = generate_problem(7, "train", 1, kinds);
  EXPECT_NE(ps.expert_code.find(" + 1))"), std::string::npos) << ps.expert_code;
}

TEST(CodetoolEnv, UnknownBuiltinKindNamesTheKeyAndTheChoices) {
  CodeToolConfig c = small_config();
  c.builtin_kinds = {"modpow", "factorial"};
  try {
    CodeToolSuite suite(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("codetool.builtin_kinds: unknown kind 'factorial'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("big_multiply, modpow"), std::string::npos) << e.what();
  }
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::string(AGENTRL_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CodetoolEnv, LoadsJsonlMathDatasets) {
  std::string path = write_temp("envs2_math.jsonl",
                                "{\"problem\": \"1+1?\", \"answer\": \"2\", \"id\": \"a\"}\n"
                                "\n"
                                "{\"question\": \"AIME\", \"answer\": 204}\n"
                                "{\"problem\": \"half\", \"solution\": \"so it is \\\\boxed{\\\\frac{1}{2}}\", "
                                "\"type\": \"Algebra\"}\n");
  auto ps = load_math_jsonl(path);
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0].id, "a");
  EXPECT_EQ(ps[0].answer, "2");
  EXPECT_EQ(ps[1].problem, "AIME");
  EXPECT_EQ(ps[1].answer, "204");
  EXPECT_EQ(ps[1].id, path + ":3");
  EXPECT_EQ(ps[2].answer, "\\frac{1}{2}");
  EXPECT_EQ(ps[2].kind, "Algebra");
}

TEST(CodetoolEnv, MalformedJsonlLineNamesFileAndLine) {
  std::string path = write_temp("envs2_bad.jsonl", "{\"problem\": \"ok\", \"answer\": \"1\"}\n{\"problem\": \"x\"\n");
  try {
    load_math_jsonl(path);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: invalid JSON"), std::string::npos) << e.what();
  }
  std::string missing = write_temp("envs2_missing.jsonl", "{\"problem\": \"x\"}\n");
  try {
    load_math_jsonl(missing);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ":1: missing field \"answer\""), std::string::npos) << e.what();
  }
}

TEST(CodetoolEnv, SuiteRefusesToStartWithoutASandbox) {
  CodeToolConfig c = small_config();
  c.sandbox.bwrap = "/nonexistent/bwrap";
  try {
    CodeToolSuite suite(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("refuses to execute model code"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("allow_unsandboxed: true"), std::string::npos);
  }
}

TEST(CodetoolEnv, RegisteredUnderItsName) {
  auto names = registered_envs();
  EXPECT_NE(std::find(names.begin(), names.end(), "codetool"), names.end());
  config::ExtensionSections sections;
  sections.as<CodeToolConfig>("codetool").builtin_train = 5;
  auto suite = make_env_suite("codetool", sections);
  EXPECT_EQ(suite->name(), "codetool");
  EXPECT_EQ(suite->tasks().size("train"), 5u);
  EXPECT_EQ(suite->eval_split(), "test");
}

}  // namespace
}  // namespace agentrl::envs::codetool
