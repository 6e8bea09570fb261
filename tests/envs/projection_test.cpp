// verl-agent's response projection, case by case as its projection.py
// (agent_system/environments/env_package/alfworld/projection.py, verl-agent
// d0b9724) behaves on the same input.
#include <gtest/gtest.h>

#include "agentrl/envs/projection.h"

namespace agentrl::envs {
namespace {

struct Case {
  const char* response;
  const char* action;
  bool valid;
};

TEST(VerlAgentProjection, TableOfTheOriginalsBehaviour) {
  const Case cases[] = {
      // The plain case: the action block, stripped.
      {"<think>I see a bed.</think><action> go to bed 1 </action>", "go to bed 1", true},
      // Upper case anywhere is folded: the tags match and the action is lower-cased.
      {"<think>x</think><ACTION>Go To Bed 1</ACTION>", "go to bed 1", true},
      // Two action blocks: the first one counts.
      {"<think>x</think><action>open drawer 1</action> or <action>go to desk 1</action>", "open drawer 1", true},
      // No think block: the action is taken, the response is invalid.
      {"<action>look</action>", "look", false},
      // Only one of the think tags: invalid.
      {"<think>hm <action>look</action>", "look", false},
      // The think check is case-sensitive on the original text.
      {"<THINK>x</THINK><action>look</action>", "look", false},
      // A CJK ideograph anywhere: invalid.
      {"<think>\xe6\x88\x91\xe6\x83\xb3</think><action>look</action>", "look", false},
      // Tags out of order: Python's slice is empty, found counts as valid.
      {"<think>x</think></action>look<action>", "", true},
      // No tags: invalid, and the env gets the last 30 characters, lower-cased.
      {"I would like to GO TO the kitchen counter now please", "the kitchen counter now please", false},
      {"short", "short", false},
  };
  for (const auto& c : cases) {
    Projection p = verl_agent_projection(c.response);
    EXPECT_EQ(p.action, c.action) << c.response;
    EXPECT_EQ(p.valid, c.valid) << c.response;
  }
}

TEST(VerlAgentProjection, TheFallbackCountsCodePointsNotBytes) {
  // 30 code points = "\xc3\xa9" (one code point, two bytes) + 29 ASCII.
  const std::string tail29 = "abcdefghijklmnopqrstuvwxyz012";
  const std::string response = "XYZ\xc3\xa9" + tail29;
  EXPECT_EQ(verl_agent_projection(response).action, "\xc3\xa9" + tail29);
  EXPECT_EQ(last_code_points("ab", 30), "ab");
  EXPECT_EQ(last_code_points("", 30), "");
}

TEST(VerlAgentProjection, CjkRangeIsTheUnifiedIdeographsBlockOnly) {
  EXPECT_TRUE(has_cjk_unified_ideograph("a\xe4\xb8\x80"));   // U+4E00
  EXPECT_TRUE(has_cjk_unified_ideograph("\xe9\xbf\xbf z"));  // U+9FFF
  EXPECT_FALSE(has_cjk_unified_ideograph("\xe3\x81\x82"));   // U+3042 hiragana: outside the original's range
  EXPECT_FALSE(has_cjk_unified_ideograph("\xea\xb0\x80"));   // U+AC00 hangul
  EXPECT_FALSE(has_cjk_unified_ideograph("caf\xc3\xa9"));
}

}  // namespace
}  // namespace agentrl::envs
