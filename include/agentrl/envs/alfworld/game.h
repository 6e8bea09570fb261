// One ALFWorld game: the static scene (receptacles, objects, locations, the
// canContain table), its initial state, its goal and the text variant of its
// grammar.
//
// A Game comes either from a real ALFWorld game file (game_loader.h) or from
// the built-in procedural generator (scene_generator.h); the Simulator
// (simulator.h) plays it. Names follow ALFWorld: lowercased ALFRED type plus a
// per-type number ("cabinet 3", "sinkbasin 1"), and `receptacles`/`objects`
// are stored in ALFWorld's listing order (the order of the sorted ids), which
// is the order the room overview and receptacle contents are printed in.
//
// Thread-safety: a Game is an immutable value once built; share it as
// `std::shared_ptr<const Game>` across threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace agentrl::envs::alfworld {

// The six ALFWorld task types (ALFRED's task families without slicing).
enum class TaskType { kPick, kLook, kClean, kHeat, kCool, kPickTwo };
constexpr int kNumTaskTypes = 6;

// "pick_and_place_simple", "look_at_obj_in_light", ... (ALFRED's names).
const char* task_type_name(TaskType t);
// "pick", "look", "clean", "heat", "cool", "pick2" (the GiGPO/EMPG table columns).
const char* task_type_short(TaskType t);
// Parses either form; returns false for anything else.
bool parse_task_type(const std::string& s, TaskType* out);

struct Receptacle {
  std::string id;    // PDDL id (real games) or generated id
  std::string name;  // "cabinet 3"
  int type = 0;      // index into Game::type_names
  int location = 0;  // index into Game::location_names
  bool openable = false;
};

struct Object {
  std::string id;
  std::string name;  // "apple 1"
  int type = 0;
  bool pickupable = false;
  bool cleanable = false;
  bool heatable = false;
  bool coolable = false;
  bool toggleable = false;
  bool sliceable = false;
  bool receptacle_object = false;  // isReceptacleObject (mug, bowl, ...)
};

// Per-object state flags (bit mask).
enum ObjectFlag : uint8_t {
  kClean = 1,
  kHot = 2,
  kCool = 4,
  kSliced = 8,
  kOn = 16,
  kToggled = 32,
};

// The mutable part of a game: exactly the PDDL fluents the actions change.
// inReceptacle is a relation, not a function: ALFRED scenes put some objects
// in two receptacles at once (a mug in the coffee machine and on the
// counter top under it; 152 of the 274 evaluation games have such objects),
// and PickupObject removes only the (o, r) pair it names. So membership is a
// bit matrix (object-major, `words` 64-bit words per object).
struct State {
  int agent_location = -1;          // index into location_names
  int held = -1;                    // object index or -1 (ALFWorld holds one object at most)
  int words = 1;
  std::vector<uint64_t> inside;     // inReceptacle(o, r): bit r of row o
  std::vector<int> object_location; // per object: location index, -1 if none (held)
  std::vector<uint8_t> opened;      // per receptacle
  std::vector<uint8_t> flags;       // per object, ObjectFlag bits

  void init(size_t objects, size_t receptacles) {
    words = static_cast<int>((receptacles + 63) / 64);
    if (words == 0) words = 1;
    inside.assign(objects * static_cast<size_t>(words), 0);
    object_location.assign(objects, -1);
    opened.assign(receptacles, 0);
    flags.assign(objects, 0);
  }
  bool in(int o, int r) const {
    return (inside[static_cast<size_t>(o) * words + (r >> 6)] >> (r & 63)) & 1u;
  }
  void set_in(int o, int r, bool v) {
    uint64_t& w = inside[static_cast<size_t>(o) * words + (r >> 6)];
    const uint64_t bit = uint64_t{1} << (r & 63);
    w = v ? (w | bit) : (w & ~bit);
  }
  // Lowest-index receptacle holding o, -1 if none.
  int first_receptacle(int o) const {
    for (int k = 0; k < words; ++k) {
      uint64_t w = inside[static_cast<size_t>(o) * words + k];
      if (w) return k * 64 + __builtin_ctzll(w);
    }
    return -1;
  }
};

// What the goal asks for. Real games' PDDL goals all have one of six shapes
// (see game_loader.cpp); the spec is the goal in a form that can be checked
// in O(objects) after every step and planned for by the expert.
struct TaskSpec {
  TaskType type = TaskType::kPick;
  int object_type = -1;  // type of the object to move / to look at
  int recep_type = -1;   // target receptacle type (-1 for look)
  int lamp_type = -1;    // light source type (look only)
};

// The sentences that differ between ALFWorld's grammar versions, read from
// the game's own grammar. Placeholders: {o} object name, {r} receptacle
// name, {l} location name.
struct GameText {
  std::string goto_feedback = "You arrive at {r}. ";  // twl2; 2.1.1: "You arrive at {l}. "
  std::string put_command = "move {o} to {r}";        // 2.1.1: "put {o} in/on {r}"
  std::string put_feedback = "You move the {o} to the {r}.";  // 2.1.1: "You put the {o} in/on the {r}."
  std::string help;  // the help.feedback text; empty = the game has no help action (2.1.1)
};

struct Game {
  std::string id;
  std::vector<std::string> type_names;  // lowercased ALFRED types: "apple", "sinkbasin", ...
  std::vector<std::string> location_names;
  std::vector<Receptacle> receptacles;
  std::vector<Object> objects;
  std::vector<uint8_t> can_contain;  // [recep_type * type_names.size() + object_type]
  State initial;
  TaskSpec task;
  std::string task_description;  // "put a clean ladle in cabinet."
  GameText text;

  bool contains(int recep_type, int object_type) const {
    return can_contain[static_cast<size_t>(recep_type) * type_names.size() + static_cast<size_t>(object_type)] != 0;
  }
  // Type index by name, -1 if the game has no such type.
  int find_type(const std::string& name) const;
};

// The twl2 help text (ALFWorld >= 0.4, alfred.twl2).
const std::string& twl2_help_text();

}  // namespace agentrl::envs::alfworld
