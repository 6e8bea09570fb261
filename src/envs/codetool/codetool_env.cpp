#include "agentrl/envs/codetool/codetool_env.h"

#include <algorithm>
#include <filesystem>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/codetool/simpletir.h"
#include "agentrl/envs/registry.h"

namespace agentrl::envs::codetool {
namespace {

// A final answer is a \boxed{} (or \fbox{}) whose braces close: the test the
// grader applies, so an answer cut off by the length limit is none (SimpleTIR
// counts such a turn as void).
bool has_final_answer(const std::string& s) { return last_boxed(s).has_value(); }

// Moves `pos` back to the start of a UTF-8 character.
size_t utf8_floor(const std::string& s, size_t pos) {
  while (pos > 0 && pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

}  // namespace

std::optional<std::string> last_code_block(const std::string& response) {
  size_t open = response.rfind("```py");
  if (open == std::string::npos) return std::nullopt;
  size_t body = response.find('\n', open);
  if (body == std::string::npos) return std::nullopt;
  // The tag must be "py" or "python" (not e.g. "```pyproject").
  std::string tag = response.substr(open + 3, body - open - 3);
  while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\r')) tag.pop_back();
  if (tag != "py" && tag != "python" && tag != "python3") return std::nullopt;
  size_t close = response.find("```", body + 1);
  if (close == std::string::npos) return std::nullopt;
  return response.substr(body + 1, close - body - 1);
}

std::string truncate_output(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t half = max_chars / 2;
  size_t head = utf8_floor(text, half);
  size_t tail = utf8_floor(text, text.size() - half);
  return text.substr(0, head) + "\n...(truncated)...\n" + text.substr(tail);
}

// ---- suite ----------------------------------------------------------------

CodeToolSuite::CodeToolSuite(CodeToolConfig config) : config_(std::move(config)) {
  const auto& known = builtin_problem_kinds();
  for (const auto& k : config_.builtin_kinds)
    if (std::find(known.begin(), known.end(), k) == known.end())
      throw ConfigError("codetool.builtin_kinds: unknown kind '" + k + "' (expected one of " +
                        strings::join(known, ", ") + ")");
  auto load = [&](const std::string& file, const char* split, int64_t builtin) {
    if (file.empty()) return generate_problems(static_cast<uint64_t>(config_.builtin_seed), split,
                                               static_cast<size_t>(builtin), config_.builtin_kinds);
    if (!std::filesystem::exists(file))
      throw ConfigError(std::string("codetool.") + split + "_file: no such file '" + file + "'");
    return load_math_jsonl(file);
  };
  train_ = load(config_.train_file, "train", config_.builtin_train);
  test_ = load(config_.test_file, "test", config_.builtin_test);
  SandboxSupport support = probe_sandbox(config_.sandbox);
  if (!support.available && !config_.sandbox.allow_unsandboxed)
    throw ConfigError("codetool: bubblewrap cannot run a sandbox on this machine (" + support.reason +
                      "); the env refuses to execute model code without one. Fix bubblewrap/user namespaces, or "
                      "set codetool.sandbox.allow_unsandboxed: true for rlimit-only execution (unsafe)");
}

const std::vector<MathProblem>& CodeToolSuite::problems(const std::string& split) const {
  if (split == "train") return train_;
  if (split == "test") return test_;
  throw ConfigError("codetool: unknown split '" + split + "' (expected train or test)");
}

Task CodeToolSuite::get(const std::string& split, size_t index) const {
  const auto& ps = problems(split);
  if (index >= ps.size())
    throw std::out_of_range("codetool: task " + std::to_string(index) + " of split " + split + " (size " +
                            std::to_string(ps.size()) + ")");
  return Task{ps[index].id, split, static_cast<int64_t>(index), ps[index].kind};
}

const MathProblem& CodeToolSuite::problem(const Task& task) const {
  const auto& ps = problems(task.split);
  if (task.index < 0 || static_cast<size_t>(task.index) >= ps.size())
    throw std::out_of_range("codetool: task index " + std::to_string(task.index) + " out of range");
  return ps[static_cast<size_t>(task.index)];
}

// ---- env ------------------------------------------------------------------

CodeToolEnv::CodeToolEnv(const CodeToolSuite& suite) : suite_(suite) {}
CodeToolEnv::~CodeToolEnv() = default;

std::string CodeToolEnv::reset(const Task& task, uint64_t seed) {
  (void)seed;  // episodes are deterministic given the task
  problem_ = suite_.problem(task);
  turn_ = code_blocks_ = exec_errors_ = timeouts_ = 0;
  done_ = false;
  session_.reset();
  transcript_.clear();
  // SimpleTIR's instruction ends with "User Question:\n" and the problem
  // follows it directly (its dataset prepends the prompt to the question).
  if (simpletir()) return suite_.config().instruction + problem_.problem;
  return suite_.config().instruction + "\n\n" + problem_.problem;
}

bool CodeToolEnv::simpletir() const { return suite_.config().protocol == "simpletir"; }

// "```\n" ends a turn at a closing fence followed by a newline; an opening
// fence carries its language tag. SimpleTIR's tag is optional, so its turn
// end is the first complete block, which only a regex expresses.
std::vector<std::string> CodeToolEnv::stop_strings() const {
  if (simpletir()) return {};
  return {"```\n"};
}

std::string CodeToolEnv::stop_regex() const { return simpletir() ? simpletir::kCodeBlockPattern : ""; }

std::string CodeToolEnv::task_description() const { return problem_.problem; }
int CodeToolEnv::max_steps() const { return static_cast<int>(suite_.config().max_turns); }

std::optional<std::string> CodeToolEnv::extract_action(const std::string& response) const { return response; }

bool CodeToolEnv::is_void_turn(const std::string& response, const std::string& tool_output) const {
  if (simpletir()) return !simpletir::has_answer(response) && !simpletir::first_code_block(response).has_value();
  return !has_final_answer(response) && !has_final_answer(tool_output) && !last_code_block(response).has_value();
}

std::string CodeToolEnv::format_output(const ExecResult& r) const {
  std::string out = r.ok ? r.stdout_text : r.error_line();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  out = truncate_output(out, static_cast<size_t>(suite_.config().max_output_chars));
  const std::string& fmt = suite_.config().output_format;
  if (fmt == "torl") return "\n```output\n" + out + "\n```\n";
  if (fmt == "retool") return "<interpreter>\n" + out + "\n</interpreter>\n";
  return "\nCode execution result: " + out + "\n";
}

StepResult CodeToolEnv::finish(const std::string& text, StepResult res) {
  if (!checker_) {
    const auto& c = suite_.config();
    checker_ = std::make_unique<AnswerChecker>(c.sandbox, c.use_sympy, c.sympy_timeout_s);
  }
  bool correct = simpletir() ? checker_->equivalent(simpletir::extract_answer(text), problem_.answer)
                             : checker_->boxed_correct(text, problem_.answer);
  res.reward = correct ? 1.0 : 0.0;
  res.info.success = correct;
  res.info.score = res.reward;
  res.done = true;
  done_ = true;
  return res;
}

ExecResult CodeToolEnv::execute(const std::string& code) {
  ++code_blocks_;
  ExecResult r;
  try {
    if (suite_.config().mode == "stateful") {
      if (!session_ || !session_->alive()) session_ = PythonSession::start(suite_.config().sandbox);
      r = session_->execute(code);
    } else {
      r = run_python_once(suite_.config().sandbox, code);
    }
  } catch (const Error& e) {  // the interpreter failed to start: an env fault, shown as an error
    r.crashed = true;
    r.stderr_text = std::string("RuntimeError: ") + e.what();
  }
  if (!r.ok) ++exec_errors_;
  if (r.timed_out) ++timeouts_;
  return r;
}

// One SimpleTIR turn (agent_utils.py execute_predictions and run_llm_loop).
// The episode's text grows as the original's response tensor does: each
// response, then its output unless this was the last turn.
StepResult CodeToolEnv::step_simpletir(const std::string& response, StepResult res) {
  const int64_t max_turns = suite_.config().max_turns;
  bool done = simpletir::has_answer(response);
  auto code = simpletir::first_code_block(response);
  std::string obs;
  if (code) {
    // The last turn's output is never shown or graded: the block is not run.
    if (turn_ < max_turns) {
      ExecResult r = execute(*code);
      obs = simpletir::execution_output(r);
      done = done || simpletir::has_answer(r.stdout_text);
    } else {
      ++code_blocks_;
    }
  } else if (!done) {  // a void turn: neither code nor an answer
    obs = "\n";
    done = true;
    res.info.invalid_action = true;
    res.info.metrics["void_turn"] = 1;
  }
  if (turn_ == max_turns - 1 && !obs.empty()) obs += "\n";  // the original's final_prompt
  transcript_ += response;
  if (turn_ < max_turns) transcript_ += obs;
  res.observation = obs;
  if (!done && turn_ < max_turns) return res;
  res.info.metrics["boxed"] = simpletir::has_answer(transcript_) ? 1 : 0;
  return finish(transcript_, res);
}

StepResult CodeToolEnv::step(const std::string& response) {
  StepResult res;
  res.info.task_type = problem_.kind;
  auto fill_metrics = [&](StepResult r) {
    r.info.metrics["turns"] = turn_;
    r.info.metrics["code_blocks"] = code_blocks_;
    r.info.metrics["exec_errors"] = exec_errors_;
    r.info.metrics["timeouts"] = timeouts_;
    // Solved after running code: with `success`, the share of answers reached through code.
    r.info.metrics["solved_with_code"] = r.done && r.reward >= 1.0 && code_blocks_ > 0 ? 1 : 0;
    return r;
  };
  if (done_) {
    res.done = true;
    res.info.invalid_action = true;
    res.observation = "The episode is over.";
    return fill_metrics(res);
  }
  ++turn_;
  if (simpletir()) return fill_metrics(step_simpletir(response, res));
  if (has_final_answer(response)) return fill_metrics(finish(response, res));
  auto code = last_code_block(response);
  if (!code) {  // void turn: neither a complete code block nor a final answer
    res.done = done_ = true;
    res.info.invalid_action = true;
    res.info.metrics["void_turn"] = 1;
    return fill_metrics(res);
  }
  ExecResult r = execute(*code);
  res.observation = format_output(r);
  if (r.ok && has_final_answer(r.stdout_text)) return fill_metrics(finish(r.stdout_text, res));
  if (turn_ >= suite_.config().max_turns) res.done = done_ = true;
  return fill_metrics(res);
}

std::optional<std::string> CodeToolEnv::expert_action() {
  if (done_) return std::nullopt;
  // SimpleTIR's turn ends right at the closing fence (its stop regex).
  if (!problem_.expert_code.empty() && turn_ == 0)
    return "I will compute this with Python.\n```python\n" + problem_.expert_code + (simpletir() ? "\n```" : "\n```\n");
  return "The answer is \\boxed{" + problem_.answer + "}.";
}

AGENTRL_REGISTER_ENV(codetool, CodeToolConfig, "math with a sandboxed Python tool (SimpleTIR / ToRL / ReTool)",
                     [](const CodeToolConfig& c) { return std::make_shared<CodeToolSuite>(c); });

}  // namespace agentrl::envs::codetool
