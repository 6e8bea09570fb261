// Specification of the shared string helpers (core/strings.h).
#include "agentrl/core/strings.h"

#include <gtest/gtest.h>

namespace agentrl::strings {
namespace {

TEST(Strings, TrimRemovesAsciiWhitespaceOnBothEndsOnly) {
  EXPECT_EQ(trim(" \t\n\r\f\va b\t\n"), "a b");
  EXPECT_EQ(trim(" \n "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\xc2\xa0x\xc2\xa0"), "\xc2\xa0x\xc2\xa0");  // NBSP is not ASCII whitespace
}

TEST(Strings, IsBlankMatchesTrimEmpty) {
  for (const char* s : {"", " ", "\t\r\n", "x", " x ", "\xc2\xa0"})
    EXPECT_EQ(is_blank(s), trim(s).empty()) << '"' << s << '"';
}

TEST(Strings, LowerAsciiLeavesUtf8Untouched) {
  EXPECT_EQ(lower_ascii("AbC-Z \xc3\x84"), "abc-z \xc3\x84");  // Ä stays as it is
}

TEST(Strings, ReplaceAllDoesNotRescanInsertedText) {
  EXPECT_EQ(replace_all("a/b/c", "/", " | "), "a | b | c");
  EXPECT_EQ(replace_all("aaa", "a", "aa"), "aaaaaa");
  EXPECT_EQ(replace_all("aaaa", "aa", "b"), "bb");
  EXPECT_EQ(replace_all("abc", "", "x"), "abc");
}

TEST(Strings, JoinStartsAndEnds) {
  EXPECT_EQ(join({}, ", "), "");
  EXPECT_EQ(join({"a"}, ", "), "a");
  EXPECT_EQ(join({"a", "", "c"}, ", "), "a, , c");
  EXPECT_TRUE(starts_with("prefix-rest", "prefix"));
  EXPECT_FALSE(starts_with("pre", "prefix"));
  EXPECT_TRUE(ends_with("model.safetensors", ".safetensors"));
  EXPECT_FALSE(ends_with("x", ".safetensors"));
  EXPECT_TRUE(ends_with("x", ""));
}

}  // namespace
}  // namespace agentrl::strings
