// The `alfworld` env through the Env interface and the registry, and the
// generic env tools (play loop, evaluation) on it.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <sstream>
#include <thread>

#include "agentrl/core/config.h"
#include "agentrl/core/error.h"
#include "agentrl/envs/alfworld/alfworld_env.h"
#include "agentrl/envs/env_tools.h"
#include "agentrl/envs/registry.h"
#include "shared_data.h"

namespace agentrl::envs {
namespace {

std::shared_ptr<EnvSuite> suite_with(const std::vector<std::string>& sets) {
  config::ExtensionSections sections;
  config::apply_overrides([&](config::Visitor& v) { sections.visit(v); }, sets);
  return make_env_suite("alfworld", sections);
}

TEST(AlfworldEnv, RegisteredWithAlfworldsDefaultSplits) {
  auto suite = suite_with({});
  EXPECT_EQ(suite->name(), "alfworld");
  EXPECT_EQ(suite->tasks().splits(), (std::vector<std::string>{"train", "valid_seen", "valid_unseen"}));
  EXPECT_EQ(suite->tasks().size("train"), 3553u);
  EXPECT_EQ(suite->tasks().size("valid_seen"), 140u);
  EXPECT_EQ(suite->tasks().size("valid_unseen"), 134u);
  EXPECT_EQ(suite->eval_split(), "valid_seen");
}

TEST(AlfworldEnv, ConfigOverridesReachTheSuite) {
  auto suite = suite_with({"alfworld.valid_unseen_size=7", "alfworld.eval_split=valid_unseen",
                           "alfworld.task_types=[heat]"});
  EXPECT_EQ(suite->tasks().size("valid_unseen"), 7u);
  EXPECT_EQ(suite->eval_split(), "valid_unseen");
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(suite->tasks().get("valid_unseen", i).task_type, "pick_heat_then_place_in_recep");
}

TEST(AlfworldEnv, UnknownSplitIsAConfigErrorListingTheSplits) {
  auto suite = suite_with({});
  try {
    suite->tasks().size("test");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown split 'test' (available: train, valid_seen, valid_unseen)"),
              std::string::npos)
        << e.what();
  }
}

TEST(AlfworldEnv, ExpertEpisodeEndsWithRewardOneAndSuccess) {
  auto suite = suite_with({});
  auto env = suite->make_env();
  Task task = suite->tasks().get("valid_seen", 3);
  std::string obs = env->reset(task, 0);
  EXPECT_EQ(obs.rfind("-= Welcome to TextWorld, ALFRED! =-", 0), 0u);
  EXPECT_EQ(obs.substr(obs.rfind("Your task is to: ") + 17), env->task_description());
  StepResult r;
  int steps = 0;
  while (auto a = env->expert_action()) {
    r = env->step(*a);
    ++steps;
    if (!r.done) {
      EXPECT_EQ(r.reward, 0.0);
    }
  }
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.reward, 1.0);
  EXPECT_TRUE(r.info.success);
  EXPECT_FALSE(r.info.invalid_action);
  EXPECT_EQ(r.info.task_type, task.task_type);
  EXPECT_EQ(r.info.metrics.at("steps"), steps);
  EXPECT_TRUE(env->admissible_actions().empty());  // episode over
}

TEST(AlfworldEnv, InvalidActionsUntilTheStepLimit) {
  auto suite = suite_with({"alfworld.max_steps=5"});
  auto env = suite->make_env();
  env->reset(suite->tasks().get("train", 0), 0);
  for (int i = 1; i <= 5; ++i) {
    StepResult r = env->step("dance with the fridge");
    EXPECT_EQ(r.observation, "Nothing happens.");
    EXPECT_TRUE(r.info.invalid_action);
    EXPECT_FALSE(r.info.success);
    EXPECT_EQ(r.done, i == 5) << i;
  }
  EXPECT_EQ(env->max_steps(), 5);
}

TEST(AlfworldEnv, EpisodesAreDeterministicGivenTheTask) {
  auto suite = suite_with({});
  auto a = suite->make_env(), b = suite->make_env();
  Task t = suite->tasks().get("train", 42);
  EXPECT_EQ(a->reset(t, 1), b->reset(t, 2));
  EXPECT_EQ(a->admissible_actions(), b->admissible_actions());
}

TEST(AlfworldEnv, EnvsOfOneSuiteRunConcurrently) {
  // One Env per thread, sharing the suite: the transcripts equal the
  // sequential ones.
  auto suite = suite_with({});
  auto transcript = [&](size_t index) {
    auto env = suite->make_env();
    std::string t = env->reset(suite->tasks().get("valid_unseen", index), 0);
    while (auto a = env->expert_action()) t += "|" + env->step(*a).observation;
    return t;
  };
  std::vector<std::string> sequential(32), parallel(32);
  for (size_t i = 0; i < 32; ++i) sequential[i] = transcript(i);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (size_t i = k; i < 32; i += 4) parallel[i] = transcript(i);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(parallel, sequential);
}

