// The algorithm / actor config sections declare every field with the
// documented defaults and choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agentrl/algo/algo_config.h"

namespace agentrl::algo {
namespace {

// Records "path -> choices" for every string field and the set of all keys.
class RecordingVisitor final : public config::Visitor {
 public:
  std::map<std::string, config::Choices> choices;
  std::map<std::string, std::string> kinds;
  void field(const char* k, bool&, const char*) override { kinds[path(k)] = "bool"; }
  void field(const char* k, int64_t&, const char*, config::Range) override { kinds[path(k)] = "int"; }
  void field(const char* k, double&, const char*, config::Range) override { kinds[path(k)] = "double"; }
  void field(const char* k, std::string&, const char*, config::Choices c) override {
    kinds[path(k)] = "string";
    choices[path(k)] = c;
  }
  void field(const char* k, std::vector<std::string>&, const char*, config::Choices c) override {
    kinds[path(k)] = "list";
    choices[path(k)] = c;
  }
  void field(const char* k, std::vector<double>&, const char*) override { kinds[path(k)] = "list"; }
  void field(const char* k, std::vector<int64_t>&, const char*) override { kinds[path(k)] = "list"; }
  void field(const char* k, std::map<std::string, std::string>&, const char*) override { kinds[path(k)] = "map"; }
  bool enter(const char* k, const char*) override {
    stack_.push_back(k);
    return true;
  }
  void leave() override { stack_.pop_back(); }

 private:
  std::string path(const char* k) const {
    std::string p;
    for (const auto& s : stack_) p += s + ".";
    return p + k;
  }
  std::vector<std::string> stack_;
};

TEST(AlgorithmConfig, EstimatorAndFilterChoicesAreTheRegisteredNames) {
  AlgorithmConfig c;
  RecordingVisitor v;
  c.visit(v);
  EXPECT_THAT(v.choices.at("adv_estimator"),
              ::testing::ElementsAre("drgrpo", "empg", "gigpo", "grpo", "reinforce_pp", "rloo"));
  EXPECT_THAT(v.choices.at("filters"), ::testing::ElementsAre("overlong", "void_turn", "zero_variance"));
  for (const char* key : {"empg.k", "empg.k_prime", "empg.zeta", "empg.final_std_norm", "gigpo.omega", "gigpo.mode",
                          "void_turn.exclude_from_group_stats", "zero_variance.oversample_factor", "overlong.penalty"}) {
    EXPECT_TRUE(v.kinds.count(key)) << key;
  }
}

TEST(ActorConfig, DeclaresKlAndAggregationChoices) {
  ActorConfig a;
  RecordingVisitor v;
  a.visit(v);
  EXPECT_THAT(v.choices.at("kl.type"), ::testing::ElementsAre("k1", "k2", "k3", "low_var_kl"));
  EXPECT_THAT(v.choices.at("loss_agg"), ::testing::ElementsAre("token-mean", "seq-mean-token-sum", "seq-mean-token-mean",
                                                               "seq-mean-token-sum-norm"));
  EXPECT_TRUE(v.kinds.count("kl.adaptive.horizon"));
  EXPECT_TRUE(v.kinds.count("tis_cap"));
}

}  // namespace
}  // namespace agentrl::algo

namespace agentrl::algo {
namespace {

struct Root {
  AlgorithmConfig algorithm;
  ActorConfig actor;
  void visit(config::Visitor& v) {
    v.section("algorithm", algorithm, "algorithm");
    v.section("actor", actor, "actor");
  }
};

TEST(AlgorithmConfig, LoadsFromYamlWithOverrides) {
  Root root;
  config::load_config_string([&](config::Visitor& v) { root.visit(v); },
                             "algorithm:\n  adv_estimator: empg\n  filters: [void_turn, zero_variance]\n"
                             "  empg:\n    k: 2.0\nactor:\n  clip_high: 0.28\n  kl:\n    type: k2\n",
                             "test.yaml", {"algorithm.empg.zeta=0.1"});
  EXPECT_EQ(root.algorithm.adv_estimator, "empg");
  EXPECT_THAT(root.algorithm.filters, ::testing::ElementsAre("void_turn", "zero_variance"));
  EXPECT_EQ(root.algorithm.empg.k, 2.0);
  EXPECT_EQ(root.algorithm.empg.zeta, 0.1);
  EXPECT_EQ(root.actor.clip_high, 0.28);
  EXPECT_EQ(root.actor.kl.type, "k2");
}

TEST(AlgorithmConfig, UnknownEstimatorInYamlIsAConfigError) {
  Root root;
  EXPECT_THROW(config::load_config_string([&](config::Visitor& v) { root.visit(v); },
                                          "algorithm:\n  adv_estimator: ppo_gae\n", "test.yaml"),
               ConfigError);
}

}  // namespace
}  // namespace agentrl::algo
