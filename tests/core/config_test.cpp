// Specification of the typed YAML config (include/agentrl/core/config.h):
// typed reading, the promised error messages, defaults composition,
// overrides, round trip through to_yaml, and describe().
#include "agentrl/core/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>

namespace agentrl::config {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct OptimConfig {
  double beta = 0.9;
  void visit(Visitor& v) { v.field("beta", beta, "momentum", Range::closed(0, 1)); }
};

struct TrainerConfig {
  double lr = 1e-6;
  int64_t steps = 100;
  int epochs = 1;
  bool bf16 = false;
  std::string schedule = "constant";
  std::string name = "run";
  std::vector<std::string> envs;
  std::vector<double> betas = {0.9, 0.999};
  std::vector<int64_t> ids;
  std::map<std::string, std::string> templates;
  OptimConfig optim;
  void visit(Visitor& v) {
    v.field("lr", lr, "peak learning rate", Range::open_closed(0, 1));
    v.field("steps", steps, "number of steps", Range::at_least(1));
    v.field("epochs", epochs, "epochs");
    v.field("bf16", bf16, "use bfloat16");
    v.field("schedule", schedule, "LR schedule", {"constant", "linear", "cosine"});
    v.field("name", name, "run name");
    v.field("envs", envs, "environments", {"alfworld", "webshop"});
    v.field("betas", betas, "adam betas");
    v.field("ids", ids, "ids");
    v.field("templates", templates, "named templates");
    v.section("optim", optim, "optimizer");
  }
};

struct PluginConfig {
  int64_t max_steps = 50;
  void visit(Visitor& v) { v.field("max_steps", max_steps, "episode step limit", Range::at_least(1)); }
};
SectionRegistrar<PluginConfig> plugin_registrar("plugin_env", "a test plug-in section");
// The same name in another scope is another section (e.g. an estimator's
// options under algorithm:).
SectionRegistrar<PluginConfig> scoped_registrar("plugin_env", "a scoped plug-in section", "test_scope");

struct RootConfig {
  TrainerConfig trainer;
  int64_t seed = 1;
  ExtensionSections ext;
  void visit(Visitor& v) {
    v.field("seed", seed, "global seed");
    v.section("trainer", trainer, "trainer options");
    ext.visit(v);
  }
};

VisitFn fn(RootConfig& c) {
  return [&c](Visitor& v) { c.visit(v); };
}

// Loads YAML text as "t.yaml" and returns the error message ("" if none).
std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  RootConfig c;
  try {
    load_config_string(fn(c), yaml, "t.yaml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "agentrl_config_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& rel, const std::string& text) const {
    fs::path p = fs::path(path_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---- reading values -----------------------------------------------------------

TEST(ConfigLoad, ReadsEveryFieldType) {
  RootConfig c;
  load_config_string(fn(c),
                     "seed: 7\n"
                     "trainer:\n"
                     "  lr: 0.5\n"
                     "  steps: 3\n"
                     "  epochs: 4\n"
                     "  bf16: true\n"
                     "  schedule: cosine\n"
                     "  name: 'hello world'\n"
                     "  envs: [webshop, alfworld]\n"
                     "  betas: [0.5, 2]\n"
                     "  ids: [-1, 2]\n"
                     "  templates: {a: x, b: 'y z'}\n"
                     "  optim: {beta: 0.25}\n",
                     "t.yaml");
  EXPECT_EQ(c.seed, 7);
  EXPECT_EQ(c.trainer.lr, 0.5);
  EXPECT_EQ(c.trainer.steps, 3);
  EXPECT_EQ(c.trainer.epochs, 4);
  EXPECT_TRUE(c.trainer.bf16);
  EXPECT_EQ(c.trainer.schedule, "cosine");
  EXPECT_EQ(c.trainer.name, "hello world");
  EXPECT_EQ(c.trainer.envs, (std::vector<std::string>{"webshop", "alfworld"}));
  EXPECT_EQ(c.trainer.betas, (std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(c.trainer.ids, (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(c.trainer.templates, (std::map<std::string, std::string>{{"a", "x"}, {"b", "y z"}}));
  EXPECT_EQ(c.trainer.optim.beta, 0.25);
}

TEST(ConfigLoad, AbsentKeysKeepTheirDefaults) {
  RootConfig c;
  load_config_string(fn(c), "trainer:\n  steps: 5\n", "t.yaml");
  EXPECT_EQ(c.trainer.steps, 5);
  EXPECT_EQ(c.trainer.lr, 1e-6);
  EXPECT_EQ(c.trainer.schedule, "constant");
  EXPECT_EQ(c.trainer.betas, (std::vector<double>{0.9, 0.999}));
  EXPECT_EQ(c.seed, 1);
}

TEST(ConfigLoad, EmptySectionKeepsDefaults) {
  RootConfig c;
  load_config_string(fn(c), "trainer:\n", "t.yaml");
  EXPECT_EQ(c.trainer.steps, 100);
}

TEST(ConfigLoad, IntegerAcceptedForDoubleField) {
  RootConfig c;
  load_config_string(fn(c), "trainer: {lr: 1}\n", "t.yaml");
  EXPECT_EQ(c.trainer.lr, 1.0);
}

TEST(ConfigLoad, ExtensionSectionIsATopLevelSection) {
  RootConfig c;
  load_config_string(fn(c), "plugin_env:\n  max_steps: 9\n", "t.yaml");
  EXPECT_EQ(c.ext.as<PluginConfig>("plugin_env").max_steps, 9);
}

TEST(ConfigLoad, ErrorLeavesStructUnchanged) {
  RootConfig c;
  EXPECT_THROW(load_config_string(fn(c), "seed: 5\ntrainer: {lr: abc}\n", "t.yaml"), ConfigError);
  EXPECT_EQ(c.seed, 1);
}

// ---- error messages --------------------------------------------------------------

TEST(ConfigErrors, UnknownKeyNamesFileLineAndClosestKey) {
  EXPECT_EQ(error_of("seed: 1\ntrainer:\n  lrr: 0.1\n"),
            "t.yaml:3: unknown key 'trainer.lrr' (did you mean 'trainer.lr'?)");
}

TEST(ConfigErrors, UnknownSectionSuggestsClosestSection) {
  EXPECT_EQ(error_of("trainr:\n  lr: 0.1\n"), "t.yaml:1: unknown key 'trainr' (did you mean 'trainer'?)");
}

TEST(ConfigErrors, UnknownKeyInNestedSection) {
  EXPECT_EQ(error_of("trainer:\n  optim:\n    betaa: 0.5\n"),
            "t.yaml:3: unknown key 'trainer.optim.betaa' (did you mean 'trainer.optim.beta'?)");
}

TEST(ConfigErrors, UnknownKeyInPluginSection) {
  EXPECT_EQ(error_of("plugin_env:\n  max_step: 3\n"),
            "t.yaml:2: unknown key 'plugin_env.max_step' (did you mean 'plugin_env.max_steps'?)");
}

TEST(ConfigErrors, UnknownKeyWithNothingCloseListsValidKeys) {
  EXPECT_EQ(error_of("trainer:\n  optim:\n    zzzzzzzz: 1\n"),
            "t.yaml:3: unknown key 'trainer.optim.zzzzzzzz' (valid keys of 'trainer.optim': beta)");
}

TEST(ConfigErrors, WrongTypeForNumber) {
  EXPECT_EQ(error_of("trainer:\n  lr: abc\n"), "t.yaml:2: key 'trainer.lr': expected a number, got 'abc'");
}

TEST(ConfigErrors, OutOfRangeNumber) {
  EXPECT_EQ(error_of("trainer:\n  lr: 5\n"),
            "t.yaml:2: key 'trainer.lr': value 5 is out of range, expected a number in (0, 1]");
  EXPECT_EQ(error_of("trainer:\n  lr: 0\n"),
            "t.yaml:2: key 'trainer.lr': value 0 is out of range, expected a number in (0, 1]");
}

TEST(ConfigErrors, OutOfRangeInteger) {
  EXPECT_EQ(error_of("trainer:\n  steps: 0\n"),
            "t.yaml:2: key 'trainer.steps': value 0 is out of range, expected an integer >= 1");
}

TEST(ConfigErrors, IntegerRejectsFraction) {
  EXPECT_EQ(error_of("trainer:\n  steps: 1.5\n"), "t.yaml:2: key 'trainer.steps': expected an integer, got '1.5'");
  EXPECT_EQ(error_of("trainer:\n  epochs: 2.0\n"), "t.yaml:2: key 'trainer.epochs': expected an integer, got '2.0'");
}

TEST(ConfigErrors, BoolAcceptsOnlyTrueOrFalse) {
  EXPECT_EQ(error_of("trainer:\n  bf16: yes\n"), "t.yaml:2: key 'trainer.bf16': expected true or false, got 'yes'");
  EXPECT_EQ(error_of("trainer:\n  bf16: 1\n"), "t.yaml:2: key 'trainer.bf16': expected true or false, got '1'");
}

TEST(ConfigErrors, StringOutsideChoicesListsChoices) {
  EXPECT_EQ(error_of("trainer:\n  schedule: cosin\n"),
            "t.yaml:2: key 'trainer.schedule': expected one of: constant, linear, cosine, got 'cosin' "
            "(did you mean 'cosine'?)");
}

TEST(ConfigErrors, ListElementOutsideChoicesNamesElementLine) {
  EXPECT_EQ(error_of("trainer:\n  envs:\n    - webshop\n    - sciworld\n"),
            "t.yaml:4: key 'trainer.envs[1]': expected one of: alfworld, webshop, got 'sciworld'");
}

TEST(ConfigErrors, ListFieldRequiresSequence) {
  EXPECT_EQ(error_of("trainer:\n  betas: 0.5\n"), "t.yaml:2: key 'trainer.betas': expected a list, got '0.5'");
}

TEST(ConfigErrors, ListElementWrongType) {
  EXPECT_EQ(error_of("trainer:\n  ids: [1, 2.5]\n"), "t.yaml:2: key 'trainer.ids[1]': expected an integer, got '2.5'");
  EXPECT_EQ(error_of("trainer:\n  betas:\n    - 1\n    - x\n"), "t.yaml:4: key 'trainer.betas[1]': expected a number, got 'x'");
}

TEST(ConfigErrors, StringFieldRejectsList) {
  EXPECT_EQ(error_of("trainer:\n  name: [a]\n"), "t.yaml:2: key 'trainer.name': expected a string, got a list");
}

TEST(ConfigErrors, SectionGivenScalar) {
  EXPECT_EQ(error_of("trainer: 5\n"), "t.yaml:1: key 'trainer': expected a map (config section), got '5'");
}

TEST(ConfigErrors, ScalarFieldGivenMap) {
  EXPECT_EQ(error_of("trainer:\n  lr:\n    x: 1\n"), "t.yaml:3: key 'trainer.lr': expected a number, got a map");
}

TEST(ConfigErrors, MapFieldRequiresStringValues) {
  EXPECT_EQ(error_of("trainer:\n  templates:\n    a: [1]\n"),
            "t.yaml:3: key 'trainer.templates.a': expected a string, got a list");
}

TEST(ConfigErrors, YamlSyntaxErrorNamesLine) {
  EXPECT_THAT(error_of("trainer:\n  lr: [1, 2\n"), ::testing::StartsWith("t.yaml:3:"));
  EXPECT_THAT(error_of("trainer:\n  lr: [1, 2\n"), HasSubstr("YAML syntax error"));
}

TEST(ConfigErrors, DuplicateKey) {
  EXPECT_EQ(error_of("seed: 1\nseed: 2\n"), "t.yaml:2: duplicate key 'seed'");
}

TEST(ConfigErrors, TopLevelMustBeMap) {
  EXPECT_EQ(error_of("[1, 2]\n"), "t.yaml:1: expected a map of config sections at the top level, got a list");
}

TEST(ConfigErrors, SecondYamlDocumentIsAnError) {
  EXPECT_EQ(error_of("seed: 1\n---\nseed: 2\n"), "t.yaml:3: the file holds 2 YAML documents ('---'), expected one");
}

TEST(ConfigErrors, IntegerBeyond64BitsIsOutOfRange) {
  EXPECT_EQ(error_of("seed: 99999999999999999999\n"),
            "t.yaml:1: key 'seed': value 99999999999999999999 is out of range, expected a 64-bit integer");
}

TEST(ConfigErrors, NumberBeyondDoubleIsOutOfRange) {
  EXPECT_EQ(error_of("trainer: {lr: 1e-400}\n"),
            "t.yaml:1: key 'trainer.lr': value 1e-400 is out of range, expected a number representable as a double");
}

TEST(ConfigErrors, MissingFile) {
  RootConfig c;
  try {
    load_config(fn(c), "/nonexistent/dir/x.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open config file '/nonexistent/dir/x.yaml': No such file or directory");
  }
}

// ---- overrides ---------------------------------------------------------------

TEST(ConfigOverrides, OverrideWinsOverFile) {
  RootConfig c;
  load_config_string(fn(c), "trainer: {lr: 0.5, steps: 3}\n", "t.yaml", {"trainer.lr=1e-5", "seed=9"});
  EXPECT_EQ(c.trainer.lr, 1e-5);
  EXPECT_EQ(c.trainer.steps, 3);
  EXPECT_EQ(c.seed, 9);
}

TEST(ConfigOverrides, ListValueParsedAsFlowYaml) {
  RootConfig c;
  apply_overrides(fn(c), {"trainer.ids=[1,2]", "trainer.envs=[alfworld]"});
  EXPECT_EQ(c.trainer.ids, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c.trainer.envs, (std::vector<std::string>{"alfworld"}));
}

TEST(ConfigOverrides, LaterOverrideWins) {
  RootConfig c;
  apply_overrides(fn(c), {"seed=2", "seed=3"});
  EXPECT_EQ(c.seed, 3);
}

TEST(ConfigOverrides, EmptyValueIsEmptyString) {
  RootConfig c;
  apply_overrides(fn(c), {"trainer.name="});
  EXPECT_EQ(c.trainer.name, "");
}

TEST(ConfigOverrides, ApplyOverridesKeepsOtherValues) {
  RootConfig c;
  c.trainer.steps = 42;
  apply_overrides(fn(c), {"trainer.lr=0.25"});
  EXPECT_EQ(c.trainer.steps, 42);
  EXPECT_EQ(c.trainer.lr, 0.25);
}

TEST(ConfigOverrides, UnknownKeyMessage) {
  EXPECT_EQ(error_of("", {"trainer.lrr=1"}), "override 'trainer.lrr=1': unknown key 'trainer.lrr' (did you mean 'trainer.lr'?)");
}

TEST(ConfigOverrides, TypeErrorMessage) {
  EXPECT_EQ(error_of("", {"trainer.steps=abc"}), "override 'trainer.steps=abc': key 'trainer.steps': expected an integer, got 'abc'");
}

TEST(ConfigOverrides, RangeErrorMessage) {
  EXPECT_EQ(error_of("", {"trainer.lr=2"}),
            "override 'trainer.lr=2': key 'trainer.lr': value 2 is out of range, expected a number in (0, 1]");
}

TEST(ConfigOverrides, MissingEqualsSign) {
  EXPECT_EQ(error_of("", {"trainer.lr"}), "override 'trainer.lr': expected key=value (e.g. trainer.lr=1e-5)");
}

// ---- defaults composition -------------------------------------------------------

TEST(ConfigDefaults, LaterDefaultsOverrideEarlierAndFileOverridesAll) {
  TempDir d;
  d.write("a.yaml", "seed: 1\ntrainer: {lr: 0.1, steps: 10, name: a}\n");
  d.write("b.yaml", "trainer: {lr: 0.2, name: b}\n");
  const std::string exp = d.write("exp.yaml", "defaults: [a.yaml, b.yaml]\ntrainer:\n  name: exp\n");
  RootConfig c;
  load_config(fn(c), exp);
  EXPECT_EQ(c.seed, 1);               // only in a
  EXPECT_EQ(c.trainer.steps, 10);     // only in a, deep merge keeps it
  EXPECT_EQ(c.trainer.lr, 0.2);       // b overrides a
  EXPECT_EQ(c.trainer.name, "exp");   // including file overrides both
}

TEST(ConfigDefaults, TwoLevelsWithPathsRelativeToIncludingFile) {
  TempDir d;
  d.write("base/root.yaml", "trainer: {steps: 7, lr: 0.1}\n");
  d.write("base/mid.yaml", "defaults: [root.yaml]\ntrainer: {lr: 0.3}\n");
  const std::string exp = d.write("exps/exp.yaml", "defaults:\n  - ../base/mid.yaml\nseed: 4\n");
  RootConfig c;
  load_config(fn(c), exp);
  EXPECT_EQ(c.trainer.steps, 7);
  EXPECT_EQ(c.trainer.lr, 0.3);
  EXPECT_EQ(c.seed, 4);
}

TEST(ConfigDefaults, OverridesApplyAfterDefaults) {
  TempDir d;
  d.write("a.yaml", "trainer: {lr: 0.1}\n");
  const std::string exp = d.write("exp.yaml", "defaults: [a.yaml]\n");
  RootConfig c;
  load_config(fn(c), exp, {"trainer.lr=0.7"});
  EXPECT_EQ(c.trainer.lr, 0.7);
}

TEST(ConfigDefaults, ErrorNamesTheFileWhereKeyWasWritten) {
  TempDir d;
  const std::string base = d.write("base.yaml", "seed: 1\ntrainer:\n  stepz: 3\n");
  const std::string exp = d.write("exp.yaml", "defaults: [base.yaml]\ntrainer: {lr: 0.5}\n");
  RootConfig c;
  try {
    load_config(fn(c), exp);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), base + ":3: unknown key 'trainer.stepz' (did you mean 'trainer.steps'?)");
  }
}

TEST(ConfigDefaults, SingleFileNameIsAccepted) {
  TempDir d;
  d.write("a.yaml", "seed: 11\n");
  const std::string exp = d.write("exp.yaml", "defaults: a.yaml\n");
  RootConfig c;
  load_config(fn(c), exp);
  EXPECT_EQ(c.seed, 11);
}

TEST(ConfigDefaults, MapIsAnError) {
  EXPECT_EQ(error_of("defaults: {a: b}\n"), "t.yaml:1: 'defaults' must be a list of file names, got a map");
}

TEST(ConfigDefaults, MissingDefaultsFile) {
  TempDir d;
  const std::string exp = d.write("exp.yaml", "seed: 2\ndefaults:\n  - nothere.yaml\n");
  RootConfig c;
  try {
    load_config(fn(c), exp);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), exp + ":3: defaults file 'nothere.yaml' not found (looked for '" + d.path() +
                                         "/nothere.yaml')");
  }
}

TEST(ConfigDefaults, CycleIsAnError) {
  TempDir d;
  const std::string a = d.write("a.yaml", "defaults: [b.yaml]\n");
  d.write("b.yaml", "defaults: [a.yaml]\n");
  RootConfig c;
  try {
    load_config(fn(c), a);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("defaults cycle: "));
    EXPECT_THAT(std::string(e.what()), HasSubstr("a.yaml -> "));
    EXPECT_THAT(std::string(e.what()), HasSubstr("b.yaml -> "));
  }
}

// ---- writing back ----------------------------------------------------------------

TEST(ConfigYaml, RoundTripGivesIdenticalValues) {
  RootConfig c;
  c.seed = -3;
  c.trainer.lr = 0.1;
  c.trainer.optim.beta = 1.0 / 3.0;
  c.trainer.betas = {1e-6, 0.1, 1e300, -2.5e-17};
  c.trainer.ids = {0, -9223372036854775807LL};
  c.trainer.bf16 = true;
  c.trainer.schedule = "linear";
  c.trainer.name = "a: b # c\n\"quoted\" null";
  c.trainer.envs = {"webshop"};
  c.trainer.templates = {{"null", ""}, {"k: v", "line1\nline2"}, {"plain", "true"}};
  c.ext.as<PluginConfig>("plugin_env").max_steps = 77;
  const std::string text = to_yaml(c);
  RootConfig back;
  back.trainer.betas.clear();
  load_config_string(fn(back), text, "roundtrip.yaml");
  EXPECT_EQ(back.seed, c.seed);
  EXPECT_EQ(back.trainer.lr, c.trainer.lr);
  EXPECT_EQ(back.trainer.optim.beta, c.trainer.optim.beta);
  EXPECT_EQ(back.trainer.betas, c.trainer.betas);
  EXPECT_EQ(back.trainer.ids, c.trainer.ids);
  EXPECT_EQ(back.trainer.bf16, true);
  EXPECT_EQ(back.trainer.schedule, "linear");
  EXPECT_EQ(back.trainer.name, c.trainer.name);
  EXPECT_EQ(back.trainer.envs, c.trainer.envs);
  EXPECT_EQ(back.trainer.templates, c.trainer.templates);
  EXPECT_EQ(back.ext.as<PluginConfig>("plugin_env").max_steps, 77);
}

TEST(ConfigYaml, EmitsDefaultsWithShortDoubles) {
  RootConfig c;
  const std::string text = to_yaml(c);
  EXPECT_THAT(text, HasSubstr("  lr: 1e-06  # peak learning rate\n"));
  EXPECT_THAT(text, HasSubstr("  betas: [0.9, 0.999]"));
  EXPECT_THAT(text, HasSubstr("  envs: []"));
  EXPECT_THAT(text, HasSubstr("  templates: {}"));
  EXPECT_THAT(text, HasSubstr("plugin_env:\n  max_steps: 50"));
}

TEST(ConfigYaml, EmptyListsRoundTrip) {
  RootConfig c;
  c.trainer.betas.clear();
  RootConfig back;
  load_config_string(fn(back), to_yaml(c), "x.yaml");
  EXPECT_TRUE(back.trainer.betas.empty());
}

// ---- describe ----------------------------------------------------------------

TEST(ConfigDescribe, OneLinePerFieldWithTypeDefaultRangeAndDoc) {
  RootConfig c;
  const std::string text = describe(fn(c));
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\ntrainer\.lr +double +default 1e-06 +range \(0, 1\] +peak learning rate\n)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\ntrainer\.schedule +string +default constant +one of constant\|linear\|cosine +LR schedule\n)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\ntrainer\.steps +int +default 100 +range >= 1 +number of steps\n)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\nplugin_env\.max_steps +int +default 50 )"))) << text;
}

