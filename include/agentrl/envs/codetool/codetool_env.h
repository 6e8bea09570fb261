// The code-tool environment (SimpleTIR-style tool-integrated reasoning).
//
// An episode is one math problem. Each turn the model writes reasoning and,
// optionally, one fenced block ```python ... ```; generation stops at the
// closing fence, the env runs the block in the sandbox (codetool/sandbox.h)
// and appends its output in the configured format:
//   simpletir (default): "\nCode execution result: {out}\n"
//   torl:                "\n```output\n{out}\n```\n"
//   retool:              "<interpreter>\n{out}\n</interpreter>\n"
// where {out} is stdout, or on an error the last line of stderr, cut to
// max_output_chars (first half + "...(truncated)..." + last half; SimpleTIR
// uses 512 = 256 + 256). The episode ends when the response or the output
// contains \boxed{ (reward 1 if the last \boxed{} is equivalent to the gold
// answer, codetool/answer.h), at max_turns, or on a void turn (neither a
// complete code block nor a final answer; reward 0).
//
// step() takes the whole model response (extract_action returns it
// unchanged). Stop strings: "```\n" ends a turn at a closing fence followed
// by a newline: an opening fence never matches it because it carries the
// language tag ("```python\n"). The engine must apply stop strings to the
// newly generated text only (not to the prompt) and keep the stop string in
// the response (GenerationRequest::include_stop_string = true); a response
// that ends at EOS right after "```" is handled the same way.
//
// protocol: simpletir follows SimpleTIR's original instead, string for string
// (codetool/simpletir.h): the turn ends at the FIRST complete code block (the
// language tag optional; a stop regex, no stop string), the prompt is the
// instruction followed directly by the problem, any "\boxed{" ends the
// episode, the output is SimpleTIR's (stdout kept as is, stderr's last line,
// nothing for a silent block, its 512-character marker), a "\n" is added to
// the output before the last turn, the last turn's output is not shown, and
// the reward grades the whole episode text with the original's extraction
// (boxed, then "the answer is", then the last number) whenever the episode
// ends (a void turn or the turn limit too).
//
// Per-step metrics (info.metrics): turns, code_blocks, exec_errors,
// timeouts, solved_with_code (the episode is solved and ran code: over
// `success`, the share of answers reached through code), void_turn, and
// boxed under the simpletir protocol.
//
// Modes: stateless (a fresh interpreter per block, as SimpleTIR) or stateful
// (one interpreter per episode, variables kept across turns; restarted if a
// block kills it, e.g. by a timeout).
//
// Thread-safety: as envs/env.h; a CodeToolEnv owns its interpreter and is
// used by one thread at a time; the suite is immutable.
//
// This layer is torch-free.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/envs/codetool/answer.h"
#include "agentrl/envs/codetool/problems.h"
#include "agentrl/envs/codetool/sandbox.h"
#include "agentrl/envs/env.h"

namespace agentrl::envs::codetool {

struct CodeToolConfig {
  int64_t max_turns = 5;
  std::string protocol = "agentrl";
  std::string mode = "stateless";
  std::string output_format = "simpletir";
  int64_t max_output_chars = 512;
  bool use_sympy = true;
  double sympy_timeout_s = 5.0;
  std::string train_file;  // JSONL; empty = built-in problems
  std::string test_file;
  int64_t builtin_train = 3000;
  int64_t builtin_test = 300;
  int64_t builtin_seed = 20240601;
  std::vector<std::string> builtin_kinds;  // empty = all generators
  std::string eval_split = "test";
  std::string instruction =
      "Solve the following problem. You may write Python code in a ```python ... ``` block; it will be "
      "executed and its output shown to you. `final_answer(x)` prints the final answer. Put the final answer in "
      "\\boxed{}.";
  SandboxConfig sandbox;

