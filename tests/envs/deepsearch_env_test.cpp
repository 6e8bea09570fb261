// Specification of the Deep Search env over the built-in world with the
// local BM25 retriever.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "agentrl/core/error.h"
#include "agentrl/envs/deepsearch/deepsearch_env.h"
#include "agentrl/envs/registry.h"

namespace agentrl::envs::deepsearch {
namespace {

DeepSearchConfig small_config() {
  DeepSearchConfig c;
  c.world.options.people = 200;
  c.world.options.cities = 20;
  c.world.options.organisations = 40;
  c.world.options.works = 80;
  c.world.options.questions = 400;
  c.retriever.cache_dir = std::string(AGENTRL_BINARY_DIR) + "/envs2-deepsearch-cache";
  return c;
}

const DeepSearchSuite& shared_suite() {
  static DeepSearchSuite suite(small_config());
  return suite;
}

TEST(DeepsearchWorld, GenerationIsDeterministicWithUniqueTitles) {
  WorldOptions o = small_config().world.options;
  World a = World::generate(o), b = World::generate(o);
  ASSERT_EQ(a.passages.size(), b.passages.size());
  EXPECT_EQ(a.passages.size(), 200u + 20 + 40 + 80);
  EXPECT_EQ(a.passages[5].contents, b.passages[5].contents);
  EXPECT_EQ(a.test[3].qa.question, b.test[3].qa.question);
  std::set<std::string> titles;
  for (auto& p : a.passages) titles.insert(p.title());
  EXPECT_EQ(titles.size(), a.passages.size());
  o.seed += 1;
  EXPECT_NE(World::generate(o).passages[5].contents, a.passages[5].contents);
}

TEST(DeepsearchWorld, SplitsAre80_10_10AndCoverOneToThreeHops) {
  World w = World::generate(small_config().world.options);
  size_t total = w.train.size() + w.dev.size() + w.test.size();
  EXPECT_EQ(total, 400u);
  EXPECT_EQ(w.train.size(), 320u);
  EXPECT_EQ(w.dev.size(), 40u);
  std::set<std::string> types;
  for (auto& q : w.train) {
    types.insert(q.qa.type);
    EXPECT_EQ(q.qa.type, std::to_string(q.chain.size()) + "-hop");
    EXPECT_EQ(q.qa.golden_answers.at(0), q.chain.back().result);
    for (size_t i = 1; i < q.chain.size(); ++i) EXPECT_EQ(q.chain[i].entity, q.chain[i - 1].result);
  }
  EXPECT_EQ(types, (std::set<std::string>{"1-hop", "2-hop", "3-hop"}));
}

TEST(DeepsearchWorld, FactsOfAChainAreStatedInThePassages) {
  World w = World::generate(small_config().world.options);
  const WorldQuestion& q = w.train.at(0);
  for (auto& hop : q.chain) {
    bool stated = false;  // some passage names both ends of the hop
    for (auto& p : w.passages)
      stated |= p.contents.find(hop.entity) != std::string::npos && p.contents.find(hop.result) != std::string::npos;
    EXPECT_TRUE(stated) << hop.entity << " -" << hop.relation << "-> " << hop.result;
  }
}

TEST(DeepsearchEnv, ExpertSolvesQuestionsAndEverySearchFindsTheNextEntity) {
  const auto& suite = shared_suite();
  auto env = suite.make_env();
  for (size_t i = 0; i < 40; ++i) {
    Task task = suite.get("test", i);
    env->reset(task, 0);
    const auto& chain = suite.chain(task);
    StepResult r;
    size_t hop = 0;
    for (int t = 0; t < env->max_steps() && !r.done; ++t) {
      auto action = env->expert_action();
      ASSERT_TRUE(action);
      r = env->step(*action);
      if (!r.done) {
        ASSERT_LT(hop, chain.size());
        EXPECT_NE(r.observation.find(chain[hop].result), std::string::npos)
            << task.id << " hop " << hop << " query '" << hop_query(chain[hop]) << "' -> " << r.observation;
        ++hop;
      }
    }
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.reward, 1.0) << task.id;
    EXPECT_EQ(r.info.metrics.at("searches"), static_cast<double>(chain.size()));
  }
}

TEST(DeepsearchEnv, SearchObservationUsesInformationTags) {
  const auto& suite = shared_suite();
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  StepResult r = env->step("<think>x</think><search> " + suite.world()->passages[0].title() + " </search>");
  EXPECT_EQ(r.observation.rfind("\n\n<information>Doc 1(Title: " + suite.world()->passages[0].title() + ", id: w0) ", 0),
            0u)
      << r.observation;
  EXPECT_EQ(r.observation.substr(r.observation.size() - 16), "</information>\n\n");
  // The passages are stripped before wrapping, as Search-R1 does.
  EXPECT_NE(r.observation[r.observation.size() - 17], '\n');
  EXPECT_FALSE(r.done);
  StepResult common = env->step("<search> born in city </search>");  // matches most passages
  EXPECT_NE(common.observation.find("\nDoc 3(Title: "), std::string::npos);  // topk = 3
  EXPECT_EQ(common.observation.find("\nDoc 4(Title: "), std::string::npos);
}

TEST(DeepsearchEnv, SearchR1ModeParsesTheFirstTagAndEndsTheQuestionWithAQuestionMark) {
  DeepSearchConfig c = small_config();
  c.action_parse = "first";
  c.question_mark = true;
  c.instruction = "Answer the given question.";
  DeepSearchSuite suite(c);
  auto env = suite.make_env();
  const Task task = suite.get("test", 0);
  const std::string first = env->reset(task, 0);
  EXPECT_EQ(first.rfind("Answer the given question. Question: ", 0), 0u) << first;
  EXPECT_EQ(first.substr(first.size() - 2), "?\n") << first;
  EXPECT_EQ(first.find("??"), std::string::npos) << first;
  EXPECT_EQ(question_with_mark("  who wrote it "), "who wrote it?");
  EXPECT_EQ(question_with_mark("who wrote it?"), "who wrote it?");
  // Search-R1's regex takes the first tag: here the search, not the answer.
  StepResult r = env->step("<search> " + suite.world()->passages[0].title() + " </search> <answer> x </answer>");
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.observation.rfind("\n\n<information>", 0), 0u);
  StepResult a = env->step("<answer> " + suite.item(task).golden_answers[0] + " </answer><search> y </search>");
  EXPECT_TRUE(a.done);
  EXPECT_TRUE(a.info.success);
}

