// Final-answer extraction and equivalence for math problems.
//
// The reward of the code-tool env: take the last \boxed{...} of the model's
// text (balanced braces), normalise the LaTeX of both it and the gold answer
// (the rules of Hendrycks et al.'s MATH `strip_string`, re-implemented:
// \dfrac/\tfrac -> \frac, \frac12 -> \frac{1}{2}, \left/\right, \!, spaces,
// ^\circ, \%, \$, \text{...} units, thousands separators, "x = " prefixes),
// then decide:
//   1. equal normalised strings;
//   2. both integers: exact comparison of the digits (no floating point, so
//      30-digit answers are compared exactly);
//   3. tuples / intervals: element-wise;
//   4. both evaluate to numbers (a small LaTeX arithmetic evaluator: + - * /
//      ^, \frac, \sqrt, \pi, \cdot, \times, implicit products): relative
//      tolerance 1e-6;
//   5. otherwise, when enabled, symbolic equality with sympy
//      (simplify(a - b) == 0) run inside the sandbox with a timeout; a
//      timeout or parse failure counts as not equivalent.
//
// Thread-safety: the free functions are pure. An AnswerChecker owns one
// sandboxed interpreter (started lazily) and is used by one thread at a time.
//
// This layer is torch-free.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "agentrl/envs/codetool/sandbox.h"

namespace agentrl::envs::codetool {

// Contents of the last \boxed{...} (or \fbox{...}) with balanced braces;
// nullopt when there is none or its braces never close.
std::optional<std::string> last_boxed(const std::string& text);
// Canonical form of an answer (see above).
std::string normalize_answer(const std::string& answer);
// Value of a normalised answer that is plain arithmetic, else nullopt.
std::optional<double> evaluate_number(const std::string& normalized);
// Steps 1-4 (no sympy).
bool answers_match(const std::string& predicted, const std::string& gold);
// A sympy-parsable expression for a normalised LaTeX answer ("" if it has
// constructs we do not translate).
std::string latex_to_sympy(const std::string& normalized);

class AnswerChecker {
 public:
  AnswerChecker(SandboxConfig sandbox, bool use_sympy, double sympy_timeout_s);
  ~AnswerChecker();
  AnswerChecker(const AnswerChecker&) = delete;
  AnswerChecker& operator=(const AnswerChecker&) = delete;

  // Steps 1-5.
  bool equivalent(const std::string& predicted, const std::string& gold);
  // Reward of a model text: 1 if its last \boxed{} is equivalent to gold.
  bool boxed_correct(const std::string& text, const std::string& gold);

 private:
  bool sympy_equal(const std::string& a, const std::string& b);
  SandboxConfig sandbox_;
  bool use_sympy_;
  double sympy_timeout_s_;
  std::unique_ptr<PythonSession> session_;
};

}  // namespace agentrl::envs::codetool
