// tokenizer.env_symbols: a tokenizer trained on WebShop's env text keeps every
// catalog ASIN one piece, the same piece on the results page and in a click,
// so that choosing a product is one token for a small policy. Without the
// option an ASIN is many pieces; an env without identifiers or a vocabulary
// too small to hold them is a ConfigError that names the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/webshop/webshop_env.h"
#include "agentrl/train/experiment_config.h"
#include "agentrl/train/policy.h"

namespace agentrl::train {
namespace {

namespace fs = std::filesystem;

class EnvSymbols : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("agentrl_env_symbols_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    envs::webshop::WebshopConfig c;
    c.num_products = 200;
    c.num_goals = 60;
    c.test_goals = 20;
    c.eval_goals = 20;
    c.asin_case = "page";
    c.index_dir = (dir_ / "index").string();
    suite_ = std::make_unique<envs::webshop::WebshopSuite>(c);
    cfg_.tokenizer.train = true;
    cfg_.tokenizer.model_type = "bpe";
    cfg_.tokenizer.vocab_size = 600;
    cfg_.tokenizer.vocab_size_is_limit = true;
    cfg_.tokenizer.corpus_episodes = 20;
    cfg_.tokenizer.chat_template = "chatml";
  }
  void TearDown() override { fs::remove_all(dir_); }

  Policy tokenizer(const std::string& name) { return build_policy_tokenizer(cfg_, *suite_, (dir_ / name).string()); }

  fs::path dir_;
  std::unique_ptr<envs::webshop::WebshopSuite> suite_;
  ExperimentConfig cfg_;
};

TEST_F(EnvSymbols, EveryAsinIsOnePieceOnThePageAndInAClick) {
  const auto ids = suite_->identifiers();
  ASSERT_EQ(ids.size(), 200u) << "page case: one identifier per product";
  cfg_.tokenizer.env_symbols = true;
  Policy p = tokenizer("with");
  for (size_t i = 0; i < ids.size(); i += 37) {
    const std::string& asin = ids[i];
    const auto alone = p.tokenizer->encode(asin, false, false);
    ASSERT_EQ(alone.size(), 1u) << asin;
    const auto page = p.tokenizer->encode("Next > [SEP] " + asin + " [SEP] Title", false, false);
    const auto click = p.tokenizer->encode("<action>click[" + asin + "]</action>", false, false);
    EXPECT_NE(std::find(page.begin(), page.end(), alone[0]), page.end()) << asin << " split on the page";
    EXPECT_NE(std::find(click.begin(), click.end(), alone[0]), click.end()) << asin << " split in the click";
    EXPECT_EQ(p.tokenizer->decode(click), "<action>click[" + asin + "]</action>");
  }
  cfg_.tokenizer.env_symbols = false;
  Policy q = tokenizer("without");
  EXPECT_GT(q.tokenizer->encode(ids[0], false, false).size(), 1u) << "a random code is not a learnt piece";
}

TEST_F(EnvSymbols, LowerCaseClicksAddTheLowercasedAsins) {
  envs::webshop::WebshopConfig c;
  c.num_products = 200;
  c.num_goals = 60;
  c.test_goals = 20;
  c.eval_goals = 20;
  c.index_dir = (dir_ / "index").string();  // asin_case: lower, the default
  const auto ids = envs::webshop::WebshopSuite(c).identifiers();
  ASSERT_EQ(ids.size(), 400u);
  EXPECT_EQ(ids[1], strings::lower_ascii(ids[0]));
}

TEST_F(EnvSymbols, TooSmallAVocabularyOrAnEnvWithoutIdentifiersIsAConfigError) {
  cfg_.tokenizer.env_symbols = true;
  cfg_.tokenizer.vocab_size = 150;
  try {
    tokenizer("small");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.vocab_size: 150"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("adds 200 identifiers"), std::string::npos) << e.what();
  }
  struct NoIds final : envs::EnvSuite {
    explicit NoIds(const envs::EnvSuite& inner) : inner_(inner) {}
    const std::string& name() const override { return name_; }
    const envs::TaskSource& tasks() const override { return inner_.tasks(); }
    std::unique_ptr<envs::Env> make_env() const override { return inner_.make_env(); }
    std::string eval_split() const override { return "eval"; }
    const envs::EnvSuite& inner_;
    std::string name_ = "plain";
  } plain(*suite_);
  cfg_.tokenizer.vocab_size = 600;
  try {
    build_policy_tokenizer(cfg_, plain, (dir_ / "plain").string());
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.env_symbols"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'plain'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace agentrl::train
