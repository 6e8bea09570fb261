// The room tables of the built-in scene generator (private to alfworld/):
// which receptacles a room type has and how many, which objects it holds,
// their properties and where they may lie. Two sets:
//   agentrl_rooms(): hand-written ranges condensed from ALFRED's scene
//     statistics (the default; the quickstart's scenes come from these);
//   alfworld_rooms(): fitted to ALFWorld's 274 real evaluation games
//     (json_2.1.1 valid_seen + valid_unseen): receptacle counts per room
//     type, object types per room with their presence and where they lie,
//     weighted as often as the real games put them there.
// Thread-safety: the tables are built once (function-local statics) and
// never change.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "agentrl/envs/alfworld/game.h"

namespace agentrl::envs::alfworld {

struct RecepDef {
  const char* type;
  bool openable;
  int min, max;     // instances, drawn uniformly in [min, max]
  double p = 1.0;   // < 1: present with probability p, then max(min, 1)..max instances
};
enum Prop { C = 1, H = 2, K = 4, S = 8, RO = 16 };  // cleanable, heatable, cool(K)able, sliceable, receptacle object
struct ObjDef {
  const char* type;
  int props;
  std::vector<const char*> receptacles;
  // Where an instance lies: empty = any instance of an allowed receptacle
  // type, uniformly; else one weight per entry of `receptacles` (a type is
  // drawn by weight among those the room has, then one of its instances).
  std::vector<int> weights = {};
  double skip = 0.35;    // probability that a room has none of this type
  int min_n = 1, max_n = 3;  // instances when present
};
struct RoomDef {
  const char* name;
  std::vector<RecepDef> receps;
  std::vector<ObjDef> objects;
  bool lamps;  // desk lamps on desks/side tables/dressers (look tasks)
  // Relative chance that a task of each type (TaskType order) is set in
  // this room type rather than another that can host it; all 1 = uniform.
  std::array<double, kNumTaskTypes> task_weight = {1, 1, 1, 1, 1, 1};
};

// Where the generator puts a room's desk lamp (an instance of one of these
// types, uniformly), and the search prior's order for finding one (desks
// first; an order chosen by hand, not counted from the real games).
struct LampSpot {
  const char* type;
  double prior;
};
inline constexpr LampSpot kLampSpots[] = {{"desk", 3}, {"sidetable", 2}, {"dresser", 1}};

const std::vector<RoomDef>& agentrl_rooms();
const std::vector<RoomDef>& alfworld_rooms();

// How often ALFWorld's real games put an object of `object_type` in a
// receptacle of `recep_type` (the fitted tables' placement weights summed
// over room types; desk lamps: kLampSpots' priors); 0 when never.
// The prior of the searching expert (alfworld.expert: prior).
double placement_weight(const std::string& object_type, const std::string& recep_type);

}  // namespace agentrl::envs::alfworld