TEST(DeepsearchEnv, InvalidTurnGetsSearchR1Message) {
  const auto& suite = shared_suite();
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  StepResult r = env->step("I am not sure what to do.");
  EXPECT_TRUE(r.info.invalid_action);
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.observation,
            "\nMy previous action is invalid. If I want to search, I should put the query between <search> and "
            "</search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. "
            "Let me try again.\n");
}

TEST(DeepsearchEnv, AccessReturnsTheDocumentInChunks) {
  DeepSearchConfig c = small_config();
  c.access_chunk_words = 5;
  DeepSearchSuite suite(c);
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  const Passage& p = suite.world()->passages[0];
  StepResult first = env->step("<access> w0 </access>");
  // The first five words of the passage text.
  std::istringstream in(p.text());
  std::string w, five;
  for (int i = 0; i < 5 && in >> w; ++i) five += (i ? " " : "") + w;
  EXPECT_NE(first.observation.find("Doc w0(Title: " + p.title() + ") [part 1/"), std::string::npos) << first.observation;
  EXPECT_NE(first.observation.find("] " + five + "</information>"), std::string::npos) << first.observation;
  StepResult second = env->step("<access> w0 </access>");
  EXPECT_NE(second.observation.find("[part 2/"), std::string::npos);
  StepResult missing = env->step("<access> nope </access>");
  EXPECT_NE(missing.observation.find("No document with id 'nope'."), std::string::npos);
}

TEST(DeepsearchEnv, MaxTurnsEndsWithoutReward) {
  const auto& suite = shared_suite();
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  StepResult r;
  for (int i = 0; i < 4; ++i) r = env->step("<search> anything </search>");
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.reward, 0.0);
  EXPECT_EQ(r.info.metrics.at("turns"), 4);
}