  void visit(config::Visitor& v) {
    v.field("max_turns", max_turns, "turns per episode", config::Range::closed(1, 100));
    v.field("protocol", protocol,
            "agentrl (last ```python block, stop at a closing fence, reward on the final \\boxed{}) or simpletir "
            "(SimpleTIR's original turn protocol and grading; output_format and max_output_chars are then its own)",
            {"agentrl", "simpletir"});
    v.field("mode", mode, "interpreter per block (stateless) or per episode (stateful)", {"stateless", "stateful"});
    v.field("output_format", output_format, "how execution output is shown", {"simpletir", "torl", "retool"});
    v.field("max_output_chars", max_output_chars, "execution output kept (head + tail)", config::Range::closed(16, 1 << 20));
    v.field("use_sympy", use_sympy, "symbolic answer equivalence with sympy inside the sandbox");
    v.field("sympy_timeout_s", sympy_timeout_s, "timeout of one sympy check (s; timeout = wrong)",
            config::Range::positive());
    v.field("train_file", train_file, "JSONL math problems for the train split (empty: built-in)");
    v.field("test_file", test_file, "JSONL math problems for the test split (empty: built-in)");
    v.field("builtin_train", builtin_train, "built-in train problems", config::Range::closed(0, 10000000));
    v.field("builtin_test", builtin_test, "built-in test problems", config::Range::closed(0, 10000000));
    v.field("builtin_seed", builtin_seed, "seed of the built-in problem generator");
    v.field("builtin_kinds", builtin_kinds,
            "built-in generators used in turn (empty: all of big_multiply, modpow, binomial, power_sum, "
            "linear_system, divisor)");
    v.field("eval_split", eval_split, "split used for evaluation", {"train", "test"});
    v.field("instruction", instruction, "text shown before the problem");
    v.section("sandbox", sandbox, "code execution sandbox");
  }
};

// Last complete ```python (or ```py) block of a response; nullopt if none.
std::optional<std::string> last_code_block(const std::string& response);
// Output as shown to the model, cut to max_chars (head + marker + tail).
std::string truncate_output(const std::string& text, size_t max_chars);

class CodeToolSuite;

class CodeToolEnv final : public Env {
 public:
  explicit CodeToolEnv(const CodeToolSuite& suite);
  ~CodeToolEnv() override;

  std::string reset(const Task& task, uint64_t seed) override;
  StepResult step(const std::string& action) override;
  std::vector<std::string> admissible_actions() const override { return {}; }
  std::string task_description() const override;
  std::optional<std::string> expert_action() override;
  std::optional<std::string> extract_action(const std::string& response) const override;
  std::vector<std::string> stop_strings() const override;
  std::string stop_regex() const override;
  bool is_void_turn(const std::string& response, const std::string& tool_output) const override;
  int max_steps() const override;

  const MathProblem& problem() const { return problem_; }

 private:
  bool simpletir() const;
  std::string format_output(const ExecResult& r) const;
  ExecResult execute(const std::string& code);
  StepResult finish(const std::string& text, StepResult res);
  StepResult step_simpletir(const std::string& response, StepResult res);

  const CodeToolSuite& suite_;
  MathProblem problem_;
  int turn_ = 0;
  bool done_ = true;
  int code_blocks_ = 0, exec_errors_ = 0, timeouts_ = 0;
  std::string transcript_;  // simpletir: the episode's text as the original grades it
  std::unique_ptr<PythonSession> session_;
  std::unique_ptr<AnswerChecker> checker_;
};

class CodeToolSuite final : public EnvSuite, public TaskSource {
 public:
  // Throws ConfigError when the sandbox is unusable (unless allowed) or a
  // dataset file is missing; FormatError for malformed dataset lines.
  explicit CodeToolSuite(CodeToolConfig config);

  const std::string& name() const override { return name_; }
  const TaskSource& tasks() const override { return *this; }
  std::unique_ptr<Env> make_env() const override { return std::make_unique<CodeToolEnv>(*this); }
  std::string eval_split() const override { return config_.eval_split; }

  std::vector<std::string> splits() const override { return {"train", "test"}; }
  size_t size(const std::string& split) const override { return problems(split).size(); }
  Task get(const std::string& split, size_t index) const override;

  const std::vector<MathProblem>& problems(const std::string& split) const;
  const MathProblem& problem(const Task& task) const;
  const CodeToolConfig& config() const { return config_; }

 private:
  std::string name_ = "codetool";
  CodeToolConfig config_;
  std::vector<MathProblem> train_, test_;
};

}  // namespace agentrl::envs::codetool
