#include "agentrl/envs/codetool/problems.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/codetool/answer.h"

namespace agentrl::envs::codetool {
namespace {

using u128 = unsigned __int128;

std::string to_string(u128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  return s;
}
std::string to_string_signed(int64_t v) { return std::to_string(v); }

uint64_t modpow(uint64_t a, uint64_t e, uint64_t m) {
  u128 result = 1 % m, base = a % m;
  while (e > 0) {
    if (e & 1) result = result * base % m;
    base = base * base % m;
    e >>= 1;
  }
  return static_cast<uint64_t>(result);
}

MathProblem big_multiply(Rng& rng) {
  uint64_t a = static_cast<uint64_t>(rng.uniform_int(100000000000LL, 999999999999LL));
  uint64_t b = static_cast<uint64_t>(rng.uniform_int(100000000000LL, 999999999999LL));
  uint64_t c = static_cast<uint64_t>(rng.uniform_int(1000, 999999));
  MathProblem p;
  p.kind = "big_multiply";
  p.problem = "Compute the exact value of " + std::to_string(a) + " \\times " + std::to_string(b) + " \\times " +
              std::to_string(c) + ".";
  p.answer = to_string(static_cast<u128>(a) * b * c);
  p.expert_code = "final_answer(" + std::to_string(a) + " * " + std::to_string(b) + " * " + std::to_string(c) + ")";
  return p;
}

MathProblem modular_power(Rng& rng) {
  uint64_t a = static_cast<uint64_t>(rng.uniform_int(2, 999999));
  uint64_t e = static_cast<uint64_t>(rng.uniform_int(1000000, 999999999999LL));
  uint64_t m = static_cast<uint64_t>(rng.uniform_int(100000, 999999999));
  MathProblem p;
  p.kind = "modpow";
  p.problem = "What is the remainder when " + std::to_string(a) + "^{" + std::to_string(e) + "} is divided by " +
              std::to_string(m) + "?";
  p.answer = std::to_string(modpow(a, e, m));
  p.expert_code = "final_answer(pow(" + std::to_string(a) + ", " + std::to_string(e) + ", " + std::to_string(m) + "))";
  return p;
}

MathProblem binomial(Rng& rng) {
  int64_t n = rng.uniform_int(30, 90);
  int64_t k = rng.uniform_int(5, n / 2);
  u128 c = 1;  // C(n, i+1) = C(n, i) * (n - i) / (i + 1), exact at every step; C(90,45) < 2^128
  for (int64_t i = 0; i < k; ++i) c = c * static_cast<u128>(n - i) / static_cast<u128>(i + 1);
  MathProblem p;
  p.kind = "binomial";
  p.problem = "In how many ways can a committee of " + std::to_string(k) + " people be chosen from " +
              std::to_string(n) + " people?";
  p.answer = to_string(c);
  p.expert_code = "import math\nfinal_answer(math.comb(" + std::to_string(n) + ", " + std::to_string(k) + "))";
  return p;
}

MathProblem power_sum(Rng& rng) {
  int64_t n = rng.uniform_int(1000, 200000);
  int64_t e = rng.uniform_int(2, 4);
  u128 sum = 0;
  for (int64_t k = 1; k <= n; ++k) {
    u128 t = 1;
    for (int64_t j = 0; j < e; ++j) t *= static_cast<u128>(k);
    sum += t;
  }
  MathProblem p;
  p.kind = "power_sum";
  p.problem = "Compute \\sum_{k=1}^{" + std::to_string(n) + "} k^{" + std::to_string(e) + "}.";
  p.answer = to_string(sum);
  // "n + 1", not its value: the expert writes what the problem says, so a
  // policy that imitates it copies numbers and never has to add in its head.
  p.expert_code = "final_answer(sum(k**" + std::to_string(e) + " for k in range(1, " + std::to_string(n) + " + 1)))";
  return p;
}

MathProblem linear_system(Rng& rng) {
  int64_t sol[3], a[3][3], det = 0;
  do {
    for (auto& s : sol) s = rng.uniform_int(-12, 12);
    for (auto& row : a)
      for (auto& v : row) v = rng.uniform_int(-9, 9);
    det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
          a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  } while (det == 0);
  const char* names[3] = {"x", "y", "z"};
  std::string eqs, py;
  for (int r = 0; r < 3; ++r) {
    std::string lhs, pl;
    for (int c = 0; c < 3; ++c) {
      int64_t v = a[r][c];
      if (v == 0) continue;
      std::string sign = v < 0 ? "-" : (lhs.empty() ? "" : "+");
      int64_t mag = v < 0 ? -v : v;
      lhs += sign + (mag == 1 ? "" : std::to_string(mag)) + names[c];
      pl += (pl.empty() ? "" : " + ") + std::string("(") + std::to_string(v) + ")*" + names[c];
    }
    int64_t rhs = a[r][0] * sol[0] + a[r][1] * sol[1] + a[r][2] * sol[2];
    eqs += (r ? ", " : "") + lhs + " = " + std::to_string(rhs);
    py += (r ? ", " : "") + std::string("sp.Eq(") + pl + ", " + std::to_string(rhs) + ")";
  }
  MathProblem p;
  p.kind = "linear_system";
  p.problem = "Solve the system " + eqs + " and give the value of x + 2y + 3z.";
  p.answer = to_string_signed(sol[0] + 2 * sol[1] + 3 * sol[2]);
  p.expert_code = "import sympy as sp\nx, y, z = sp.symbols('x y z')\ns = sp.solve([" + py +
                  "], [x, y, z])\nfinal_answer(s[x] + 2*s[y] + 3*s[z])";
  return p;
}

MathProblem divisor_function(Rng& rng) {
  uint64_t n = static_cast<uint64_t>(rng.uniform_int(100000, 50000000));
  bool totient = rng.uniform_int(0, 1) == 1;
  // Factorise by trial division (n < 5e7, so at most ~7100 divisions).
  uint64_t m = n, sigma = 1, phi = 1;
  for (uint64_t q = 2; q * q <= m; ++q) {
    if (m % q) continue;
    uint64_t pk = 1, sum = 1;
    while (m % q == 0) {
      m /= q;
      pk *= q;
      sum += pk;
    }
    sigma *= sum;
    phi *= pk / q * (q - 1);
  }
  if (m > 1) {
    sigma *= m + 1;
    phi *= m - 1;
  }
  MathProblem p;
  p.kind = totient ? "totient" : "divisor_sum";
  p.problem = totient ? "How many integers k with 1 \\le k \\le " + std::to_string(n) + " satisfy \\gcd(k, " +
                            std::to_string(n) + ") = 1?"
                      : "What is the sum of all positive divisors of " + std::to_string(n) + "?";
  p.answer = std::to_string(totient ? phi : sigma);
  p.expert_code = std::string("import sympy\nfinal_answer(sympy.") + (totient ? "totient(" : "divisor_sigma(") +
                  std::to_string(n) + "))";
  return p;
}

using Generator = MathProblem (*)(Rng&);

// In the order of builtin_problem_kinds().
constexpr Generator kGenerators[] = {big_multiply, modular_power, binomial, power_sum, linear_system, divisor_function};

}  // namespace

const std::vector<std::string>& builtin_problem_kinds() {
  static const std::vector<std::string> kinds{"big_multiply", "modpow",        "binomial",
                                              "power_sum",    "linear_system", "divisor"};
  return kinds;
}

MathProblem generate_problem(uint64_t seed, const std::string& split, uint64_t index,
                             const std::vector<std::string>& kinds) {
  const auto& all = builtin_problem_kinds();
  const auto& use = kinds.empty() ? all : kinds;
  const std::string& kind = use[index % use.size()];
  const auto it = std::find(all.begin(), all.end(), kind);
  if (it == all.end())
    throw ConfigError("unknown built-in problem kind '" + kind + "' (expected one of " + strings::join(all, ", ") + ")");
  uint64_t split_salt = 0;
  for (char c : split) split_salt = split_salt * 131 + static_cast<unsigned char>(c);
  Rng rng(mix_seed(mix_seed(seed, split_salt), index));
  MathProblem p = kGenerators[it - all.begin()](rng);
  p.id = "codetool-" + split + "-" + std::to_string(index);
  return p;
}

std::vector<MathProblem> generate_problems(uint64_t seed, const std::string& split, size_t count,
                                           const std::vector<std::string>& kinds) {
  std::vector<MathProblem> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(generate_problem(seed, split, i, kinds));
  return out;
}

namespace {
std::string json_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return v.dump();
  return "";
}
}  // namespace

