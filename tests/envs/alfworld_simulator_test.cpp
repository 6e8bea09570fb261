// Simulator semantics (alfred.pddl) and text (alfred.twl2 / 2.1.1 grammar)
// on a small hand-built kitchen. Expected strings are written from the
// grammar's rules, e.g. GotoLocation.feedback "You arrive at {r.name}. " +
// examineReceptacle.feedback "On the {r.name}, you see [...]." with
// TextWorld's list separators ", " / ", and ".
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "agentrl/envs/alfworld/simulator.h"

namespace agentrl::envs::alfworld {
namespace {

// countertop 1 (loc 0): apple 1, knife 1; fridge 1 (loc 1, closed): mug 1;
// microwave 1 (loc 2, closed); sinkbasin 1 (loc 3); sidetable 1 (loc 4):
// desklamp 1; cabinet 2 + cabinet 1 share loc 5 (closed, empty). Agent at
// loc 6 (no receptacle). The task type is a parameter.
std::shared_ptr<Game> kitchen(TaskType type = TaskType::kHeat) {
  auto g = std::make_shared<Game>();
  g->type_names = {"countertop", "fridge", "microwave", "sinkbasin", "sidetable", "cabinet",
                   "apple", "knife", "mug", "desklamp"};
  g->location_names = {"loc 1", "loc 2", "loc 3", "loc 4", "loc 5", "loc 6", "loc 7"};
  auto rec = [&](const std::string& name, int type_index, int loc, bool openable) {
    Receptacle r;
    r.id = name;
    r.name = name;
    r.type = type_index;
    r.location = loc;
    r.openable = openable;
    g->receptacles.push_back(r);
  };
  rec("cabinet 2", 5, 5, true);
  rec("cabinet 1", 5, 5, true);
  rec("countertop 1", 0, 0, false);
  rec("fridge 1", 1, 1, true);
  rec("microwave 1", 2, 2, true);
  rec("sidetable 1", 4, 4, false);
  rec("sinkbasin 1", 3, 3, false);
  auto obj = [&](const std::string& name, int type_index) {
    Object o;
    o.id = name;
    o.name = name;
    o.type = type_index;
    o.pickupable = true;
    g->objects.push_back(o);
    return static_cast<int>(g->objects.size()) - 1;
  };
  int apple = obj("apple 1", 6);
  g->objects[apple].cleanable = g->objects[apple].heatable = g->objects[apple].coolable = true;
  g->objects[apple].sliceable = true;
  int lamp = obj("desklamp 1", 9);
  g->objects[lamp].pickupable = false;
  g->objects[lamp].toggleable = true;
  int knife = obj("knife 1", 7);
  g->objects[knife].cleanable = true;
  int mug = obj("mug 1", 8);
  g->objects[mug].cleanable = g->objects[mug].heatable = g->objects[mug].coolable = true;
  g->objects[mug].receptacle_object = true;
  const size_t nt = g->type_names.size();
  g->can_contain.assign(nt * nt, 0);
  auto can = [&](int r, int o) { g->can_contain[r * nt + o] = 1; };
  for (int r : {0, 1, 2, 3}) can(r, 6), can(r, 8);  // apple, mug: countertop fridge microwave sinkbasin
  can(0, 7);                                        // knife: countertop only
  can(5, 8);                                        // mug: cabinet
  State& s = g->initial;
  s.init(g->objects.size(), g->receptacles.size());
  auto place = [&](int o, int r) {
    s.set_in(o, r, true);
    s.object_location[o] = g->receptacles[r].location;
  };
  place(apple, 2);
  place(knife, 2);
  place(mug, 3);
  place(lamp, 5);
  s.agent_location = 6;
  g->task.type = type;
  g->task.object_type = type == TaskType::kLook ? 8 : 6;
  g->task.recep_type = type == TaskType::kLook ? -1 : 0;
  g->task.lamp_type = type == TaskType::kLook ? 9 : -1;
  g->task_description = "put a hot apple in countertop.";
  g->text.help = twl2_help_text();
  return g;
}

std::string must(Simulator& sim, const std::string& cmd) {
  bool valid = false;
  std::string out = sim.step(cmd, &valid);
  EXPECT_TRUE(valid) << cmd;
  return out;
}

TEST(AlfworldJoinList, UsesTextWorldSeparators) {
  EXPECT_EQ(join_list({}), "nothing");
  EXPECT_EQ(join_list({"a apple 1"}), "a apple 1");
  EXPECT_EQ(join_list({"a apple 1", "a knife 1"}), "a apple 1, and a knife 1");
  EXPECT_EQ(join_list({"x", "y", "z"}), "x, y, and z");
}

TEST(AlfworldSimulator, IntroIsWelcomeLookAndTask) {
  Simulator sim(kitchen());
  EXPECT_EQ(sim.reset(),
            "-= Welcome to TextWorld, ALFRED! =-\n\n"
            "You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, "
            "a countertop 1, a fridge 1, a microwave 1, a sidetable 1, and a sinkbasin 1.\n\n"
            "Your task is to: put a hot apple in countertop.");
}

TEST(AlfworldSimulator, AdmissibleAtStartAreGotoEveryReceptacleAndGlobals) {
  Simulator sim(kitchen());
  sim.reset();
  std::vector<std::string> expected = {"go to cabinet 1",   "go to cabinet 2",     "go to countertop 1",
                                       "go to fridge 1",    "go to microwave 1",   "go to sidetable 1",
                                       "go to sinkbasin 1", "help",                "inventory",
                                       "look"};
  EXPECT_EQ(sim.admissible(), expected);
}

TEST(AlfworldSimulator, ScriptedHeatWalkthroughWithExactText) {
  Simulator sim(kitchen());
  sim.reset();
  EXPECT_EQ(must(sim, "go to countertop 1"),
            "You arrive at countertop 1. On the countertop 1, you see a apple 1, and a knife 1.");
  std::vector<std::string> here = {"examine apple 1", "examine countertop 1", "examine knife 1",
                                   "go to cabinet 1", "go to cabinet 2",      "go to fridge 1",
                                   "go to microwave 1", "go to sidetable 1",  "go to sinkbasin 1",
                                   "help",            "inventory",            "look",
                                   "take apple 1 from countertop 1", "take knife 1 from countertop 1"};
  EXPECT_EQ(sim.admissible(), here);
  EXPECT_EQ(must(sim, "take apple 1 from countertop 1"), "You pick up the apple 1 from the countertop 1.");
  EXPECT_EQ(must(sim, "inventory"), "You are carrying: a apple 1.");
  EXPECT_EQ(must(sim, "go to microwave 1"), "You arrive at microwave 1. The microwave 1 is closed.");
  EXPECT_EQ(must(sim, "heat apple 1 with microwave 1"), "You heat the apple 1 using the microwave 1.");
  EXPECT_EQ(must(sim, "examine apple 1"), "This is a hot apple 1.");
  EXPECT_FALSE(sim.goal_satisfied());
  EXPECT_EQ(must(sim, "go to countertop 1"), "You arrive at countertop 1. On the countertop 1, you see a knife 1.");
  EXPECT_EQ(must(sim, "move apple 1 to countertop 1"), "You move the apple 1 to the countertop 1.");
  EXPECT_TRUE(sim.goal_satisfied());
  EXPECT_EQ(must(sim, "inventory"), "You are not carrying anything.");
}

TEST(AlfworldSimulator, OpenAndCloseShowContents) {
  Simulator sim(kitchen());
  sim.reset();
  must(sim, "go to fridge 1");
  EXPECT_EQ(must(sim, "open fridge 1"), "You open the fridge 1. The fridge 1 is open. In it, you see a mug 1.");
  EXPECT_EQ(must(sim, "examine fridge 1"), "The fridge 1 is open. In it, you see a mug 1.");
  EXPECT_EQ(must(sim, "examine mug 1"), "This is a normal mug 1. In it, you see nothing.");
  EXPECT_EQ(must(sim, "close fridge 1"), "You close the fridge 1.");
  EXPECT_EQ(must(sim, "examine fridge 1"), "The fridge 1 is closed.");
}

TEST(AlfworldSimulator, TakeFromClosedReceptacleIsNothingHappens) {
  Simulator sim(kitchen());
  sim.reset();
  must(sim, "go to fridge 1");
  bool valid = true;
  EXPECT_EQ(sim.step("take mug 1 from fridge 1", &valid), "Nothing happens.");
  EXPECT_FALSE(valid);
  EXPECT_EQ(sim.state().held, -1);
  EXPECT_EQ(sim.step("examine mug 1", &valid), "Nothing happens.");  // not visible while closed
  EXPECT_FALSE(valid);
}

TEST(AlfworldSimulator, InvalidCommandsChangeNothing) {
  Simulator sim(kitchen());
  sim.reset();
  const State before = sim.state();
  for (const char* cmd : {"xyzzy", "", "go to countertop 9", "take apple 1 from countertop 1", "open fridge 1",
                          "move apple 1 to countertop 1", "heat apple 1 with microwave 1", "use desklamp 1",
                          "slice apple 1 with knife 1", "Go To Countertop 1"}) {
    bool valid = true;
    EXPECT_EQ(sim.step(cmd, &valid), "Nothing happens.") << cmd;
    EXPECT_FALSE(valid) << cmd;
  }
  EXPECT_EQ(sim.state().agent_location, before.agent_location);
  EXPECT_EQ(sim.state().inside, before.inside);
  EXPECT_EQ(sim.state().opened, before.opened);
}

TEST(AlfworldSimulator, SurroundingWhitespaceIsIgnored) {
  Simulator sim(kitchen());
  sim.reset();
  bool valid = false;
  sim.step("  go to countertop 1 \n", &valid);
  EXPECT_TRUE(valid);
}

TEST(AlfworldSimulator, HandsHoldOneObject) {
  Simulator sim(kitchen());
  sim.reset();
  must(sim, "go to countertop 1");
  must(sim, "take apple 1 from countertop 1");
  bool valid = true;
  EXPECT_EQ(sim.step("take knife 1 from countertop 1", &valid), "Nothing happens.");
  EXPECT_FALSE(valid);
}

TEST(AlfworldSimulator, PutNeedsCanContainAndOpenReceptacle) {
  Simulator sim(kitchen());
  sim.reset();
  must(sim, "go to countertop 1");
  must(sim, "take knife 1 from countertop 1");
  must(sim, "go to fridge 1");
  must(sim, "open fridge 1");
  bool valid = true;
  EXPECT_EQ(sim.step("move knife 1 to fridge 1", &valid), "Nothing happens.");  // canContain(fridge, knife) false
  EXPECT_FALSE(valid);
  must(sim, "go to countertop 1");
  must(sim, "move knife 1 to countertop 1");
  must(sim, "go to fridge 1");
  must(sim, "take mug 1 from fridge 1");
  must(sim, "go to cabinet 1");
  EXPECT_EQ(sim.step("move mug 1 to cabinet 1", &valid), "Nothing happens.");  // closed
  EXPECT_FALSE(valid);
  EXPECT_EQ(must(sim, "open cabinet 1"), "You open the cabinet 1. The cabinet 1 is open. In it, you see nothing.");
  EXPECT_EQ(must(sim, "move mug 1 to cabinet 1"), "You move the mug 1 to the cabinet 1.");
}

TEST(AlfworldSimulator, SharedLocationLookListsBothReceptacles) {
  Simulator sim(kitchen());
  sim.reset();
  EXPECT_EQ(must(sim, "go to cabinet 1"), "You arrive at cabinet 1. The cabinet 1 is closed.");
  // Both cabinets are at this location: no "go to cabinet 2" (GotoLocation
  // needs lStart != lEnd), and look names both.
  const auto& adm = sim.admissible();
  EXPECT_EQ(std::count(adm.begin(), adm.end(), "go to cabinet 2"), 0);
  EXPECT_EQ(std::count(adm.begin(), adm.end(), "open cabinet 2"), 1);
  EXPECT_EQ(must(sim, "look"), "You are facing the cabinet 2, and cabinet 1. Next to it, you see nothing.");
}

TEST(AlfworldSimulator, CleanCoolAndExamineStates) {
  Simulator sim(kitchen(TaskType::kClean));
  sim.reset();
  must(sim, "go to countertop 1");
  must(sim, "take apple 1 from countertop 1");
  must(sim, "go to sinkbasin 1");
  EXPECT_EQ(must(sim, "clean apple 1 with sinkbasin 1"), "You clean the apple 1 using the sinkbasin 1.");
  EXPECT_EQ(must(sim, "examine apple 1"), "This is a clean apple 1.");
  must(sim, "go to fridge 1");
  EXPECT_EQ(must(sim, "cool apple 1 with fridge 1"), "You cool the apple 1 using the fridge 1.");
  EXPECT_EQ(must(sim, "examine apple 1"), "This is a cool and clean apple 1.");
  must(sim, "go to microwave 1");
  must(sim, "heat apple 1 with microwave 1");  // HeatObject clears isCool
  EXPECT_EQ(must(sim, "examine apple 1"), "This is a hot and clean apple 1.");
}

TEST(AlfworldSimulator, SliceNeedsAKnifeInHand) {
  Simulator sim(kitchen());
  sim.reset();
  must(sim, "go to countertop 1");
  bool valid = true;
  sim.step("slice apple 1 with knife 1", &valid);
  EXPECT_FALSE(valid);
  must(sim, "take knife 1 from countertop 1");
  EXPECT_EQ(must(sim, "slice apple 1 with knife 1"), "You sliced the apple 1 with the knife 1.");
  EXPECT_EQ(must(sim, "examine knife 1"), "There's nothing special about knife 1.");
}

TEST(AlfworldSimulator, LookTaskNeedsLampOnWhileHolding) {
  Simulator sim(kitchen(TaskType::kLook));
  sim.reset();
  must(sim, "go to sidetable 1");
  EXPECT_EQ(must(sim, "examine desklamp 1"), "This desklamp 1 is off.");
  EXPECT_EQ(must(sim, "use desklamp 1"), "You turn on the desklamp 1.");
  EXPECT_FALSE(sim.goal_satisfied());  // not holding the mug
  EXPECT_EQ(must(sim, "examine desklamp 1"), "This desklamp 1 is on.");
  must(sim, "go to fridge 1");
  must(sim, "open fridge 1");
  must(sim, "take mug 1 from fridge 1");
  EXPECT_FALSE(sim.goal_satisfied());  // lamp not at this location
  must(sim, "go to sidetable 1");
  EXPECT_TRUE(sim.goal_satisfied());
}

TEST(AlfworldSimulator, ObjectInTwoReceptaclesStaysInTheOtherAfterTake) {
  auto g = kitchen();
  g->initial.set_in(1, 5, false);  // no lamp on sidetable 1
  g->initial.set_in(2, 5, true);   // knife 1 also "in" sidetable 1 (like ALFRED's mug in coffeemachine + countertop)
  Simulator sim(g);
  sim.reset();
  must(sim, "go to countertop 1");
  must(sim, "take knife 1 from countertop 1");
  // PickupObject removes only inReceptacle(knife, countertop 1).
  EXPECT_EQ(must(sim, "go to sidetable 1"), "You arrive at sidetable 1. On the sidetable 1, you see a knife 1.");
}

TEST(AlfworldSimulator, HelpIsAdmissibleOnlyWhenTheGrammarHasIt) {
  auto g = kitchen();
  g->text.help.clear();
  g->text.goto_feedback = "You arrive at {l}. ";
  g->text.put_command = "put {o} in/on {r}";
  g->text.put_feedback = "You put the {o} in/on the {r}.";
  Simulator sim(g);
  sim.reset();
  const auto& adm = sim.admissible();
  EXPECT_EQ(std::count(adm.begin(), adm.end(), "help"), 0);
  EXPECT_EQ(must(sim, "go to countertop 1"), "You arrive at loc 1. On the countertop 1, you see a apple 1, and a knife 1.");
  must(sim, "take apple 1 from countertop 1");
  EXPECT_EQ(must(sim, "put apple 1 in/on countertop 1"), "You put the apple 1 in/on the countertop 1.");
}

TEST(AlfworldSimulator, ResetRestoresTheInitialState) {
  Simulator sim(kitchen());
  std::string intro = sim.reset();
  must(sim, "go to countertop 1");
  must(sim, "take apple 1 from countertop 1");
  EXPECT_EQ(sim.reset(), intro);
  EXPECT_EQ(sim.state().held, -1);
  EXPECT_EQ(sim.state().inside, sim.game().initial.inside);
}

TEST(AlfworldExpert, SolvesTheHandBuiltKitchenForEveryApplicableType) {
  for (TaskType t : {TaskType::kPick, TaskType::kClean, TaskType::kHeat, TaskType::kCool, TaskType::kLook}) {
    auto g = kitchen(t);
    if (t == TaskType::kPick) g->task.recep_type = 1;  // apple into the fridge
    Simulator sim(g);
    sim.reset();
    int steps = 0;
    while (!sim.goal_satisfied() && steps < 50) {
      auto a = sim.expert_action();
      ASSERT_TRUE(a.has_value()) << task_type_name(t);
      must(sim, *a);
      ++steps;
    }
    EXPECT_TRUE(sim.goal_satisfied()) << task_type_name(t);
    EXPECT_FALSE(sim.expert_action().has_value());
  }
}

}  // namespace
}  // namespace agentrl::envs::alfworld
