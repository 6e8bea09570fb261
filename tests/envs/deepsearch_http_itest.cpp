// Integration: `agentrl retriever serve`'s server on 127.0.0.1 (a free port),
// queried through HttpRetriever and through the env with retriever.kind: http.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>

#include "agentrl/core/error.h"
#include "agentrl/envs/deepsearch/deepsearch_env.h"

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

class DeepsearchHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    local_suite_ = std::make_unique<DeepSearchSuite>(small_config());
    server_ = std::make_unique<RetrievalServer>(local_suite_->shared_retriever(), "127.0.0.1", 0);
    url_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }
  std::unique_ptr<DeepSearchSuite> local_suite_;
  std::unique_ptr<RetrievalServer> server_;
  std::string url_;
};

TEST_F(DeepsearchHttp, SearchR1sEndpointUrlIsAcceptedAndOtherPathsAreRefused) {
  HttpRetrieverOptions o;
  o.url = url_ + "/retrieve";  // Search-R1's scripts: retriever.url=http://127.0.0.1:8000/retrieve
  HttpRetriever remote(o);
  EXPECT_EQ(remote.search("born", 2).size(), 2u);
  EXPECT_TRUE(remote.get("w3"));  // /access on the same server
  o.url = url_ + "/search";
  EXPECT_THROW(HttpRetriever{o}, ConfigError);
}

TEST_F(DeepsearchHttp, RemoteResultsEqualLocalResults) {
  HttpRetrieverOptions o;
  o.url = url_;
  HttpRetriever remote(o);
  const std::string query = local_suite_->world()->passages[3].title() + " works for";
  auto local = local_suite_->retriever().search(query, 3);
  auto hits = remote.search(query, 3);
  ASSERT_EQ(hits.size(), local.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    EXPECT_EQ(hits[i].passage.id, local[i].passage.id);
    EXPECT_EQ(hits[i].passage.contents, local[i].passage.contents);
    EXPECT_NEAR(hits[i].score, local[i].score, 1e-9);
  }
  auto doc = remote.get("w3");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->contents, local_suite_->world()->passages[3].contents);
  EXPECT_FALSE(remote.get("no-such-id"));
}

TEST_F(DeepsearchHttp, SpeaksSearchR1RetrieveApi) {
  HttpReply res = http_post(url_, "/retrieve", R"({"queries": ["born", "founded"], "topk": 2, "return_scores": true})");
  EXPECT_EQ(res.status, 200);
  auto j = nlohmann::json::parse(res.body);
  ASSERT_EQ(j["result"].size(), 2u);
  ASSERT_EQ(j["result"][0].size(), 2u);
  EXPECT_TRUE(j["result"][0][0]["document"]["contents"].is_string());
  EXPECT_TRUE(j["result"][0][0]["document"]["id"].is_string());
  EXPECT_TRUE(j["result"][0][0]["score"].is_number());
  HttpReply bare = http_post(url_, "/retrieve", R"({"queries": ["born"], "topk": 1})");
  EXPECT_TRUE(nlohmann::json::parse(bare.body)["result"][0][0]["contents"].is_string());
  HttpReply bad = http_post(url_, "/retrieve", R"({"topk": 1})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("expected {\\\"queries\\\""), std::string::npos) << bad.body;
}

TEST_F(DeepsearchHttp, EnvWithHttpRetrieverSolvesQuestions) {
  DeepSearchConfig c = small_config();
  c.retriever.kind = "http";
  c.retriever.url = url_;
  DeepSearchSuite suite(c);
  auto env = suite.make_env();
  for (size_t i = 0; i < 5; ++i) {
    env->reset(suite.get("test", i), 0);
    StepResult r;
    while (!r.done) r = env->step(*env->expert_action());
    EXPECT_EQ(r.reward, 1.0);
  }
  EXPECT_GE(server_->requests_served(), 5);
}

TEST_F(DeepsearchHttp, ServerDownIsAClearErrorAfterRetries) {
  int port = server_->port();
  server_.reset();  // stop it
  HttpRetrieverOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port);
  o.retries = 2;
  o.backoff_s = 0.01;
  o.connect_timeout_s = 0.5;
  HttpRetriever remote(o);
  auto t0 = std::chrono::steady_clock::now();
  try {
    remote.search("anything", 3);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("deepsearch retriever at " + o.url + "/retrieve failed after 3 attempt(s)"), std::string::npos)
        << msg;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(DeepsearchHttpConfig, ServerRefusesNonLoopbackHosts) {
  EXPECT_THROW(RetrievalServer(nullptr, "0.0.0.0", 0), ConfigError);
  HttpRetrieverOptions o;
  o.url = "ftp://x";
  EXPECT_THROW(HttpRetriever{o}, ConfigError);
}

}  // namespace
}  // namespace agentrl::envs::deepsearch
