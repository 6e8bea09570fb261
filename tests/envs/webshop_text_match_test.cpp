// difflib / fuzzywuzzy / normalize.py equivalents. Expected values come from
// CPython 3.11's difflib and random modules and from fuzzywuzzy 0.18's
// token_set algorithm run on difflib (computed with python3, see
// docs/parts/webshop-reliability.md for the commands).
#include <gtest/gtest.h>

#include "agentrl/envs/webshop/text_match.h"

using namespace agentrl::envs::webshop;

static double ratio(const std::string& a, const std::string& b) {
  return sequence_matcher_ratio(utf8_to_u32(a), utf8_to_u32(b));
}

TEST(WebshopSequenceMatcher, MatchesDifflibOnShortStrings) {
  EXPECT_DOUBLE_EQ(ratio("abcd", "bcde"), 0.75);
  EXPECT_DOUBLE_EQ(ratio("tea tree", "tea trees"), 0.9411764705882353);
  EXPECT_DOUBLE_EQ(ratio("private", "privately"), 0.875);
  EXPECT_DOUBLE_EQ(ratio("", ""), 1.0);
}

TEST(WebshopSequenceMatcher, AppliesAutojunkToSecondSequenceOf200OrMore) {
  const std::string s1 =
      "Gentle everyday shampoo with argan oil, coconut and aloe for dry damaged hair; sulfate free, paraben free, "
      "color safe formula that leaves hair soft, shiny and manageable. Made in USA, cruelty free and vegan.";
  const std::string s2 =
      "Everyday gentle shampoo: argan oil + coconut + aloe vera for dry, damaged hair. Sulfate-free, paraben-free, "
      "colour-safe; leaves hair soft and shiny. Made in the USA. Cruelty-free & vegan formula!!";
  ASSERT_EQ(s1.size(), 207u);
  ASSERT_EQ(s2.size(), 196u);
  EXPECT_DOUBLE_EQ(ratio(s1, s2), 0.739454094292804);    // b = s2: 196 < 200, no autojunk
  EXPECT_DOUBLE_EQ(ratio(s2, s1), 0.15384615384615385);  // b = s1: popular chars dropped
}

TEST(WebshopSequenceMatcher, AllPopularElementsGiveZero) {
  std::string a, b;
  for (int i = 0; i < 6; ++i) {
    a += "the quick brown fox jumps over the lazy dog ";
    b += "a quick brown cat jumps over the lazy dogs ";
  }
  EXPECT_DOUBLE_EQ(ratio(a, b), 0.0);  // difflib with autojunk: every char of b is popular
}

TEST(WebshopFuzz, TokenSetRatioMatchesFuzzywuzzy) {
  EXPECT_EQ(token_set_ratio("essential oil", "essential oils"), 96);
  EXPECT_EQ(token_set_ratio("tea bag", "tea tree"), 60);
  EXPECT_EQ(token_set_ratio("powder snow", "cool powder snow"), 100);
  EXPECT_EQ(token_set_ratio("grey", "('amount', 'pack of 12')"), 0);
  EXPECT_EQ(token_set_ratio("XL", "('size', 'XL')"), 100);
  EXPECT_EQ(token_set_ratio("Long-Lasting!", "lasting long"), 100);
  EXPECT_EQ(token_set_ratio("3 fl oz (pack of 1)", "3 fl oz (pack of 2)"), 94);
  EXPECT_EQ(token_set_ratio("easy clean", "easy to clean"), 100);
}

TEST(WebshopFuzz, ForceAsciiDropsLatin1AndKeepsUnderscore) {
  EXPECT_EQ(token_set_ratio("caf\xC3\xA9 cr\xC3\xA8me", "cafe creme"), 89);
  EXPECT_EQ(token_set_ratio("x_y z", "x y z"), 80);
}

TEST(WebshopFuzz, EmptyAfterProcessingScoresZero) {
  EXPECT_EQ(token_set_ratio("", "abc"), 0);
  EXPECT_EQ(token_set_ratio("!!!", "abc"), 0);
}

TEST(WebshopColors, NormalizeColorReturnsFirstColorSetEntryContained) {
  EXPECT_EQ(normalize_color("z2-pink"), "pink");
  // "dark" precedes "heather" in COLOR_SET.
  EXPECT_EQ(normalize_color("dark heather"), "dark");
  EXPECT_EQ(normalize_color("3t280"), "3t280");
  EXPECT_EQ(color_set().size(), 102u);
}

TEST(WebshopNouns, DropsFunctionWordsNumbersAndAdjectives) {
  auto n = title_nouns("Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD Soundbar");
  std::vector<std::string> expected = {"saireed", "ul", "prong", "power", "cord", "jbl", "bar",
                                       "bar",     "channel", "4k", "hd",    "soundbar"};
  EXPECT_EQ(n, expected);
}

TEST(WebshopNouns, KeepsAbbreviationsWithInnerDots) {
  auto n = title_nouns("Mens D.O.N. Issue 2");
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0], "d.o.n.");
  EXPECT_EQ(n[1], "issue");
}
