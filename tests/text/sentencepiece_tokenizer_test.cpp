// Specification of SentencePieceTokenizer and train_sentencepiece.
#include "agentrl/text/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/text/chat_template.h"
#include "agentrl/text/tokenizer.h"
#include "text_test_util.h"

namespace agentrl::text {
namespace {

std::string test_dir(const std::string& name) {
  std::string d = testing::scratch_dir() + "/sp/" + name;
  std::filesystem::create_directories(d);
  return d;
}

// A deterministic env-like corpus (~120 KB): sentences from a small
// vocabulary with punctuation, numbers, indentation.
std::string make_corpus() {
  static const char* words[] = {"you", "are", "in", "the", "middle", "of", "a", "room", "looking", "quickly",
                                "around", "see", "cabinet", "drawer", "countertop", "fridge", "go", "to", "take",
                                "put", "search", "click", "buy", "now", "price", "size", "color", "red", "blue",
                                "shoes", "instruction", "observation", "action", "think", "answer", "query"};
  const int nwords = sizeof words / sizeof words[0];
  std::ostringstream out;
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int line = 0; line < 3000; ++line) {
    int n = 4 + next() % 12;
    if (line % 7 == 0) out << "  ";
    for (int w = 0; w < n; ++w) out << (w ? " " : "") << words[next() % nwords];
    out << (line % 3 ? "." : " [" + std::to_string(next() % 1000) + "]") << "\n";
  }
  return out.str();
}

std::string corpus_path() {
  static std::string path = [] {
    std::string p = test_dir("corpus") + "/corpus.txt";
    std::ofstream(p) << make_corpus();
    return p;
  }();
  return path;
}

std::string trained_dir() {
  static std::string dir = [] {
    std::string d = test_dir("model_a");
    train_sentencepiece(corpus_path(), 320, d);
    return d;
  }();
  return dir;
}

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SentencePieceTest, TrainWritesModelAndConfigWithChatMlRoles) {
  std::string dir = trained_dir();
  ASSERT_TRUE(std::filesystem::exists(dir + "/tokenizer.model"));
  ASSERT_TRUE(std::filesystem::exists(dir + "/tokenizer_config.json"));
  auto tok = load_tokenizer(dir);
  EXPECT_EQ(tok->vocab_size(), 320);
  auto im_end = tok->piece_to_id("<|im_end|>");
  ASSERT_TRUE(im_end.has_value());
  EXPECT_EQ(tok->eos_id(), im_end);
  EXPECT_EQ(tok->pad_id(), tok->piece_to_id("<|endoftext|>"));
  EXPECT_EQ(tok->bos_id(), std::nullopt);
  EXPECT_TRUE(tok->is_special(*im_end));
  EXPECT_NE(read_all(dir + "/tokenizer_config.json").find("<|im_start|>"), std::string::npos);
}

TEST(SentencePieceTest, TrainingIsDeterministic) {
  // Same corpus, options and output path (the model records its path) twice.
  std::string other = test_dir("model_b");
  train_sentencepiece(corpus_path(), 320, other);
  std::string first = read_all(other + "/tokenizer.model");
  train_sentencepiece(corpus_path(), 320, other);
  std::string second = read_all(other + "/tokenizer.model");
  EXPECT_FALSE(first.empty());
  EXPECT_TRUE(first == second) << "two trainings gave different models";
}

TEST(SentencePieceTest, BpeModelTypeTrainsToo) {
  std::string dir = test_dir("model_bpe");
  SentencePieceTrainOptions opt;
  opt.model_type = "bpe";
  train_sentencepiece(corpus_path(), 300, dir, opt);
  auto tok = load_tokenizer(dir);
  EXPECT_EQ(tok->vocab_size(), 300);
  EXPECT_EQ(tok->decode(tok->encode("take the red shoes")), "take the red shoes");
}

