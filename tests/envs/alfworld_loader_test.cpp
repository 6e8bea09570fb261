// Loader of real ALFWorld games on a game file written by hand in the real
// format (game.tw-pddl JSON with a PDDL problem and a 2.1.1 grammar), and on
// malformed ones. Expected names follow ALFWorld's Demangler rule, applied
// by hand below: ids lowercased and sorted, numbered per name from n down.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/envs/alfworld/game_dir.h"
#include "agentrl/envs/alfworld/game_loader.h"
#include "agentrl/envs/alfworld/simulator.h"

namespace agentrl::envs::alfworld {
namespace {

const char* kApplePlus = "Apple_bar__plus_00_dot_10_bar__plus_00_dot_90_bar__minus_01_dot_00";
const char* kAppleMinus = "Apple_bar__minus_00_dot_20_bar__plus_00_dot_90_bar__minus_01_dot_00";
const char* kSink = "Sink_bar__plus_00_dot_16_bar__plus_00_dot_82_bar__minus_01_dot_80";
const char* kCounterPlus = "CounterTop_bar__plus_01_dot_00_bar__plus_00_dot_95_bar__minus_00_dot_65";
const char* kCounterMinus = "CounterTop_bar__minus_01_dot_00_bar__plus_00_dot_95_bar__minus_00_dot_65";
const char* kBasin = "Sink_bar__plus_00_dot_16_bar__plus_00_dot_82_bar__minus_01_dot_80_bar_SinkBasin";
const char* kFridge = "Fridge_bar__minus_02_dot_00_bar__plus_00_dot_00_bar__plus_01_dot_00";

std::vector<std::string> problem_lines() {
  auto S = [](const char* s) { return std::string(s); };
  return {
      "(define (problem plan_trial_test)",
      "(:domain alfred)",
      "(:objects",
      "agent1 - agent",
      "Apple - object",  // ALFRED's untyped placeholder: not part of the scene
      S(kApplePlus) + " - object",
      S(kAppleMinus) + " - object",
      S(kSink) + " - object",
      S(kCounterPlus) + " - receptacle",
      S(kCounterMinus) + " - receptacle",
      S(kBasin) + " - receptacle",
      S(kFridge) + " - receptacle",
      "loc_bar_0_bar_0_bar_0_bar_0 - location",
      "loc_bar_1_bar_2_bar_3_bar_60 - location",
      "loc_bar_5_bar_5_bar_0_bar_30 - location",
      "loc_bar_9_bar_9_bar_0_bar_0 - location",
      "loc_bar__minus_1_bar_2_bar_3_bar_60 - location",
      "AppleType - otype",
      "FridgeType - rtype",
      ")",
      "(:init",
      "(receptacleType " + S(kCounterPlus) + " CounterTopType)",
      "(receptacleType " + S(kCounterMinus) + " CounterTopType)",
      "(receptacleType " + S(kBasin) + " SinkBasinType)",
      "(receptacleType " + S(kFridge) + " FridgeType)",
      "(objectType " + S(kApplePlus) + " AppleType)",
      "(objectType " + S(kAppleMinus) + " AppleType)",
      "(objectType " + S(kSink) + " SinkType)",
      "(pickupable " + S(kApplePlus) + ")",
      "(pickupable " + S(kAppleMinus) + ")",
      "(openable " + S(kFridge) + ")",
      "(canContain CounterTopType AppleType)",
      "(canContain FridgeType AppleType)",
      "(canContain SinkBasinType AppleType)",
      "(inReceptacle " + S(kApplePlus) + " " + S(kBasin) + ")",
      "(inReceptacle " + S(kAppleMinus) + " " + S(kFridge) + ")",
      "(inReceptacle " + S(kSink) + " " + S(kCounterMinus) + ")",
      "(receptacleAtLocation " + S(kCounterPlus) + " loc_bar_1_bar_2_bar_3_bar_60)",
      "(receptacleAtLocation " + S(kCounterMinus) + " loc_bar__minus_1_bar_2_bar_3_bar_60)",
      "(receptacleAtLocation " + S(kBasin) + " loc_bar_5_bar_5_bar_0_bar_30)",
      "(receptacleAtLocation " + S(kFridge) + " loc_bar_9_bar_9_bar_0_bar_0)",
      "(objectAtLocation " + S(kApplePlus) + " loc_bar_5_bar_5_bar_0_bar_30)",
      "(objectAtLocation " + S(kAppleMinus) + " loc_bar_9_bar_9_bar_0_bar_0)",
      "(atLocation agent1 loc_bar_0_bar_0_bar_0_bar_0)",
      ")",
      "(:goal (and (exists (?r - receptacle) (exists (?o - object) (and (inReceptacle ?o ?r)",
      "  (objectType ?o AppleType) (receptacleType ?r CounterTopType))))))",
      ")",
  };
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The rules of the json_2.1.1 grammar that differ from alfred.twl2, in the
// real file's syntax.
std::string grammar_211(const std::string& task) {
  return "grammar :: \"\"\"\n    {\n"
         "        \"intro\": [ { \"rhs\": \"-= Welcome to TextWorld, ALFRED! =-\\n\\n#look.feedback#\\n\\n#task#\" } ],\n"
         "        \"task\": [ { \"rhs\": \"Your task is to: " + task + "\" } ],\n"
         "        \"GotoLocation.feedback\": [ { \"rhs\": \"You arrive at {lend.name}. #examineReceptacle.feedback#\" } ],\n"
         "        \"PutObject.feedback\": [ { \"rhs\": \"You put the {o.name} in/on the {r.name}.\" } ]\n"
         "    }\n\"\"\";\n\n"
         "action PutObject {\n    template :: \"put {o} in/on {r}\";\n    feedback :: \"#PutObject.feedback#\";\n}\n";
}

std::string game_json(const std::string& problem, const std::string& grammar, int solvable = 1) {
  nlohmann::json j;
  j["pddl_domain"] = "(define (domain alfred))";
  j["grammar"] = grammar;
  j["pddl_problem"] = problem;
  if (solvable >= 0) j["solvable"] = solvable == 1;
  return j.dump(2);
}

LoadedGame hand_game() {
  return parse_game_json(game_json(join(problem_lines()), grammar_211("put some apple on countertop.")), "hand.tw-pddl");
}

std::string must(Simulator& sim, const std::string& cmd) {
  bool valid = false;
  std::string out = sim.step(cmd, &valid);
  EXPECT_TRUE(valid) << cmd;
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no FormatError)";
}

TEST(AlfworldLoader, NamesFollowAlfworldsNumberingRule) {
  auto lg = hand_game();
  const Game& g = *lg.game;
  // Listing order = sorted lowercased ids; "_minus_" sorts before "_plus_",
  // so the minus id gets the higher number.
  ASSERT_EQ(g.receptacles.size(), 4u);
  EXPECT_EQ(g.receptacles[0].name, "countertop 2");
  EXPECT_EQ(g.receptacles[1].name, "countertop 1");
  EXPECT_EQ(g.receptacles[2].name, "fridge 1");
  EXPECT_EQ(g.receptacles[3].name, "sinkbasin 1");  // Sink|...|SinkBasin: "basin" appended
  ASSERT_EQ(g.objects.size(), 3u);                   // the untyped "Apple" placeholder is not an object
  EXPECT_EQ(g.objects[0].name, "apple 2");
  EXPECT_EQ(g.objects[1].name, "apple 1");
  EXPECT_EQ(g.objects[2].name, "sink 1");
  // Locations: after "loc_bar_", digits sort before "_minus_".
  EXPECT_EQ(g.location_names, (std::vector<std::string>{"loc 5", "loc 4", "loc 3", "loc 2", "loc 1"}));
  EXPECT_EQ(g.task.type, TaskType::kPick);
  EXPECT_EQ(g.task_description, "put some apple on countertop.");
  EXPECT_TRUE(lg.solvable);
}

TEST(AlfworldLoader, HandWrittenGamePlaysWithTheGamesGrammar) {
  Simulator sim(hand_game().game);
  EXPECT_EQ(sim.reset(),
            "-= Welcome to TextWorld, ALFRED! =-\n\n"
            "You are in the middle of a room. Looking quickly around you, you see a countertop 2, a countertop 1, "
            "a fridge 1, and a sinkbasin 1.\n\nYour task is to: put some apple on countertop.");
  EXPECT_EQ(sim.admissible(), (std::vector<std::string>{"go to countertop 1", "go to countertop 2", "go to fridge 1",
                                                        "go to sinkbasin 1", "inventory", "look"}));
  EXPECT_EQ(must(sim, "go to fridge 1"), "You arrive at loc 2. The fridge 1 is closed.");
  EXPECT_EQ(must(sim, "open fridge 1"), "You open the fridge 1. The fridge 1 is open. In it, you see a apple 2.");
  EXPECT_EQ(must(sim, "take apple 2 from fridge 1"), "You pick up the apple 2 from the fridge 1.");
  EXPECT_EQ(must(sim, "go to countertop 2"), "You arrive at loc 1. On the countertop 2, you see a sink 1.");
  // The sink object is not pickupable: examine yes, take no.
  const auto& adm = sim.admissible();
  EXPECT_EQ(std::count(adm.begin(), adm.end(), "examine sink 1"), 1);
  EXPECT_EQ(std::count(adm.begin(), adm.end(), "put apple 2 in/on countertop 2"), 1);
  EXPECT_FALSE(sim.goal_satisfied());
  EXPECT_EQ(must(sim, "put apple 2 in/on countertop 2"), "You put the apple 2 in/on the countertop 2.");
  EXPECT_TRUE(sim.goal_satisfied());
  EXPECT_EQ(must(sim, "examine countertop 2"), "On the countertop 2, you see a apple 2, and a sink 1.");
}

TEST(AlfworldLoader, TruncatedJsonNamesFileAndLine) {
  std::string text = game_json(join(problem_lines()), grammar_211("x."));
  std::string msg = error_of([&] { parse_game_json(text.substr(0, text.size() / 2), "games/a/game.tw-pddl"); });
  EXPECT_NE(msg.find("games/a/game.tw-pddl: line "), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed game.tw-pddl JSON"), std::string::npos) << msg;
}

TEST(AlfworldLoader, MissingFieldsAreAFormatError) {
  std::string msg = error_of([] { parse_game_json("{\"grammar\": \"\"}", "g.tw-pddl"); });
  EXPECT_NE(msg.find("g.tw-pddl: game.tw-pddl needs string fields 'pddl_problem' and 'grammar'"), std::string::npos)
      << msg;
}

TEST(AlfworldLoader, TruncatedPddlProblemSaysSo) {
  auto lines = problem_lines();
  lines.resize(30);
  std::string msg = error_of([&] { parse_game_json(game_json(join(lines), grammar_211("x.")), "t.tw-pddl"); });
  EXPECT_NE(msg.find("t.tw-pddl (pddl_problem): line 31: unexpected end of PDDL"), std::string::npos) << msg;
  EXPECT_NE(msg.find("looks truncated"), std::string::npos) << msg;
}

TEST(AlfworldLoader, UnknownIdInAFactNamesTheLine) {
  auto lines = problem_lines();
  size_t k = 0;
  while (lines[k].rfind("(inReceptacle", 0) != 0) ++k;
  lines[k] = "(inReceptacle Banana_bar_1_bar_2 " + std::string(kFridge) + ")";
  std::string msg = error_of([&] { parse_game_json(game_json(join(lines), grammar_211("x.")), "u.tw-pddl"); });
  EXPECT_NE(msg.find("u.tw-pddl (pddl_problem): line " + std::to_string(k + 1) + ": unknown object 'Banana_bar_1_bar_2'"),
            std::string::npos)
      << msg;
}

TEST(AlfworldLoader, WrongArityNamesTheLine) {
  auto lines = problem_lines();
  size_t k = 0;
  while (lines[k].rfind("(openable", 0) != 0) ++k;
  lines[k] = "(openable)";
  std::string msg = error_of([&] { parse_game_json(game_json(join(lines), grammar_211("x.")), "w.tw-pddl"); });
  EXPECT_NE(msg.find("line " + std::to_string(k + 1) + ": openable takes 1 argument(s), got 0"), std::string::npos)
      << msg;
}

TEST(AlfworldLoader, UnsupportedGrammarIsRejected) {
  std::string g = grammar_211("x.");
  size_t p = g.find(" #examineReceptacle.feedback#");
  g.erase(p, std::string(" #examineReceptacle.feedback#").size());
  std::string msg = error_of([&] { parse_game_json(game_json(join(problem_lines()), g), "v.tw-pddl"); });
  EXPECT_NE(msg.find("v.tw-pddl: unsupported GotoLocation.feedback"), std::string::npos) << msg;
}

TEST(AlfworldLoader, DirectoryLoadAppliesAlfworldsFilters) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("agentrl_alfworld_dir_" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  const std::string problem = join(problem_lines()), grammar = grammar_211("put some apple on countertop.");
  write("valid_seen/pick_and_place_simple-Apple-None-CounterTop-1/trial_b/game.tw-pddl", game_json(problem, grammar, 1));
  write("valid_seen/pick_and_place_simple-Apple-None-CounterTop-1/trial_a/game.tw-pddl", game_json(problem, grammar, 1));
  write("valid_seen/pick_and_place_simple-Apple-None-CounterTop-1/trial_c/game.tw-pddl", game_json(problem, grammar, 0));
  write("valid_seen/pick_and_place_simple-Apple-None-CounterTop-1/trial_d/game.tw-pddl", game_json(problem, grammar, -1));
  write("valid_seen/pick_and_place_with_movable_recep-Apple-Bowl-CounterTop-1/t/game.tw-pddl", game_json(problem, grammar));
  write("valid_seen/pick_heat_then_place_in_recep-AppleSliced-None-CounterTop-1/t/game.tw-pddl", game_json(problem, grammar));
  write("valid_unseen/pick_and_place_simple-Apple-None-CounterTop-2/t/game.tw-pddl", game_json(problem, grammar));
  auto splits = load_game_dir(root.string(), 2);
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[0].name, "valid_seen");
  ASSERT_EQ(splits[0].games.size(), 2u);  // a and b; c unsolvable, d no key, movable, Sliced skipped
  EXPECT_EQ(splits[0].skipped, 4u);
  EXPECT_NE(splits[0].paths[0].find("trial_a"), std::string::npos);
  EXPECT_EQ(splits[1].name, "valid_unseen");
  EXPECT_EQ(splits[1].games.size(), 1u);
  // A broken file is reported by name.
  write("valid_unseen/pick_and_place_simple-Apple-None-CounterTop-3/t/game.tw-pddl", "{\"pddl_problem\": ");
  std::string msg = error_of([&] { load_game_dir(root.string(), 2); });
  EXPECT_NE(msg.find("CounterTop-3/t/game.tw-pddl: line 1"), std::string::npos) << msg;
  fs::remove_all(root);
}

TEST(AlfworldLoader, DataDirNamingASplitFolderIsAConfigError) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("agentrl_alfworld_split_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "pick_and_place_simple-Apple-None-CounterTop-1" / "trial_a");
  std::ofstream(root / "pick_and_place_simple-Apple-None-CounterTop-1" / "trial_a" / "game.tw-pddl")
      << game_json(join(problem_lines()), grammar_211("x."));
  try {
    load_game_dir(root.string());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("point data_dir at the folder that holds valid_seen/"), std::string::npos)
        << e.what();
  }
  fs::remove_all(root);
}

TEST(AlfworldLoader, MissingDataDirIsAConfigError) {
  try {
    load_game_dir("/nonexistent/agentrl/json_2.1.1");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/agentrl/json_2.1.1' is not a directory"), std::string::npos);
  }
}

TEST(AlfworldLoader, TaskDescriptionTemplatesAreAlfworlds) {
  EXPECT_EQ(task_description(TaskType::kPick, 0, "apple", "fridge", ""), "put a apple in fridge.");
  EXPECT_EQ(task_description(TaskType::kPick, 1, "apple", "fridge", ""), "put some apple on fridge.");
  EXPECT_EQ(task_description(TaskType::kLook, 0, "book", "", "desklamp"), "look at book under the desklamp.");
  EXPECT_EQ(task_description(TaskType::kLook, 1, "book", "", "desklamp"), "examine the book with the desklamp.");
  EXPECT_EQ(task_description(TaskType::kClean, 1, "mug", "shelf", ""), "clean some mug and put it in shelf.");
  EXPECT_EQ(task_description(TaskType::kHeat, 0, "mug", "shelf", ""), "put a hot mug in shelf.");
  EXPECT_EQ(task_description(TaskType::kCool, 1, "mug", "shelf", ""), "cool some mug and put it in shelf.");
  EXPECT_EQ(task_description(TaskType::kPickTwo, 1, "pen", "desk", ""), "find two pen and put them in desk.");
}

}  // namespace
}  // namespace agentrl::envs::alfworld