TEST(AlfworldEnv, MissingDataDirIsAConfigError) {
  try {
    suite_with({"alfworld.data_dir=/nonexistent/json_2.1.1"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("alfworld.data_dir"), std::string::npos) << e.what();
  }
}

TEST(AlfworldEnv, RealGamesSplitByFolderName) {
  const std::string dir = std::string(AGENTRL_SHARED_DATA_DIR) + "/alfworld/json_2.1.1";
  REQUIRE_SHARED_DATA(dir);
  auto suite = suite_with({"alfworld.data_dir=" + dir, "alfworld.eval_split=valid_unseen"});
  EXPECT_EQ(suite->tasks().splits(), (std::vector<std::string>{"valid_seen", "valid_unseen"}));
  Task t = suite->tasks().get("valid_unseen", 0);
  EXPECT_EQ(t.id.rfind("valid_unseen/", 0), 0u) << t.id;
  EXPECT_EQ(t.id.substr(t.id.size() - 12), "game.tw-pddl");
  EXPECT_EQ(t.id.substr(13, t.task_type.size()), t.task_type);
}

TEST(EnvTools, PlayReadsActionsFromAStreamAndReportsTheEpisode) {
  auto suite = suite_with({});
  // Script the expert's actions for valid_seen #5, then feed them as text.
  auto env = suite->make_env();
  Task t = suite->tasks().get("valid_seen", 5);
  env->reset(t, 0);
  std::string script = "\n";  // blank lines are ignored
  while (auto a = env->expert_action()) {
    script += *a + "\n";
    env->step(*a);
  }
  std::istringstream in(script);
  std::ostringstream out;
  PlayOptions o;
  o.split = "valid_seen";
  o.task_index = 5;
  PlaySummary s = play(*suite, o, in, out);
  EXPECT_TRUE(s.success);
  EXPECT_TRUE(s.done);
  EXPECT_EQ(s.task.index, 5);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("[alfworld valid_seen #5 " + t.id + "]\n-= Welcome to TextWorld, ALFRED! =-", 0), 0u) << text;
  EXPECT_NE(text.find("\nAdmissible actions:\n  1. go to "), std::string::npos);
  EXPECT_NE(text.find("episode over: success=1 steps=" + std::to_string(s.steps) + " reward=1\n"), std::string::npos)
      << text;
}

TEST(EnvTools, PlayAcceptsANumberForTheKthAdmissibleActionAndStopsAtQuit) {
  auto suite = suite_with({});
  std::istringstream in("1\nquit\ngo to nowhere\n");
  std::ostringstream out;
  PlayOptions o;
  o.split = "train";
  o.task_index = 0;
  PlaySummary s = play(*suite, o, in, out);
  EXPECT_EQ(s.steps, 1);
  auto env = suite->make_env();
  env->reset(suite->tasks().get("train", 0), 0);
  std::string first = env->admissible_actions()[0];
  std::string expected_obs = env->step(first).observation;
  EXPECT_NE(out.str().find("> " + expected_obs + "\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("episode over: success=0 steps=1 reward=0"), std::string::npos);
}

TEST(EnvTools, PlayRejectsATaskIndexOutsideTheSplit) {
  auto suite = suite_with({"alfworld.valid_seen_size=3"});
  std::istringstream in;
  std::ostringstream out;
  PlayOptions o;
  o.split = "valid_seen";
  o.task_index = 3;
  try {
    play(*suite, o, in, out);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("split 'valid_seen' has 3 tasks (0..2)"), std::string::npos) << e.what();
  }
}

TEST(EnvTools, ExpertEvaluationSucceedsOnEveryTaskPerType) {
  auto suite = suite_with({});
  EvalOptions o;
  o.split = "valid_unseen";
  EvalResult r = evaluate(*suite, expert_policy(), o);
  EXPECT_EQ(r.episodes, 134);
  EXPECT_EQ(r.successes, 134);
  int64_t sum = 0;
  for (const auto& [type, st] : r.per_type) {
    EXPECT_EQ(st.successes, st.episodes) << type;
    sum += st.episodes;
  }
  EXPECT_EQ(sum, 134);
  EXPECT_EQ(r.invalid_actions, 0);
}

TEST(EnvTools, RandomEvaluationIsDeterministicBySeed) {
  auto suite = suite_with({"alfworld.valid_seen_size=20"});
  EvalOptions o;
  o.split = "valid_seen";
  o.seed = 9;
  EvalResult a = evaluate(*suite, random_admissible_policy(), o);
  EvalResult b = evaluate(*suite, random_admissible_policy(), o);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.successes, b.successes);
  EXPECT_EQ(a.invalid_actions, 0);  // admissible actions are always valid
}