// ---- helpers ------------------------------------------------------------------

TEST(ConfigHelpers, ClosestMatchWithinEditDistance) {
  EXPECT_EQ(closest_match("lrr", {"lr", "steps"}), "lr");
  EXPECT_EQ(closest_match("shedule", {"schedule", "steps"}), "schedule");
  EXPECT_EQ(closest_match("zzzzzz", {"lr", "steps"}), "");
  EXPECT_EQ(closest_match("x", {}), "");
}

TEST(ConfigHelpers, ClosestMatchAllowsLenOverThreeForLongKeys) {
  // 12 characters: limit max(2, 12/3) = 4 edits.
  EXPECT_EQ(closest_match("max_new_tkns", {"max_new_tokens"}), "max_new_tokens");  // 2 insertions
  EXPECT_EQ(closest_match("abcdefghijkl", {"abcdefgh"}), "abcdefgh");           // 4 deletions
  EXPECT_EQ(closest_match("abcdefghijkl", {"abcdefg"}), "");                    // 5 deletions
}

TEST(ConfigHelpers, RangeContainsAndDescribe) {
  const Range r = Range::open_closed(0, 1);
  EXPECT_FALSE(r.contains(0));
  EXPECT_TRUE(r.contains(1));
  EXPECT_TRUE(r.contains(0.5));
  EXPECT_FALSE(r.contains(std::nan("")));
  EXPECT_EQ(r.describe(), "a number in (0, 1]");
  EXPECT_EQ(Range::at_least(1).describe(), "a number >= 1");
  EXPECT_EQ(Range::positive().describe(), "a number > 0");
  EXPECT_EQ(Range::closed(-1, 2.5).describe(), "a number in [-1, 2.5]");
  EXPECT_EQ(Range{}.describe(), "any number");
}