TEST(DeepsearchEnv, WrongAnswerScoresZeroOrTheFormatReward) {
  DeepSearchConfig c = small_config();
  DeepSearchSuite plain(c);
  auto env = plain.make_env();
  env->reset(plain.get("test", 0), 0);
  EXPECT_EQ(env->step("<answer> certainly wrong </answer>").reward, 0.0);
  c.format_reward = 0.1;
  DeepSearchSuite shaped(c);
  auto env2 = shaped.make_env();
  env2->reset(shaped.get("test", 0), 0);
  EXPECT_EQ(env2->step("<answer> certainly wrong </answer>").reward, 0.1);
}

TEST(DeepsearchEnv, F1RewardGivesPartialCredit) {
  DeepSearchConfig c = small_config();
  c.reward = "f1";
  DeepSearchSuite suite(c);
  auto env = suite.make_env();
  // Find a question whose gold answer has two words (a person).
  for (size_t i = 0; i < suite.size("test"); ++i) {
    Task t = suite.get("test", i);
    const std::string gold = suite.item(t).golden_answers[0];
    if (gold.find(' ') == std::string::npos) continue;
    env->reset(t, 0);
    StepResult r = env->step("<answer> " + gold.substr(0, gold.find(' ')) + " </answer>");
    EXPECT_NEAR(r.reward, 2.0 * 1.0 * 0.5 / 1.5, 1e-12);  // P = 1, R = 1/2
    EXPECT_EQ(r.info.metrics.at("em"), 0.0);
    return;
  }
  FAIL() << "no two-word answer in the test split";
}

TEST(DeepsearchEnv, FilesDataUsesAWiki18Index) {
  std::string dir = std::string(AGENTRL_BINARY_DIR) + "/envs2-files";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/corpus.jsonl") << "{\"id\": \"1\", \"contents\": \"\\\"Zorvik\\\"\\nZorvik is the capital of Quellia.\"}\n"
                                       << "{\"id\": \"2\", \"contents\": \"\\\"Pellam\\\"\\nPellam is a river.\"}\n";
  std::ofstream(dir + "/test.jsonl") << "{\"id\": \"q1\", \"question\": \"What is the capital of Quellia?\", "
                                        "\"golden_answers\": [\"Zorvik\"]}\n";
  EXPECT_EQ(build_corpus_index(dir + "/corpus.jsonl", dir + "/index", true), 2);
  DeepSearchConfig c;
  c.data = "files";
  c.test_file = dir + "/test.jsonl";
  c.retriever.index_dir = dir + "/index";
  DeepSearchSuite suite(c);
  ASSERT_EQ(suite.size("test"), 1u);
  auto env = suite.make_env();
  env->reset(suite.get("test", 0), 0);
  StepResult r = env->step(*env->expert_action());
  EXPECT_NE(r.observation.find("Doc 1(Title: \"Zorvik\", id: 1) Zorvik is the capital of Quellia."), std::string::npos)
      << r.observation;
  EXPECT_EQ(env->step(*env->expert_action()).reward, 1.0);
}

TEST(DeepsearchEnv, FilesDataWithoutIndexIsAConfigError) {
  DeepSearchConfig c;
  c.data = "files";
  std::string q = std::string(AGENTRL_BINARY_DIR) + "/envs2_q.jsonl";
  std::ofstream(q) << "{\"question\": \"x\", \"golden_answers\": [\"y\"]}\n";
  c.test_file = q;
  try {
    DeepSearchSuite suite(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("deepsearch.retriever.index_dir is required"), std::string::npos);
  }
}

TEST(DeepsearchEnv, RegisteredUnderItsName) {
  auto names = registered_envs();
  EXPECT_NE(std::find(names.begin(), names.end(), "deepsearch"), names.end());
  config::ExtensionSections sections;
  sections.as<DeepSearchConfig>("deepsearch") = small_config();
  auto suite = make_env_suite("deepsearch", sections);
  EXPECT_EQ(suite->tasks().size("test"), 40u);
  EXPECT_EQ(suite->make_env()->stop_strings(), (std::vector<std::string>{"</search>", "</access>", "</answer>"}));
}

}  // namespace
}  // namespace agentrl::envs::deepsearch
