// The algorithm / actor config sections declare every field with the
// documented defaults and choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agentrl/algo/algo_config.h"

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/empg.h"
#include "agentrl/algo/grpo.h"
#include "algo_test_util.h"

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
  // zz_scaled: the plug-in estimator this file registers (below).
  EXPECT_THAT(v.choices.at("adv_estimator"),
              ::testing::ElementsAre("drgrpo", "empg", "gigpo", "grpo", "reinforce_pp", "rloo", "zz_scaled"));
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
  EXPECT_EQ(root.algorithm.options<EmpgConfig>("empg").k, 2.0);
  EXPECT_EQ(root.algorithm.options<EmpgConfig>("empg").zeta, 0.1);
  EXPECT_EQ(root.actor.clip_high, 0.28);
  EXPECT_EQ(root.actor.kl.type, "k2");
}

// An estimator defined outside src/algo, with its own option section, the way
// CONTRIBUTING.md says to add one: nothing shared is edited.
struct ScaledOptions {
  double scale = 1.0;
  void visit(config::Visitor& v) { v.field("scale", scale, "reward multiplier", config::Range::positive()); }
};
AGENTRL_REGISTER_ESTIMATOR_OPTIONS(zz_scaled, ScaledOptions, "test plug-in estimator");
class ScaledEstimator final : public AdvantageEstimator {
 public:
  explicit ScaledEstimator(double scale) : scale_(scale) {}
  std::string name() const override { return "zz_scaled"; }
  AdvantageResult compute(const std::vector<rollout::Trajectory>& batch, Collective&) const override {
    AdvantageResult r;
    for (const auto& t : batch) r.turn_advantages.emplace_back(t.turns.size(), static_cast<float>(scale_ * t.reward));
    return r;
  }

 private:
  double scale_;
};
const EstimatorRegistrar kScaled("zz_scaled", [](const AlgorithmConfig& c) {
  return std::make_unique<ScaledEstimator>(c.options<ScaledOptions>("zz_scaled").scale);
});

TEST(AlgorithmConfig, PluginEstimatorReadsItsOwnRegisteredSection) {
  Root root;
  config::load_config_string([&](config::Visitor& v) { root.visit(v); },
                             "algorithm:\n  adv_estimator: zz_scaled\n  zz_scaled:\n    scale: 3.0\n", "test.yaml");
  EXPECT_EQ(root.algorithm.options<ScaledOptions>("zz_scaled").scale, 3.0);
  auto est = make_estimator(root.algorithm);
  LocalCollective local;
  auto r = est->compute({testing::make_traj(0, 0, 0.5, {1, 1})}, local);
  ASSERT_EQ(r.turn_advantages.size(), 1u);
  EXPECT_EQ(r.turn_advantages[0], std::vector<float>({1.5f, 1.5f}));
  // Built-in sections are there too, and the range of a plug-in field is enforced.
  EXPECT_EQ(root.algorithm.options<GrpoConfig>("grpo").eps, 1e-6);
  EXPECT_THROW(config::load_config_string([&](config::Visitor& v) { root.visit(v); },
                                          "algorithm:\n  zz_scaled:\n    scale: -1\n", "test.yaml"),
               ConfigError);
  EXPECT_THROW(root.algorithm.options<ScaledOptions>("zz_missing"), ConfigError);
}

TEST(AlgorithmConfig, UnknownEstimatorInYamlIsAConfigError) {
  Root root;
  EXPECT_THROW(config::load_config_string([&](config::Visitor& v) { root.visit(v); },
                                          "algorithm:\n  adv_estimator: ppo_gae\n", "test.yaml"),
               ConfigError);
}

}  // namespace
}  // namespace agentrl::algo