std::vector<MathProblem> load_math_jsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot open math dataset '" + path + "'");
  std::vector<MathProblem> out;
  std::string line;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (strings::is_blank(line)) continue;
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(where + "invalid JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw FormatError(where + "expected a JSON object");
    MathProblem p;
    for (const char* key : {"problem", "question"})
      if (j.contains(key) && j[key].is_string()) p.problem = j[key].get<std::string>();
    if (p.problem.empty()) throw FormatError(where + "missing string field \"problem\" (or \"question\")");
    if (j.contains("answer")) {
      p.answer = json_text(j["answer"]);
      if (p.answer.empty()) throw FormatError(where + "field \"answer\" must be a non-empty string or number");
    } else if (j.contains("solution") && j["solution"].is_string()) {
      auto boxed = last_boxed(j["solution"].get<std::string>());
      if (!boxed) throw FormatError(where + "field \"solution\" has no \\boxed{...} answer and there is no \"answer\"");
      p.answer = *boxed;
    } else {
      throw FormatError(where + "missing field \"answer\" (or \"solution\")");
    }
    p.id = j.contains("id") ? json_text(j["id"]) : "";
    if (j.contains("unique_id") && p.id.empty()) p.id = json_text(j["unique_id"]);
    if (p.id.empty()) p.id = path + ":" + std::to_string(lineno);
    if (j.contains("type") && j["type"].is_string()) p.kind = j["type"].get<std::string>();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace agentrl::envs::codetool
