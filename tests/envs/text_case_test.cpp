// python_lower against what CPython 3's str.lower() returns for the same text.
#include <gtest/gtest.h>

#include "agentrl/envs/deepsearch/qa.h"
#include "agentrl/envs/projection.h"
#include "agentrl/envs/text_case.h"

namespace agentrl::envs {
namespace {

TEST(PythonLower, FoldsEveryLetterAsPythonDoes) {
  EXPECT_EQ(python_lower("Put A MUG in Sink 1"), "put a mug in sink 1");
  EXPECT_EQ(python_lower("\xC3\x89TAG\xC3\x88RE Stra\xC3\x9F" "e"), "\xC3\xA9tag\xC3\xA8re stra\xC3\x9F" "e");  // ÉTAGÈRE Straße
  EXPECT_EQ(python_lower("\xD0\x94\xD0\x9E\xD0\x9C"), "\xD0\xB4\xD0\xBE\xD0\xBC");                      // ДОМ -> дом
  EXPECT_EQ(python_lower("\xE6\x9D\xB1\xE4\xBA\xAC"), "\xE6\x9D\xB1\xE4\xBA\xAC");  // 東京: no case, unchanged
}

TEST(PythonLower, ReproducesPythonsSpecialMappings) {
  // 'İstanbul'.lower() == 'i̇stanbul' (i + COMBINING DOT ABOVE)
  EXPECT_EQ(python_lower("\xC4\xB0stanbul"), "i\xCC\x87stanbul");
  // 'ΟΔΟΣ'.lower() == 'οδος' with the final sigma; a lone 'Σ' stays medial.
  EXPECT_EQ(python_lower("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3"), "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82");
  EXPECT_EQ(python_lower("\xCE\xA3"), "\xCF\x83");
  EXPECT_EQ(python_lower("\xCE\xA3\xCE\x9F"), "\xCF\x83\xCE\xBF");  // 'ΣΟ' -> 'σο'
}

TEST(PythonLower, KeepsBytesThatAreNotUtf8) {
  EXPECT_EQ(python_lower(std::string("A\xFF" "B\xC3", 4)), std::string("a\xFF" "b\xC3", 4));
}

TEST(PythonLower, SearchR1AnswerNormalisationAndVerlAgentProjectionFoldNonAsciiLetters) {
  // qa_em.normalize_answer('Ångström THE Café!') == 'ångström café'
  EXPECT_EQ(deepsearch::normalize_answer("\xC3\x85ngstr\xC3\xB6m THE Caf\xC3\xA9!"),
            "\xC3\xA5ngstr\xC3\xB6m caf\xC3\xA9");
  EXPECT_EQ(deepsearch::exact_match("CAF\xC3\x89", {"caf\xC3\xA9"}), 1.0);
  const auto p = verl_agent_projection("<think>x</think><action>Go To \xC3\x89tag\xC3\xA8re 1</action>");
  EXPECT_TRUE(p.valid);
  EXPECT_EQ(p.action, "go to \xC3\xA9tag\xC3\xA8re 1");
}

}  // namespace
}  // namespace agentrl::envs
