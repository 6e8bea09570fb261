// Math problems for the code-tool env: a built-in generator and JSONL loaders.
//
// Built-in problems are ones where running code helps and the answer is an
// exact integer computed here in C++ (unsigned __int128 where needed):
// large-number multiplication, modular exponentiation, binomial coefficients,
// power sums, 3x3 integer linear systems, divisor sums and Euler's totient.
// Each comes with an expert Python program that computes it and calls
// final_answer(). Problem `i` of a split depends only on (seed, split, i).
//
// JSONL loader: one JSON object per line with "problem" or "question", and
// "answer" or "solution" (the answer is then the last \boxed{} of the
// solution); optional "id" and "type"/"level". Numbers as answers (AIME) are
// accepted. This covers MATH500, AIME-style files and DAPO-Math-17k
// converted to JSONL. Blank lines are skipped; a malformed line throws
// FormatError naming the file and line.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace agentrl::envs::codetool {

struct MathProblem {
  std::string id;
  std::string problem;
  std::string answer;
  std::string kind;         // "modpow", "binomial", ... or the dataset's type ("" if none)
  std::string expert_code;  // Python that prints \boxed{answer}; empty for loaded data
};

// Names of the built-in generators, in their default order: big_multiply,
// modpow, binomial, power_sum, linear_system, divisor (divisor sums and
// totients).
const std::vector<std::string>& builtin_problem_kinds();

// Problem `index` of the built-in split `split` ("train" / "test"), of the
// kind kinds[index % kinds.size()] (empty = builtin_problem_kinds()). The
// problem depends only on (seed, split, index, its kind). Throws ConfigError
// on an unknown kind name.
MathProblem generate_problem(uint64_t seed, const std::string& split, uint64_t index,
                             const std::vector<std::string>& kinds = {});
std::vector<MathProblem> generate_problems(uint64_t seed, const std::string& split, size_t count,
                                           const std::vector<std::string>& kinds = {});

std::vector<MathProblem> load_math_jsonl(const std::string& path);

}  // namespace agentrl::envs::codetool
