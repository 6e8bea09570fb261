#include "agentrl/envs/codetool/answer.h"
#include "agentrl/core/strings.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <cmath>
#include <regex>
#include <vector>

namespace agentrl::envs::codetool {
namespace {

// In place: the normaliser below rewrites one string step by step.
void replace_all(std::string& s, const std::string& from, const std::string& to) {
  s = strings::replace_all(std::move(s), from, to);
}

using strings::trim;

// Index just past the group that opens at s[open] == '{', or npos.
size_t close_brace(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '{') ++depth;
    if (s[i] == '}' && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

// \text{...}-like wrappers: units are dropped when something else remains
// ("5\text{ cm}" -> "5"), otherwise the wrapper is unwrapped ("\text{east}").
std::string strip_text_wrappers(std::string s) {
  for (const char* cmd : {"\\text", "\\textbf", "\\mbox", "\\mathrm", "\\textrm"}) {
    const std::string c = std::string(cmd) + "{";
    for (size_t pos = s.find(c); pos != std::string::npos; pos = s.find(c, pos)) {
      size_t end = close_brace(s, pos + c.size() - 1);
      if (end == std::string::npos) break;
      std::string inner = s.substr(pos + c.size(), end - pos - c.size() - 1);
      std::string rest = trim(s.substr(0, pos) + s.substr(end));
      bool unit = !inner.empty() && std::all_of(inner.begin(), inner.end(), [](unsigned char ch) {
        return std::isalpha(ch) || ch == ' ' || ch == '^' || ch == '2' || ch == '3';
      });
      if (unit && !rest.empty()) {
        s = s.substr(0, pos) + s.substr(end);
      } else {
        s = s.substr(0, pos) + inner + s.substr(end);
        pos += inner.size();
      }
    }
  }
  return s;
}

// \frac12 -> \frac{1}{2}, \frac1{2} -> \frac{1}{2}, \sqrt2 -> \sqrt{2}.
std::string brace_short_args(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool frac = s.compare(i, 5, "\\frac") == 0, sqrt = s.compare(i, 5, "\\sqrt") == 0;
    if (!frac && !sqrt) {
      out += s[i++];
      continue;
    }
    out += s.substr(i, 5);
    i += 5;
    for (int arg = 0; arg < (frac ? 2 : 1) && i < s.size(); ++arg) {
      if (s[i] == '{' || s[i] == '[') {
        size_t end = s[i] == '{' ? close_brace(s, i) : s.find(']', i) + 1;
        if (end == std::string::npos || end == 0) break;
        if (s[i] == '[') --arg;  // \sqrt[n]{x}: the index does not count
        out += s.substr(i, end - i);
        i = end;
      } else if (s[i] != '\\') {
        out += std::string("{") + s[i] + "}";
        ++i;
      }
    }
  }
  return out;
}

bool is_integer(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  return i < s.size() && s.find_first_not_of("0123456789", i) == std::string::npos;
}

std::string canonical_integer(const std::string& s) {
  bool neg = s[0] == '-';
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t nz = s.find_first_not_of('0', i);
  std::string digits = nz == std::string::npos ? "0" : s.substr(nz);
  return (neg && digits != "0" ? "-" : "") + digits;
}

// Recursive-descent evaluator for normalised arithmetic LaTeX.
class NumberParser {
 public:
  explicit NumberParser(const std::string& s) : s_(s) {}
  std::optional<double> parse() {
    auto v = expr();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  bool eat(const char* tok) {
    size_t n = std::strlen(tok);
    if (s_.compare(pos_, n, tok) != 0) return false;
    pos_ += n;
    return true;
  }
  std::optional<double> expr() {
    auto v = term();
    while (v) {
      if (eat("+")) {
        auto r = term();
        if (!r) return std::nullopt;
        *v += *r;
      } else if (eat("-")) {
        auto r = term();
        if (!r) return std::nullopt;
        *v -= *r;
      } else {
        break;
      }
    }
    return v;
  }
  bool starts_atom() const {
    if (pos_ >= s_.size()) return false;
    char c = s_[pos_];
    return std::isdigit(static_cast<unsigned char>(c)) || c == '(' || c == '{' || c == '.' ||
           s_.compare(pos_, 5, "\\frac") == 0 || s_.compare(pos_, 5, "\\sqrt") == 0 || s_.compare(pos_, 3, "\\pi") == 0;
  }
  std::optional<double> term() {
    auto v = unary();
    while (v) {
      if (eat("*") || eat("\\cdot") || eat("\\times")) {
        auto r = unary();
        if (!r) return std::nullopt;
        *v *= *r;
      } else if (eat("/") || eat("\\div")) {
        auto r = unary();
        if (!r) return std::nullopt;
        *v /= *r;
      } else if (starts_atom()) {  // implicit product: 2\sqrt{3}, 3\pi
        auto r = power();
        if (!r) return std::nullopt;
        *v *= *r;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<double> unary() {
    if (eat("-")) {
      auto v = unary();
      return v ? std::optional<double>(-*v) : std::nullopt;
    }
    if (eat("+")) return unary();
    return power();
  }
  std::optional<double> power() {
    auto base = atom();
    if (base && eat("^")) {
      auto e = s_.compare(pos_, 1, "{") == 0 ? atom() : unary();
      if (!e) return std::nullopt;
      return std::pow(*base, *e);
    }
    return base;
  }
  std::optional<double> group() {
    if (!eat("{")) return std::nullopt;
    auto v = expr();
    if (!v || !eat("}")) return std::nullopt;
    return v;
  }
  std::optional<double> atom() {
    if (eat("(")) {
      auto v = expr();
      if (!v || !eat(")")) return std::nullopt;
      return v;
    }
    if (pos_ < s_.size() && s_[pos_] == '{') return group();
    if (eat("\\frac")) {
      auto n = group();
      auto d = n ? group() : std::nullopt;
      if (!d) return std::nullopt;
      return *n / *d;
    }
    if (eat("\\sqrt")) {
      double index = 2;
      if (eat("[")) {
        auto i = expr();
        if (!i || !eat("]")) return std::nullopt;
        index = *i;
      }
      auto x = group();
      if (!x) return std::nullopt;
      return std::pow(*x, 1.0 / index);
    }
    if (eat("\\pi")) return M_PI;
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) ++pos_;
    if (pos_ == start) return std::nullopt;
    try {
      return std::stod(s_.substr(start, pos_ - start));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  const std::string& s_;
  size_t pos_ = 0;
};

// Splits "(a,b)" / "[a,b)" / "a,b" at top-level commas. Returns the opening
// and closing bracket ("" if none) and the parts.
struct Tuple {
  std::string open, close;
  std::vector<std::string> parts;
};
Tuple split_tuple(const std::string& s) {
  Tuple t;
  std::string body = s;
  if (s.size() >= 2 && (s[0] == '(' || s[0] == '[') && (s.back() == ')' || s.back() == ']')) {
    t.open = s.substr(0, 1);
    t.close = s.substr(s.size() - 1);
    body = s.substr(1, s.size() - 2);
  }
  int depth = 0;
  std::string cur;
  for (char c : body) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      t.parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  t.parts.push_back(cur);
  return t;
}

bool normalized_match(const std::string& a, const std::string& b, int depth) {
  if (a == b) return true;
  if (a.empty() || b.empty()) return false;
  if (is_integer(a) && is_integer(b)) return canonical_integer(a) == canonical_integer(b);
  if (depth < 3) {
    Tuple ta = split_tuple(a), tb = split_tuple(b);
    if (ta.parts.size() > 1 && ta.parts.size() == tb.parts.size()) {
      if (ta.open != tb.open || ta.close != tb.close) return false;
      for (size_t i = 0; i < ta.parts.size(); ++i)
        if (!normalized_match(ta.parts[i], tb.parts[i], depth + 1)) return false;
      return true;
    }
  }
  auto va = evaluate_number(a), vb = evaluate_number(b);
  if (va && vb && std::isfinite(*va) && std::isfinite(*vb))
    return std::fabs(*va - *vb) <= 1e-6 * std::max(1.0, std::fabs(*vb));
  return false;
}

}  // namespace

std::optional<std::string> last_boxed(const std::string& text) {
  size_t best = std::string::npos;
  size_t len = 0;
  for (const char* cmd : {"\\boxed{", "\\fbox{"}) {
    size_t p = text.rfind(cmd);
    if (p != std::string::npos && (best == std::string::npos || p > best)) {
      best = p;
      len = std::strlen(cmd);
    }
  }
  if (best == std::string::npos) return std::nullopt;
  size_t end = close_brace(text, best + len - 1);
  if (end == std::string::npos) return std::nullopt;
  return text.substr(best + len, end - best - len - 1);
}

std::string normalize_answer(const std::string& answer) {
  std::string s = trim(answer);
  replace_all(s, "\n", "");
  while (s.size() >= 2 && s.front() == '$' && s.back() == '$') s = trim(s.substr(1, s.size() - 2));
  for (const char* junk : {"\\!", "\\,", "\\;", "\\:", "\\left", "\\right", "\\displaystyle", "\\$", "\\%", "%",
                           "^{\\circ}", "^\\circ", "\xC2\xB0"})
    replace_all(s, junk, "");
  replace_all(s, "\\dfrac", "\\frac");
  replace_all(s, "\\tfrac", "\\frac");
  replace_all(s, "\\\\", "\\");
  s = strip_text_wrappers(s);
  s = trim(s);
  // "x = 5", "k=3": a short variable name and '=' in front of the value.
  static const std::regex assign(R"(^[A-Za-z]{1,2}\s*=\s*(.+)$)");
  std::smatch m;
  if (std::regex_match(s, m, assign)) s = m[1];
  // Trailing units without \text: "12 cm", "5 dollars".
  static const std::regex unit(R"(^([-+]?[0-9.,/]+)\s+[A-Za-z][A-Za-z ]*$)");
  if (std::regex_match(s, m, unit)) s = m[1];
  s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }), s.end());
  s = brace_short_args(s);
  static const std::regex thousands(R"(^-?\d{1,3}(,\d{3})+(\.\d+)?$)");
  if (std::regex_match(s, thousands)) replace_all(s, ",", "");
  while (!s.empty() && s.back() == '.') s.pop_back();
  if (!s.empty() && s[0] == '.') s = "0" + s;
  if (!s.empty() && s[0] == '+') s = s.substr(1);
  return s;
}

std::optional<double> evaluate_number(const std::string& normalized) {
  if (normalized.empty()) return std::nullopt;
  return NumberParser(normalized).parse();
}

bool answers_match(const std::string& predicted, const std::string& gold) {
  return normalized_match(normalize_answer(predicted), normalize_answer(gold), 0);
}

std::string latex_to_sympy(const std::string& normalized) {
  std::string s = normalized;
  // \frac{a}{b} -> ((a)/(b)) and \sqrt[n]{x} / \sqrt{x}, innermost first by
  // repeated rewriting of the leftmost occurrence.
  for (int guard = 0; guard < 100; ++guard) {
    size_t f = s.find("\\frac{"), r = s.find("\\sqrt");
    if (f == std::string::npos && r == std::string::npos) break;
    if (f != std::string::npos && (r == std::string::npos || f < r)) {
      size_t e1 = close_brace(s, f + 5);
      if (e1 == std::string::npos || e1 >= s.size() || s[e1] != '{') return "";
      size_t e2 = close_brace(s, e1);
      if (e2 == std::string::npos) return "";
      s = s.substr(0, f) + "((" + s.substr(f + 6, e1 - f - 7) + ")/(" + s.substr(e1 + 1, e2 - e1 - 2) + "))" +
          s.substr(e2);
    } else {
      std::string index = "2";
      size_t open = r + 5;
      if (open < s.size() && s[open] == '[') {
        size_t close = s.find(']', open);
        if (close == std::string::npos) return "";
        index = s.substr(open + 1, close - open - 1);
        open = close + 1;
      }
      if (open >= s.size() || s[open] != '{') return "";
      size_t e = close_brace(s, open);
      if (e == std::string::npos) return "";
      s = s.substr(0, r) + "((" + s.substr(open + 1, e - open - 2) + ")**(1/(" + index + ")))" + s.substr(e);
    }
  }
  replace_all(s, "\\cdot", "*");
  replace_all(s, "\\times", "*");
  replace_all(s, "\\infty", "oo");
  replace_all(s, "\\pi", "pi");
  replace_all(s, "\\ln", "log");
  for (const char* fn : {"sin", "cos", "tan", "log", "exp"}) replace_all(s, std::string("\\") + fn, fn);
  replace_all(s, "{", "(");
  replace_all(s, "}", ")");
  replace_all(s, "^", "**");
  if (s.find('\\') != std::string::npos || s.find('=') != std::string::npos) return "";
  return s;
}

AnswerChecker::AnswerChecker(SandboxConfig sandbox, bool use_sympy, double sympy_timeout_s)
    : sandbox_(std::move(sandbox)), use_sympy_(use_sympy), sympy_timeout_s_(sympy_timeout_s) {}
AnswerChecker::~AnswerChecker() = default;

bool AnswerChecker::equivalent(const std::string& predicted, const std::string& gold) {
  std::string a = normalize_answer(predicted), b = normalize_answer(gold);
  if (normalized_match(a, b, 0)) return true;
  if (!use_sympy_ || a.empty() || b.empty()) return false;
  // Two plain numbers were already compared numerically; sympy cannot do
  // better, and skipping it keeps wrong numeric answers cheap.
  if (evaluate_number(a) && evaluate_number(b)) return false;
  std::string sa = latex_to_sympy(a), sb = latex_to_sympy(b);
  if (sa.empty() || sb.empty()) return false;
  return sympy_equal(sa, sb);
}

bool AnswerChecker::boxed_correct(const std::string& text, const std::string& gold) {
  auto boxed = last_boxed(text);
  return boxed && equivalent(*boxed, gold);
}

bool AnswerChecker::sympy_equal(const std::string& a, const std::string& b) {
  if (!session_ || !session_->alive()) session_ = PythonSession::start(sandbox_);
  // JSON string literals are valid Python string literals.
  std::string code =
      "from sympy import simplify, nsimplify\n"
      "from sympy.parsing.sympy_parser import parse_expr, standard_transformations, "
      "implicit_multiplication_application, convert_xor\n"
      "_T = standard_transformations + (implicit_multiplication_application, convert_xor)\n"
      "_a = parse_expr(" + nlohmann::json(a).dump() + ", transformations=_T)\n"
      "_b = parse_expr(" + nlohmann::json(b).dump() + ", transformations=_T)\n"
      "print('EQ' if simplify(nsimplify(_a) - nsimplify(_b)) == 0 else 'NE')\n";
  ExecResult r = session_->execute(code, sympy_timeout_s_);
  return r.ok && r.stdout_text == "EQ\n";
}

}  // namespace agentrl::envs::codetool