TEST(EnvTools, MinStepsCyclesOverTheSplitWithoutChangingSuccessCounts) {
  auto suite = suite_with({"alfworld.valid_seen_size=4"});
  EvalOptions o;
  o.split = "valid_seen";
  EvalResult one = evaluate(*suite, expert_policy(), o);
  o.min_steps = 200;
  EvalResult many = evaluate(*suite, expert_policy(), o);
  EXPECT_EQ(many.episodes, 4);
  EXPECT_EQ(many.successes, one.successes);
  EXPECT_GE(many.steps, 200);
  EXPECT_GT(many.episodes_run, 4);
}

TEST(EnvTools, UnknownPolicyIsAConfigError) {
  try {
    policy_by_name("greedy");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown policy 'greedy' (expected random or expert)"), std::string::npos);
  }
}

}  // namespace
}  // namespace agentrl::envs

namespace agentrl::envs::alfworld {
namespace {

// The searching expert never takes an object from a receptacle whose
// contents it has not seen, and still solves every game it is given.
TEST(AlfworldSearchingExpert, SolvesGamesUsingOnlyWhatItHasSeen) {
  AlfworldConfig cfg;
  cfg.expert = "search";
  cfg.max_receptacles = 6;
  auto suite = std::make_shared<AlfworldSuite>(cfg);
  int solved = 0, searched = 0;
  for (size_t i = 0; i < 60; ++i) {
    AlfworldEnv env(suite);
    env.reset(suite->tasks().get("valid_unseen", i), 0);
    std::string last_obs;
    bool done = false;
    int goto_before_take = 0;
    for (int step = 0; step < 50 && !done; ++step) {
      auto a = env.expert_action();
      ASSERT_TRUE(a.has_value()) << "game " << i << " step " << step;
      if (a->rfind("take ", 0) == 0) {
        // The object must be named in what the agent saw last.
        const std::string obj = a->substr(5, a->find(" from ") - 5);
        EXPECT_NE(last_obs.find(obj), std::string::npos) << "game " << i << ": took unseen " << obj;
      }
      if (a->rfind("go to ", 0) == 0 && env.simulator()->state().held < 0) ++goto_before_take;
      auto r = env.step(*a);
      last_obs = r.observation;
      done = r.done;
      if (r.info.success) ++solved;
    }
    if (goto_before_take > 1) ++searched;
  }
  EXPECT_EQ(solved, 60);
  EXPECT_GT(searched, 0) << "some games need more than one visit to find the object";
}

// The prior expert also acts only on what it has seen (objects and lamps
// alike), visits likely receptacle types first (a tomato: counter top or
// fridge before any cabinet), and needs fewer steps than the plain search.
TEST(AlfworldSearchingExpert, PriorExpertSearchesLikelyPlacesFirstUsingOnlyWhatItHasSeen) {
  // "cd 1" is named in the text, not only as the start of "cd 12".
  auto mentions = [](const std::string& text, const std::string& name) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
      if (at + name.size() == text.size() || !std::isdigit(static_cast<unsigned char>(text[at + name.size()])))
        return true;
    return false;
  };
  AlfworldConfig cfg;
  cfg.scene_tables = "alfworld";
  cfg.grammar = "2.1.1";
  int steps_of[2] = {0, 0};
  for (const char* expert : {"search", "prior"}) {
    cfg.expert = expert;
    auto suite = std::make_shared<AlfworldSuite>(cfg);
    int solved = 0, first_goto_checked = 0;
    for (size_t i = 0; i < 120; ++i) {
      AlfworldEnv env(suite);
      std::string seen = env.reset(suite->tasks().get("valid_unseen", i), 0);
      bool done = false;
      for (int step = 0; step < 50 && !done; ++step) {
        auto a = env.expert_action();
        ASSERT_TRUE(a.has_value()) << expert << " game " << i << " step " << step;
        const Game& g = env.simulator()->game();
        if (std::string(expert) == "prior") {
          std::string named;  // the object a take or use acts on
          if (a->rfind("take ", 0) == 0) named = a->substr(5, a->find(" from ") - 5);
          if (a->rfind("use ", 0) == 0) named = a->substr(4);
          if (!named.empty()) {
            EXPECT_TRUE(mentions(seen, named)) << "game " << i << ": " << *a;
          }
          if (step == 0 && g.type_names[g.task.object_type] == "tomato") {
            ++first_goto_checked;
            EXPECT_TRUE(*a == "go to countertop 1" || *a == "go to fridge 1") << *a;
          }
        }
        auto r = env.step(*a);
        seen += r.observation + ",";
        done = r.done;
        if (r.info.success) ++solved;
        ++steps_of[std::string(expert) == "prior"];
      }
    }
    EXPECT_GE(solved, 114) << expert;  // a few pick2 searches of 30-receptacle kitchens pass 50 steps
    if (std::string(expert) == "prior") {
      EXPECT_GT(first_goto_checked, 0);
    }
  }
  EXPECT_LT(steps_of[1], steps_of[0] * 3 / 4);
}

}  // namespace
}  // namespace agentrl::envs::alfworld
