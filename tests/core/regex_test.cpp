// Specification of agentrl::Regex (core/regex.h): Python re.search semantics
// for the patterns the text protocols use.
#include <gtest/gtest.h>

#include "agentrl/core/error.h"
#include "agentrl/core/regex.h"

namespace agentrl {
namespace {

TEST(Regex, SearchFindsTheLeftmostMatchWithItsGroups) {
  Regex r("(?s)```(?:py|python)?\\n(.*?)\\n```", "test");
  const std::string text = "a ```\nx = 1\n``` b ```py\ny\n```";
  auto m = r.search(text);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->begin, 2u);
  EXPECT_EQ(m->end, 15u);
  EXPECT_EQ(m->group(text, 1), "x = 1");
  auto second = r.search(text, m->end);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->group(text, 1), "y");
  EXPECT_FALSE(r.search(text, second->end));
  EXPECT_FALSE(r.search(text, text.size() + 1));
}

TEST(Regex, UnsetGroupsAndNonUtf8SubjectsAreHandled) {
  Regex r("(a)|(b)", "test");
  auto m = r.search("xb");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->group("xb", 1), "");
  EXPECT_EQ(m->group("xb", 2), "b");
  // Invalid UTF-8 in the text does not stop the search.
  EXPECT_TRUE(Regex("b", "test").search(std::string("\xff\xfe") + "b"));
}

TEST(Regex, APatternThatDoesNotCompileNamesWhereAndTheOffset) {
  try {
    Regex("(unclosed", "codetool stop_regex");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("codetool stop_regex"), std::string::npos) << what;
    EXPECT_NE(what.find("(unclosed"), std::string::npos) << what;
    EXPECT_NE(what.find("offset"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace agentrl
