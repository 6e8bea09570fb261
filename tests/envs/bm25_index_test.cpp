// Specification of the generic BM25 index (envs/search/bm25_index.h).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agentrl/core/error.h"
#include "agentrl/envs/search/bm25_index.h"

namespace fs = std::filesystem;
using agentrl::envs::search::Bm25Index;
using agentrl::envs::search::Bm25IndexWriter;

namespace {
class Bm25IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("agentrl_bm25_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void build(const std::vector<agentrl::envs::search::IndexDocument>& docs) {
    Bm25IndexWriter w(dir_.string(), true, 2);
    for (const auto& d : docs) w.add(d);
    w.commit();
  }
  fs::path dir_;
};
}  // namespace

TEST_F(Bm25IndexTest, RanksDocumentWithRareMatchingTermFirst) {
  build({{"d1", "red running shoes for men", "p1"},
         {"d2", "blue running shoes", "p2"},
         {"d3", "red wine glass set", "p3"},
         {"d4", "garden hose", "p4"}});
  auto idx = Bm25Index::open(dir_.string());
  auto hits = idx->search("red shoes", 10);
  ASSERT_GE(hits.size(), 3u);
  // d1 matches both terms; d2 and d3 one each.
  EXPECT_EQ(hits[0].id, "d1");
  EXPECT_EQ(hits[0].stored, "p1");
  for (const auto& h : hits) EXPECT_NE(h.id, "d4");
}

TEST_F(Bm25IndexTest, StemsQueryAndDocumentsWithEnglishStemmer) {
  build({{"a", "wireless earbuds charging case", ""}, {"b", "garden chair", ""}});
  auto hits = Bm25Index::open(dir_.string())->search("charged earbud", 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, "a");
}

TEST_F(Bm25IndexTest, StopWordsAloneMatchNothing) {
  build({{"a", "the best of the best", ""}});
  EXPECT_TRUE(Bm25Index::open(dir_.string())->search("the of and", 5).empty());
}

TEST_F(Bm25IndexTest, ShorterDocumentWinsForEqualTermFrequency) {
  // b = 0.4 length normalisation: same tf, shorter doc scores higher.
  build({{"long", "lamp with many many extra words about furniture and decor items", ""}, {"short", "lamp desk", ""}});
  auto hits = Bm25Index::open(dir_.string())->search("lamp", 5);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, "short");
  EXPECT_GT(hits[0].score, hits[1].score);
}

TEST_F(Bm25IndexTest, TopKLimitsResultsAndTiesKeepInsertionOrder) {
  build({{"x1", "mug", ""}, {"x2", "mug", ""}, {"x3", "mug", ""}});
  auto hits = Bm25Index::open(dir_.string())->search("mug", 2);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, "x1");
  EXPECT_EQ(hits[1].id, "x2");
}

TEST_F(Bm25IndexTest, GetReturnsStoredPayloadById) {
  build({{"B000000001", "thing", "{\"asin\": 1}"}});
  auto idx = Bm25Index::open(dir_.string());
  EXPECT_EQ(idx->size(), 1u);
  auto g = idx->get("B000000001");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->stored, "{\"asin\": 1}");
  EXPECT_FALSE(idx->get("nope").has_value());
}

TEST_F(Bm25IndexTest, DuplicateIdReplacesEarlierDocument) {
  build({{"a", "apple", "old"}, {"a", "banana", "new"}});
  auto idx = Bm25Index::open(dir_.string());
  EXPECT_EQ(idx->size(), 1u);
  EXPECT_TRUE(idx->search("apple", 5).empty());
  EXPECT_EQ(idx->search("banana", 5).at(0).stored, "new");
}

TEST_F(Bm25IndexTest, MissingDirectoryIsConfigErrorNamingIt) {
  try {
    Bm25Index::open((dir_ / "absent").string());
    FAIL() << "expected ConfigError";
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("absent"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST_F(Bm25IndexTest, UncommittedOrForeignDirectoryIsConfigError) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "junk.txt") << "not an index";
  try {
    Bm25Index::open(dir_.string());
    FAIL() << "expected ConfigError";
  } catch (const agentrl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no committed index"), std::string::npos) << e.what();
  }
}

TEST_F(Bm25IndexTest, CorruptIndexIsConfigError) {
  build({{"a", "apple", ""}});
  for (auto& f : fs::directory_iterator(dir_ / "xapian")) std::ofstream(f.path(), std::ios::trunc) << "garbage";
  try {
    auto idx = Bm25Index::open(dir_.string());
    idx->search("apple", 1);
    FAIL() << "expected an error";
  } catch (const agentrl::Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
  }
}

TEST_F(Bm25IndexTest, WriterRefusesExistingIndexWithoutOverwrite) {
  build({{"a", "apple", ""}});
  EXPECT_THROW(Bm25IndexWriter(dir_.string(), false), agentrl::ConfigError);
}

TEST_F(Bm25IndexTest, ConcurrentSearchesReturnSameResults) {
  std::vector<agentrl::envs::search::IndexDocument> docs;
  for (int i = 0; i < 200; ++i)
    docs.push_back({"d" + std::to_string(i), "item " + std::to_string(i % 7) + " color red size " + std::to_string(i % 5), ""});
  build(docs);
  auto idx = Bm25Index::open(dir_.string());
  const auto expected = idx->search("item 3 size 4", 10);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        auto h = idx->search("item 3 size 4", 10);
        if (h.size() != expected.size() || h[0].id != expected[0].id) ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}