TEST(SentencePieceTest, DigitsAreSplitUnlessOptionsSayNot) {
  // Numbers that recur: with digits split each is one piece per digit;
  // without, frequent runs merge, yet never with a letter.
  const std::string corpus = test_dir("digits") + "/corpus.txt";
  {
    std::ofstream out(corpus);
    for (int i = 0; i < 400; ++i) out << "room " << (i % 7) * 1111 << " year 2024 code [" << i % 50 << "]\n";
  }
  SentencePieceTrainOptions opt;
  opt.model_type = "bpe";
  opt.hard_vocab_limit = false;
  const std::string split_dir = test_dir("model_digits_split"), merged_dir = test_dir("model_digits_merged");
  train_sentencepiece(corpus, 400, split_dir, opt);
  opt.split_digits = false;
  train_sentencepiece(corpus, 400, merged_dir, opt);
  auto split = load_tokenizer(split_dir), merged = load_tokenizer(merged_dir);
  auto longest_number_piece = [](const Tokenizer& tok) {
    size_t longest = 0;
    for (int id = 0; id < tok.vocab_size(); ++id) {
      const std::string p = tok.decode({id});
      if (!p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
        longest = std::max(longest, p.size());
    }
    return longest;
  };
  const size_t longest_split = longest_number_piece(*split), longest_merged = longest_number_piece(*merged);
  EXPECT_EQ(longest_split, 1u);
  EXPECT_GE(longest_merged, 2u);
  EXPECT_EQ(merged->decode(merged->encode("room [123] 4567")), "room [123] 4567");
}

TEST(SentencePieceTest, DecodeInvertsEncodeIncludingUnseenCharacters) {
  auto tok = load_tokenizer(trained_dir());
  for (std::string text : {"go to the fridge", "  two  spaces\tand tab\nnew line\n\n", "emoji 😀 and 日本語 ü",
                           "price 12345.67", " leading space"}) {
    EXPECT_EQ(tok->decode(tok->encode(text)), text);
    std::string joined;
    for (TokenId id : tok->encode(text)) joined += tok->token_bytes(id);
    EXPECT_EQ(joined, text);
  }
}

TEST(SentencePieceTest, NewlineUsesByteFallbackPiece) {
  auto tok = load_tokenizer(trained_dir());
  // "\n" never occurs inside a training line, so only byte fallback covers it.
  EXPECT_EQ(tok->encode("\n"), std::vector<TokenId>{*tok->piece_to_id("<0x0A>")});
}

TEST(SentencePieceTest, ChatMlTokensAreSingleSpecialTokens) {
  auto tok = load_tokenizer(trained_dir());
  auto ids = tok->encode("<|im_start|>user\nhi<|im_end|>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), *tok->piece_to_id("<|im_start|>"));
  EXPECT_EQ(ids.back(), *tok->piece_to_id("<|im_end|>"));
  EXPECT_EQ(tok->decode(ids, /*skip_special_tokens=*/true), "user\nhi");
}

TEST(SentencePieceTest, TrainedModelDetectsAndRendersChatMl) {
  auto tok = load_tokenizer(trained_dir());
  auto tpl = ChatTemplate::create("auto", tok, trained_dir());
  ASSERT_EQ(tpl->name(), "chatml");
  std::vector<ChatMessage> prompt = {{"user", "go to the fridge"}};
  std::vector<ChatMessage> obs = {{"tool", "you see a cabinet"}};
  auto full = tpl->render({prompt[0], {"assistant", "take red shoes"}, obs[0]}, true);
  std::vector<TokenId> built = tpl->prompt_tokens(prompt);
  auto content = tok->encode("take red shoes", false, false);
  built.insert(built.end(), content.begin(), content.end());
  auto end = tpl->assistant_end_tokens();
  built.insert(built.end(), end.begin(), end.end());
  auto more = tpl->continuation_tokens(obs);
  built.insert(built.end(), more.begin(), more.end());
  EXPECT_EQ(built, full.ids);
  EXPECT_EQ(tpl->stop_token_ids().front(), *tok->piece_to_id("<|im_end|>"));
}

TEST(SentencePieceTest, TooLargeVocabularyIsConfigErrorWithSentencePieceMessage) {
  try {
    train_sentencepiece(corpus_path(), 100000, test_dir("too_big"));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Vocabulary size too high"), std::string::npos) << e.what();
  }
}

TEST(SentencePieceTest, SoftVocabLimitGivesWhatTheCorpusSupportsAndNoMore) {
  // The request the hard limit refuses above is an upper bound here: the
  // model has fewer pieces than asked, more than the byte pieces alone, and
  // still round-trips text.
  SentencePieceTrainOptions opt;
  opt.model_type = "bpe";
  opt.hard_vocab_limit = false;
  const std::string dir = test_dir("soft_limit");
  train_sentencepiece(corpus_path(), 100000, dir, opt);
  auto tok = load_tokenizer(dir);
  EXPECT_LT(tok->vocab_size(), 100000);
  EXPECT_GT(tok->vocab_size(), 256 + 3);
  EXPECT_EQ(tok->decode(tok->encode("take the red shoes")), "take the red shoes");
  // With a limit the corpus can meet, the soft limit gives exactly it.
  const std::string exact = test_dir("soft_limit_exact");
  train_sentencepiece(corpus_path(), 300, exact, opt);
  EXPECT_EQ(load_tokenizer(exact)->vocab_size(), 300);
}

TEST(SentencePieceTest, ExtraUserSymbolsAreSinglePieces) {
  SentencePieceTrainOptions opt;
  opt.user_defined_symbols.push_back("<action>");
  opt.user_defined_symbols.push_back("</action>");
  const std::string dir = test_dir("symbols");
  train_sentencepiece(corpus_path(), 320, dir, opt);
  auto tok = load_tokenizer(dir);
  auto ids = tok->encode("<action>go to the fridge</action>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(tok->token_bytes(ids.front()), "<action>");
  EXPECT_EQ(tok->token_bytes(ids.back()), "</action>");
}

TEST(SentencePieceTest, MissingCorpusIsIoError) {
  try {
    train_sentencepiece("/nonexistent/corpus.txt", 100, test_dir("none"));
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus.txt"), std::string::npos);
  }
}

TEST(SentencePieceTest, GarbageModelFileIsFormatErrorNamingIt) {
  std::string dir = test_dir("garbage");
  std::ofstream(dir + "/tokenizer.model") << "this is not a protobuf";
  try {
    load_tokenizer(dir);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/tokenizer.model"), std::string::npos) << e.what();
  }
}

TEST(LoadTokenizerTest, EmptyDirectoryIsConfigError) {
  std::string dir = test_dir("empty");
  try {
    load_tokenizer(dir);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no tokenizer in " + dir), std::string::npos) << e.what();
  }
}

TEST(LoadTokenizerTest, PrefersTokenizerModelOverANonByteLevelTokenizerJson) {
  // Mistral/Llama-2 directories ship a Metaspace tokenizer.json next to tokenizer.model.
  std::string dir = test_dir("both_files");
  std::filesystem::copy_file(trained_dir() + "/tokenizer.model", dir + "/tokenizer.model",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir + "/tokenizer.json")
      << R"({"pre_tokenizer":{"type":"Metaspace"},"decoder":{"type":"Metaspace"},"model":{"type":"BPE","vocab":{},"merges":[]}})";
  auto tok = load_tokenizer(dir);
  EXPECT_NE(dynamic_cast<const SentencePieceTokenizer*>(tok.get()), nullptr);
}

TEST(LoadTokenizerTest, MalformedTokenizerJsonIsFormatErrorNamingIt) {
  std::string dir = test_dir("badjson");
  std::ofstream(dir + "/tokenizer.json") << "{ not json";
  try {
    load_tokenizer(dir);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/tokenizer.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace agentrl::text
