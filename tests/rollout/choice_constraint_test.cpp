// Specifications of ChoiceConstraint on the rollout tests' byte tokenizer
// (ids 0-255 = bytes, 256-258 = ChatML specials) extended by multi-byte
// pieces that cross word boundaries (259+) and one piece without bytes.
#include <gtest/gtest.h>

#include <algorithm>

#include "agentrl/rollout/choice_constraint.h"
#include "rollout/rollout_test_support.h"

using namespace agentrl;
using namespace agentrl::rollout;

namespace {

const std::vector<std::string> kPieces = {"go", "go to ", "fridge", "fridge 1", "desk", "k 2", "xyz", ""};

class PieceTokenizer : public agentrl::testing::ByteTokenizer {
 public:
  static constexpr int32_t kEos = kImEnd, kFirstPiece = 259;
  static int32_t piece(const std::string& p) {
    for (size_t i = 0; i < kPieces.size(); ++i)
      if (kPieces[i] == p) return kFirstPiece + static_cast<int32_t>(i);
    return -1;
  }
  std::string token_bytes(text::TokenId id) const override {
    return id < kFirstPiece ? ByteTokenizer::token_bytes(id) : kPieces[static_cast<size_t>(id - kFirstPiece)];
  }
  int32_t vocab_size() const override { return kFirstPiece + static_cast<int32_t>(kPieces.size()); }
};

const std::vector<std::string> kCandidates = {"go to fridge 1", "go to desk 2", "look", "look at lamp"};

std::vector<int32_t> allowed_ids(const ChoiceConstraint& c, std::string_view generated) {
  auto mask = c.allowed(kCandidates, generated, {PieceTokenizer::kEos});
  std::vector<int32_t> ids;
  for (size_t t = 0; t < mask.size(); ++t)
    if (mask[t]) ids.push_back(static_cast<int32_t>(t));
  return ids;
}

int32_t byte(char ch) { return static_cast<unsigned char>(ch); }

}  // namespace

TEST(ChoiceConstraint, AtTheStartEveryTokenThatBeginsACandidateAndNothingElse) {
  PieceTokenizer tok;
  ChoiceConstraint c(tok);
  ASSERT_EQ(c.vocab_size(), tok.vocab_size());
  EXPECT_EQ(allowed_ids(c, ""), (std::vector<int32_t>{byte('g'), byte('l'), PieceTokenizer::piece("go"),
                                                      PieceTokenizer::piece("go to ")}));
}

TEST(ChoiceConstraint, PiecesMayCrossWordsAndEndInsideACandidate) {
  PieceTokenizer tok;
  ChoiceConstraint c(tok);
  // "fridge" and "fridge 1" both fit after "go to "; "des" + "k 2" completes
  // "desk 2" across the piece boundary; "xyz" fits nowhere.
  EXPECT_EQ(allowed_ids(c, "go to "), (std::vector<int32_t>{byte('d'), byte('f'), PieceTokenizer::piece("fridge"),
                                                            PieceTokenizer::piece("fridge 1"),
                                                            PieceTokenizer::piece("desk")}));
  EXPECT_EQ(allowed_ids(c, "go to des"), (std::vector<int32_t>{byte('k'), PieceTokenizer::piece("k 2")}));
}

TEST(ChoiceConstraint, EndTokensOnlyOnceTheTextIsACandidate) {
  PieceTokenizer tok;
  ChoiceConstraint c(tok);
  // "look" is complete and a prefix of "look at lamp": end or go on.
  EXPECT_EQ(allowed_ids(c, "look"), (std::vector<int32_t>{byte(' '), PieceTokenizer::kEos}));
  EXPECT_EQ(allowed_ids(c, "go to desk 2"), (std::vector<int32_t>{PieceTokenizer::kEos}));
  EXPECT_EQ(allowed_ids(c, "loo"), (std::vector<int32_t>{byte('k')}));
}

TEST(ChoiceConstraint, TextOffEveryCandidateAllowsNothing) {
  PieceTokenizer tok;
  ChoiceConstraint c(tok);
  EXPECT_TRUE(allowed_ids(c, "go to sofa").empty());
  EXPECT_TRUE(allowed_ids(c, "look at lamp and more").empty());
  auto none = c.allowed({}, "", {PieceTokenizer::kEos});
  EXPECT_EQ(std::count(none.begin(), none.end(), uint8_t{1}), 0);
}

TEST(ChoiceConstraint, EmptyPiecesAndEndTokensOutsideTheVocabularyAreNeverAllowed) {
  PieceTokenizer tok;
  ChoiceConstraint c(tok);
  auto mask = c.allowed({"a"}, "a", {PieceTokenizer::kEos, -1, 100000});
  EXPECT_EQ(mask.size(), static_cast<size_t>(tok.vocab_size()));
  EXPECT_EQ(mask[static_cast<size_t>(PieceTokenizer::piece(""))], 0);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), uint8_t{1}), 1);
}
