// Built-in ALFWorld scenes: a procedural generator of kitchens, bathrooms,
// bedrooms and living rooms from ALFRED-style receptacle and object tables
// (which receptacles a room has, which are openable, which objects are
// cleanable/heatable/coolable/sliceable/toggleable and where each can go).
//
// Splits in the spirit of ALFWorld's: a room *layout* (room type and
// receptacle counts) is drawn from (seed, layout id); "train" and
// "valid_seen" use the same 30 layouts per room type with different object
// placements, "valid_unseen" uses 10 held-out layouts per room type and only
// held-out (object, receptacle) goal combinations (a fixed quarter of all
// pairs, never used as goals in train/valid_seen). A game is generated
// lazily and deterministically from (split, index, seed); the goal never
// holds initially and every game is solvable (tests run the expert on each).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/envs/alfworld/game.h"

namespace agentrl::envs::alfworld {

struct SceneOptions {
  int64_t max_receptacles = 0;          // 0 = no limit (quickstart: e.g. 8)
  std::vector<std::string> room_types;  // subset of kitchen, bathroom, bedroom, livingroom; empty = all
  std::vector<TaskType> task_types;     // empty = all six
  std::string grammar = "twl2";         // "twl2" or "2.1.1" text
  // "agentrl" (hand-written room tables) or "alfworld" (tables fitted to
  // ALFWorld's real evaluation games: their receptacle counts per room,
  // object types and placements, task-to-room mix).
  std::string tables = "agentrl";
};

// split: "train", "valid_seen" or "valid_unseen". Throws ConfigError for
// another split or an option combination that allows no task.
std::shared_ptr<const Game> generate_game(const std::string& split, int64_t index, uint64_t seed,
                                          const SceneOptions& options);

// True if (object type, receptacle type) is a held-out goal combination.
bool held_out_combination(const std::string& object_type, const std::string& recep_type);

}  // namespace agentrl::envs::alfworld
