// Specification of Deep Search scoring, parsing and data formats. Expected
// scores are computed by hand from the SQuAD v1.1 definitions.
#include <gtest/gtest.h>

#include <fstream>

#include "agentrl/core/error.h"
#include "agentrl/envs/deepsearch/deepsearch_env.h"
#include "agentrl/envs/deepsearch/qa.h"

namespace agentrl::envs::deepsearch {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::string(AGENTRL_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(DeepsearchQa, NormalisationFollowsSquad) {
  EXPECT_EQ(normalize_answer("The  Eiffel Tower!"), "eiffel tower");
  EXPECT_EQ(normalize_answer("an apple, a pear"), "apple pear");
  EXPECT_EQ(normalize_answer("  U.S.A. "), "usa");
  EXPECT_EQ(normalize_answer("Theatre"), "theatre");  // only whole-word articles
}

TEST(DeepsearchQa, ExactMatchAgainstAnyGold) {
  EXPECT_EQ(exact_match("the Brastholm", {"Lornhaven", "brastholm"}), 1.0);
  EXPECT_EQ(exact_match("Brastholm city", {"Brastholm"}), 0.0);
}

TEST(DeepsearchQa, F1IsWordOverlap) {
  // pred {kesh, industries, ltd} vs gold {kesh, industries}: P = 2/3, R = 1, F1 = 0.8.
  EXPECT_NEAR(f1_score("Kesh Industries Ltd", {"Kesh Industries"}), 0.8, 1e-12);
  // Best over golds; no overlap -> 0.
  EXPECT_NEAR(f1_score("Kesh", {"Mira Tolsk", "Kesh Industries"}), 2.0 / 3.0, 1e-12);
  EXPECT_EQ(f1_score("nothing", {"Kesh"}), 0.0);
}

TEST(DeepsearchQa, ParsesTheLastActionTag) {
  auto a = parse_action("<think>hm</think>\n<search> who founded Kesh </search>", true);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, ActionKind::kSearch);
  EXPECT_EQ(a->content, "who founded Kesh");
  auto b = parse_action("<search>x</search> then <answer> Mira </answer>", true);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->kind, ActionKind::kAnswer);
  EXPECT_EQ(b->content, "Mira");
  auto c = parse_action("<access> w12 </access>", true);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, ActionKind::kAccess);
  EXPECT_EQ(c->content, "w12");
}

TEST(DeepsearchQa, FirstMatchParsingIsSearchR1sRegex) {
  // re.search(r'<(search|answer)>(.*?)</\1>', text, re.DOTALL) on the same texts.
  auto a = parse_action("<search> q1 </search> then <answer> A </answer>", false, /*first=*/true);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, ActionKind::kSearch);
  EXPECT_EQ(a->content, "q1");
  // An opening tag without its closing tag is skipped for the next one.
  auto b = parse_action("<answer> unfinished <search>\nq2\n</search>", false, true);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->kind, ActionKind::kSearch);
  EXPECT_EQ(b->content, "q2");
  // The lazy group ends at the first closing tag.
  auto c = parse_action("<answer> x </answer> y </answer>", false, true);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->content, "x");
  // <access> is no tag of Search-R1's: with allow_access off it is ignored.
  auto d = parse_action("<access> w1 </access><answer> z </answer>", false, true);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, ActionKind::kAnswer);
  EXPECT_FALSE(parse_action("no tags at all", false, true));
  // The last-tag default is unchanged.
  EXPECT_EQ(parse_action("<search> q1 </search> then <answer> A </answer>", false)->kind, ActionKind::kAnswer);
}

TEST(DeepsearchQa, RejectsUnparseableTurns) {
  EXPECT_FALSE(parse_action("I will search for it", true));
  EXPECT_FALSE(parse_action("<search> unterminated", true));
  EXPECT_FALSE(parse_action("<search>   </search>", true));
  EXPECT_FALSE(parse_action("<access> w1 </access>", /*allow_access=*/false));
}

TEST(DeepsearchQa, FormatsPassagesLikeSearchR1) {
  std::vector<Passage> docs = {{"7", "\"Kesh\"\nKesh is a company."}, {"9", "\"Mira\"\nMira founded it."}};
  EXPECT_EQ(format_passages(docs, false), "Doc 1(Title: \"Kesh\") Kesh is a company.\nDoc 2(Title: \"Mira\") Mira founded it.\n");
  EXPECT_EQ(format_passages({docs[0]}, true), "Doc 1(Title: \"Kesh\", id: 7) Kesh is a company.\n");
}

TEST(DeepsearchQa, TruncatesObservationsByWords) {
  EXPECT_EQ(truncate_words("one two  three four", 2), "one two  ...");
  EXPECT_EQ(truncate_words("one two", 2), "one two");
}

TEST(DeepsearchQa, LoadsFlashragQa) {
  auto path = write_temp("envs2_nq.jsonl",
                         "{\"id\": \"test_0\", \"question\": \"who?\", \"golden_answers\": [\"A\", \"B\"]}\n\n"
                         "{\"id\": 5, \"question\": \"when?\", \"golden_answers\": [1999]}\n");
  auto items = load_flashrag_qa(path);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].id, "test_0");
  EXPECT_EQ(items[0].golden_answers, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(items[1].id, "5");
  EXPECT_EQ(items[1].golden_answers, (std::vector<std::string>{"1999"}));
}

TEST(DeepsearchQa, DataSourceOfAQaLineIsTheItemsType) {
  auto path = write_temp("envs2_mix.jsonl",
                         "{\"question\": \"who?\", \"golden_answers\": [\"A\"], \"data_source\": \"nq\"}\n"
                         "{\"question\": \"when?\", \"golden_answers\": [\"B\"]}\n");
  auto items = load_flashrag_qa(path);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].type, "nq");
  EXPECT_EQ(items[1].type, "");
  auto bad = write_temp("envs2_mix_bad.jsonl", "{\"question\": \"q\", \"golden_answers\": [\"a\"], \"data_source\": 3}\n");
  try {
    load_flashrag_qa(bad);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":1: \"data_source\" must be a string"), std::string::npos) << e.what();
  }
}

TEST(DeepsearchQa, MalformedQaLineNamesFileAndLine) {
  auto path = write_temp("envs2_nq_bad.jsonl",
                         "{\"question\": \"ok\", \"golden_answers\": [\"a\"]}\n{\"question\": \"no answers\"}\n");
  try {
    load_flashrag_qa(path);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: missing non-empty array field \"golden_answers\""),
              std::string::npos)
        << e.what();
  }
  auto bad_json = write_temp("envs2_nq_badjson.jsonl", "{\"question\": \n");
  EXPECT_THROW(load_flashrag_qa(bad_json), FormatError);
}

TEST(DeepsearchQa, CorpusReaderStreamsWiki18AndReportsBadLines) {
  auto path = write_temp("envs2_corpus.jsonl",
                         "{\"id\": \"1\", \"contents\": \"\\\"Kesh\\\"\\nKesh is a company.\"}\n"
                         "{\"id\": \"2\", \"text\": \"wrong key\"}\n");
  CorpusReader reader(path);
  Passage p;
  ASSERT_TRUE(reader.next(p));
  EXPECT_EQ(p.id, "1");
  EXPECT_EQ(p.title(), "\"Kesh\"");
  EXPECT_EQ(p.text(), "Kesh is a company.");
  try {
    reader.next(p);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: expected an object with a string field \"contents\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace agentrl::envs::deepsearch
