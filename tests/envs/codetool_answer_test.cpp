// Specification of final-answer extraction and equivalence (issue 9: a table
// of at least 40 equivalent and non-equivalent pairs). Expected verdicts are
// mathematical facts worked out by hand.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "agentrl/envs/codetool/answer.h"

namespace agentrl::envs::codetool {
namespace {

TEST(CodetoolAnswer, LastBoxedTakesTheLastBalancedGroup) {
  EXPECT_EQ(last_boxed("first \\boxed{1} then \\boxed{\\frac{1}{2}} done"), "\\frac{1}{2}");
  EXPECT_EQ(last_boxed("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
  EXPECT_EQ(last_boxed("\\fbox{7}"), "7");
  EXPECT_FALSE(last_boxed("no answer here").has_value());
  EXPECT_FALSE(last_boxed("\\boxed{\\frac{1}{2}").has_value());  // never closes
}

TEST(CodetoolAnswer, NormalisationCanonicalForms) {
  EXPECT_EQ(normalize_answer(" \\dfrac12 "), "\\frac{1}{2}");
  EXPECT_EQ(normalize_answer("\\left( 1, 2 \\right)"), "(1,2)");
  EXPECT_EQ(normalize_answer("90^\\circ"), "90");
  EXPECT_EQ(normalize_answer("50\\%"), "50");
  EXPECT_EQ(normalize_answer("12\\text{ cm}"), "12");
  EXPECT_EQ(normalize_answer("x = 5"), "5");
  EXPECT_EQ(normalize_answer("1,000,000"), "1000000");
  EXPECT_EQ(normalize_answer("\\$4.50"), "4.50");
  EXPECT_EQ(normalize_answer("\\sqrt2"), "\\sqrt{2}");
}

TEST(CodetoolAnswer, EvaluatesArithmeticLatex) {
  EXPECT_DOUBLE_EQ(*evaluate_number("\\frac{3}{4}"), 0.75);
  EXPECT_DOUBLE_EQ(*evaluate_number("2\\sqrt{9}"), 6.0);
  EXPECT_DOUBLE_EQ(*evaluate_number("2^{10}-1"), 1023.0);
  EXPECT_DOUBLE_EQ(*evaluate_number("-\\frac{1}{4}"), -0.25);
  EXPECT_DOUBLE_EQ(*evaluate_number("\\sqrt[3]{27}"), 3.0);
  EXPECT_FALSE(evaluate_number("x+1").has_value());
}

// (predicted, gold, equivalent)
const std::vector<std::tuple<const char*, const char*, bool>> kPairs = {
    {"42", "42", true},
    {"042", "42", true},
    {"-0", "0", true},
    {"0.5", "\\frac12", true},
    {"\\dfrac{1}{2}", "\\frac{1}{2}", true},
    {"\\tfrac{3}{4}", "0.75", true},
    {"1/2", "\\frac{1}{2}", true},
    {"\\frac{2}{4}", "\\frac{1}{2}", true},
    {"50\\%", "50", true},
    {"90^\\circ", "90", true},
    {"90^{\\circ}", "90", true},
    {"12\\text{ cm}", "12", true},
    {"12 cm", "12", true},
    {"\\text{east}", "east", true},
    {"x = 5", "5", true},
    {"1,000", "1000", true},
    {"\\$18.90", "18.9", true},
    {"\\left(1,2\\right)", "(1, 2)", true},
    {"(1, \\frac{1}{2})", "(1,0.5)", true},
    {"2\\sqrt{3}", "\\sqrt{12}", true},
    {"\\sqrt2", "\\sqrt{2}", true},
    {"\\frac{\\sqrt{2}}{2}", "0.70710678118", true},
    {"3.0", "3", true},
    {"\\pi", "3.14159265358979", true},
    {"2\\pi", "6.283185307179586", true},
    {"10^{3}", "1000", true},
    {"\\!1\\,000", "1000", true},
    {"5.", "5", true},
    {".5", "0.5", true},
    {"123456789012345678901234567890", "123456789012345678901234567890", true},
    {"$7$", "7", true},
    {"43", "42", false},
    {"-42", "42", false},
    {"0.5", "\\frac{1}{3}", false},
    {"\\frac{1}{2}", "\\frac{2}{1}", false},
    {"(1,2)", "(2,1)", false},
    {"(1,2)", "[1,2]", false},
    {"(1,2)", "(1,2,3)", false},
    {"123456789012345678901234567890", "123456789012345678901234567891", false},
    {"\\sqrt{2}", "1.4142", false},
    {"east", "west", false},
    {"", "0", false},
    {"3.1416", "\\pi", false},
    {"1000", "100", false},
    {"2^{10}", "1000", false},
};

TEST(CodetoolAnswer, EquivalenceTableWithoutSympy) {
  ASSERT_GE(kPairs.size(), 40u);
  for (auto& [pred, gold, eq] : kPairs) EXPECT_EQ(answers_match(pred, gold), eq) << pred << " vs " << gold;
}

TEST(CodetoolAnswer, LatexToSympyTranslatesFractionsAndRoots) {
  EXPECT_EQ(latex_to_sympy("\\frac{x+1}{2}"), "((x+1)/(2))");
  EXPECT_EQ(latex_to_sympy("\\sqrt{x}^{2}"), "((x)**(1/(2)))**(2)");
  EXPECT_EQ(latex_to_sympy("\\alpha"), "");
}

TEST(CodetoolAnswer, SymbolicEquivalenceRunsSympyInTheSandbox) {
  SandboxConfig sb;
  if (!probe_sandbox(sb).available) GTEST_SKIP() << "bubblewrap unusable here: " << probe_sandbox(sb).reason;
  AnswerChecker checker(sb, /*use_sympy=*/true, 5.0);
  EXPECT_TRUE(checker.equivalent("\\frac{x^2-1}{x-1}", "x+1"));
  EXPECT_TRUE(checker.equivalent("(a+b)^2", "a^2+2ab+b^2"));
  EXPECT_FALSE(checker.equivalent("(a+b)^2", "a^2+b^2"));
  EXPECT_TRUE(checker.boxed_correct("so \\boxed{2x+2x}", "4x"));
  // What final_answer() prints for sympy values.
  EXPECT_TRUE(checker.equivalent("sqrt(2)/2", "\\frac{\\sqrt{2}}{2}"));
  EXPECT_FALSE(checker.equivalent("sqrt(3)", "\\sqrt{2}"));
  AnswerChecker no_sympy(sb, /*use_sympy=*/false, 5.0);
  EXPECT_FALSE(no_sympy.equivalent("\\frac{x^2-1}{x-1}", "x+1"));
}

TEST(CodetoolAnswer, SympyTimeoutCountsAsNotEquivalent) {
  SandboxConfig sb;
  if (!probe_sandbox(sb).available) GTEST_SKIP() << "bubblewrap unusable here: " << probe_sandbox(sb).reason;
  AnswerChecker checker(sb, /*use_sympy=*/true, 0.05);  // too short even to import sympy
  EXPECT_FALSE(checker.equivalent("\\frac{x^2-1}{x-1}", "x+1"));
}

}  // namespace
}  // namespace agentrl::envs::codetool