TEST(ConfigHelpers, RegisteredSectionsAreSortedAndDuplicatesRejected) {
  bool found = false;
  for (const auto& s : registered_sections()) found |= s.name == "plugin_env";
  EXPECT_TRUE(found);
  try {
    register_section({"plugin_env", "dup", [] { return std::make_unique<TypedSection<PluginConfig>>(); }, ""});
    FAIL() << "duplicate accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "config section 'plugin_env' is registered twice");
  }
}

TEST(ConfigHelpers, ScopedSectionsLiveOnlyInTheirScope) {
  ExtensionSections top, scoped("test_scope"), other("no_such_scope");
  EXPECT_TRUE(top.has("plugin_env"));
  EXPECT_TRUE(scoped.has("plugin_env"));
  EXPECT_FALSE(other.has("plugin_env"));
  scoped.as<PluginConfig>("plugin_env").max_steps = 9;
  EXPECT_EQ(top.as<PluginConfig>("plugin_env").max_steps, 50);  // separate instances
  ExtensionSections copy = scoped;
  EXPECT_EQ(copy.as<PluginConfig>("plugin_env").max_steps, 9);
  try {
    copy.get("nope");
    FAIL() << "missing section accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no config section 'test_scope.nope'"));
  }
  bool in_top = false;
  for (const auto& s : registered_sections()) in_top |= s.scope == "test_scope";
  EXPECT_FALSE(in_top);
}

TEST(ConfigHelpers, ExtensionSectionsCopyIsDeep) {
  ExtensionSections a;
  a.as<PluginConfig>("plugin_env").max_steps = 3;
  ExtensionSections b = a;
  b.as<PluginConfig>("plugin_env").max_steps = 4;
  EXPECT_EQ(a.as<PluginConfig>("plugin_env").max_steps, 3);
  EXPECT_EQ(b.as<PluginConfig>("plugin_env").max_steps, 4);
  EXPECT_THROW(a.get("nope"), ConfigError);
}

}  // namespace
}  // namespace agentrl::config
