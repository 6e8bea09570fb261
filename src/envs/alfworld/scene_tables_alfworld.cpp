// Room tables fitted to ALFWorld's real evaluation games (the 274 games of
// json_2.1.1 valid_seen + valid_unseen; room type from the ALFRED floor plan
// number: 1-30 kitchen, 201-230 living room, 301-330 bedroom, 401-430
// bathroom). Counted on 2026-12-05 by a temporary print in the statistics
// test (tests/envs/alfworld_scene_stats_test.cpp, which now checks the
// scenes these tables draw against the real games):
//   receptacles: mean instances per room of each type -> a range with about
//     that mean, or a presence probability for types most rooms lack;
//   objects: mean instances per room -> skip = 1 - mean / 2 (instances 1-3
//     when present, mean 2), and the receptacle types real games put them
//     in, weighted by how often (types under 3% of an object's placements
//     left out). Objects that real games leave on the floor (no
//     receptacle: plungers, scrub brushes, baseball bats, basketballs,
//     boots) are not placed: the agent can never reach them.
// Properties (cleanable, ...) follow the agentrl tables; types new here are
// plain pickable objects.
#include "scene_tables.h"

#include <map>
#include <string>
#include <utility>

namespace agentrl::envs::alfworld {

namespace {

std::vector<RoomDef> kitchen_and_bathroom() {
  return {
      {"kitchen",
       {{"cabinet", true, 6, 14}, {"coffeemachine", false, 1, 1}, {"countertop", false, 1, 4},
        {"diningtable", false, 0, 1, 0.34}, {"drawer", true, 2, 7}, {"fridge", true, 1, 1},
        {"garbagecan", false, 1, 1}, {"microwave", true, 1, 1}, {"shelf", false, 0, 4}, {"sinkbasin", false, 1, 1},
        {"stoveburner", false, 4, 4}, {"toaster", false, 1, 1}},
       {{"apple", C | H | K | S, {"fridge", "countertop", "garbagecan", "microwave", "sinkbasin", "diningtable"}, {80, 62, 50, 31, 30, 15}, 0.07},
        {"book", 0, {"countertop", "diningtable", "cabinet", "drawer"}, {5, 4, 2, 1}, 0.96},
        {"bowl", C | H | K | RO, {"fridge", "cabinet", "countertop", "diningtable", "shelf", "sinkbasin"}, {93, 88, 62, 21, 12, 9}, 0.0},
        {"bread", H | K | S, {"countertop", "fridge", "diningtable"}, {161, 44, 37}, 0.16},
        {"butterknife", C, {"countertop", "diningtable", "sinkbasin", "drawer"}, {188, 34, 22, 18}, 0.1},
        {"cellphone", 0, {"countertop", "drawer", "shelf"}, {106, 38, 24}, 0.42},
        {"creditcard", 0, {"countertop", "drawer", "shelf"}, {81, 53, 48}, 0.37},
        {"cup", C | H | K | RO, {"cabinet", "fridge", "countertop", "sinkbasin", "diningtable", "microwave", "shelf"}, {67, 62, 56, 46, 23, 19, 11}, 0.0},
        {"dishsponge", C, {"countertop", "cabinet", "drawer", "diningtable", "shelf", "sinkbasin", "garbagecan"}, {71, 65, 52, 22, 20, 19, 12}, 0.1},
        {"egg", C | H | K | S, {"countertop", "fridge", "garbagecan", "sinkbasin", "microwave", "diningtable"}, {73, 72, 52, 44, 33, 21}, 0.0},
        {"fork", C, {"countertop", "drawer", "diningtable", "sinkbasin"}, {129, 82, 34, 33}, 0.03},
        {"glassbottle", 0, {"cabinet", "countertop", "sinkbasin", "garbagecan", "shelf"}, {73, 71, 18, 17, 16}, 0.3},
        {"kettle", C, {"stoveburner", "countertop", "cabinet", "diningtable"}, {23, 14, 8, 5}, 0.83},
        {"knife", C, {"countertop", "drawer", "diningtable", "sinkbasin"}, {183, 41, 25, 10}, 0.1},
        {"ladle", C, {"countertop", "diningtable", "cabinet", "drawer"}, {22, 6, 6, 4}, 0.87},
        {"lettuce", C | K | S, {"countertop", "fridge", "diningtable", "sinkbasin", "garbagecan"}, {126, 80, 35, 12, 8}, 0.1},
        {"mug", C | H | K | RO, {"countertop", "coffeemachine", "cabinet", "fridge", "microwave", "sinkbasin", "shelf", "diningtable"},
         {91, 60, 58, 53, 26, 17, 17, 15}, 0.0},
        {"pan", C | K, {"stoveburner", "countertop", "fridge", "cabinet"}, {203, 57, 21, 13}, 0.0},
        {"papertowelroll", 0, {"countertop", "garbagecan", "shelf", "diningtable"}, {45, 27, 23, 6}, 0.3, 1, 1},
        {"pen", 0, {"countertop", "diningtable", "drawer"}, {7, 7, 1}, 0.95},
        {"pencil", 0, {"countertop", "diningtable", "drawer"}, {4, 4, 3}, 0.96},
        {"peppershaker", 0, {"countertop", "cabinet", "drawer", "shelf", "diningtable"}, {95, 82, 65, 32, 19}, 0.0},
        {"plate", C | H | K | RO, {"cabinet", "countertop", "fridge", "diningtable", "shelf", "sinkbasin"}, {129, 63, 48, 23, 14, 11}, 0.0},
        {"pot", C | K, {"stoveburner", "countertop"}, {218, 37}, 0.05},
        {"potato", C | H | K | S, {"fridge", "countertop", "sinkbasin", "garbagecan", "microwave", "diningtable"}, {89, 85, 45, 26, 25, 14}, 0.02},
        {"saltshaker", 0, {"cabinet", "drawer", "countertop", "shelf", "diningtable"}, {86, 82, 64, 30, 20}, 0.02},
        {"soapbottle", 0, {"cabinet", "countertop", "garbagecan", "diningtable", "shelf"}, {100, 93, 41, 29, 13}, 0.03},
        {"spatula", C, {"countertop", "drawer", "sinkbasin", "diningtable"}, {130, 67, 54, 29}, 0.03},
        {"spoon", C, {"countertop", "drawer", "sinkbasin", "diningtable"}, {134, 73, 50, 26}, 0.02},
        {"spraybottle", 0, {"cabinet", "countertop", "garbagecan", "diningtable"}, {4, 3, 2, 1}, 0.96},
        {"statue", 0, {"countertop", "shelf"}, {90, 46}, 0.53},
        {"tomato", C | H | K | S, {"countertop", "fridge", "sinkbasin", "garbagecan", "diningtable"}, {113, 94, 29, 25, 23}, 0.0},
        {"vase", 0, {"cabinet", "shelf", "countertop"}, {76, 71, 58}, 0.3},
        {"winebottle", K, {"countertop", "diningtable", "cabinet", "garbagecan", "shelf", "fridge"}, {21, 13, 10, 7, 2, 2}, 0.81}},
       false,
       {1, 1, 2, 1, 1, 1}},  // real clean tasks: 40 kitchens, 18 bathrooms
      {"bathroom",
       {{"bathtubbasin", false, 0, 1, 0.49}, {"cabinet", true, 2, 4}, {"cart", false, 0, 1, 0.06},
        {"countertop", false, 1, 1}, {"drawer", true, 0, 3}, {"dresser", false, 0, 1, 0.06},
        {"garbagecan", false, 1, 1}, {"handtowelholder", false, 1, 3}, {"shelf", false, 0, 1},
        {"sinkbasin", false, 1, 2}, {"toilet", false, 1, 1}, {"toiletpaperhanger", false, 1, 1},
        {"towelholder", false, 1, 1}},
       {{"candle", 0, {"countertop", "toilet", "cabinet", "drawer", "shelf"}, {34, 26, 25, 9, 6}, 0.0},
        {"cloth", C, {"cabinet", "bathtubbasin", "countertop", "drawer", "shelf", "toilet"}, {41, 21, 11, 7, 6, 3}, 0.05},
        {"dishsponge", C, {"bathtubbasin", "sinkbasin", "cart", "toilet", "garbagecan", "cabinet", "shelf"}, {4, 2, 2, 2, 1, 1, 1}, 0.87},
        {"handtowel", 0, {"handtowelholder"}, {1}, 0.07, 1, 2},
        {"papertowelroll", 0, {"toilet", "garbagecan", "countertop"}, {2, 1, 1}, 0.92, 1, 1},
        {"soapbar", C, {"countertop", "toilet", "sinkbasin", "cabinet", "bathtubbasin", "shelf", "drawer", "garbagecan"},
         {27, 18, 12, 12, 7, 7, 5, 4}, 0.06},
        {"soapbottle", 0, {"cabinet", "countertop", "toilet", "shelf", "garbagecan", "drawer"}, {34, 33, 12, 8, 5, 3}, 0.0},
        {"spraybottle", 0, {"countertop", "cabinet", "toilet", "shelf", "garbagecan", "cart", "dresser"}, {34, 28, 21, 9, 8, 4, 4}, 0.0},
        {"tissuebox", 0, {"shelf", "countertop", "drawer", "cabinet"}, {8, 4, 3, 1}, 0.83},
        {"toiletpaper", 0, {"toilet", "cabinet", "countertop", "toiletpaperhanger", "garbagecan", "shelf", "drawer"},
         {24, 23, 15, 13, 8, 5, 5}, 0.04},
        {"towel", 0, {"towelholder"}, {1}, 0.0, 1, 1}},
       false,
       {1, 1, 1, 1, 1, 1}},
  };
}

std::vector<RoomDef> bedroom_and_livingroom() {
  return {
      {"bedroom",
       {{"armchair", false, 0, 1, 0.12}, {"bed", false, 1, 1}, {"cabinet", true, 0, 1, 0.1}, {"desk", false, 1, 2},
        {"diningtable", false, 0, 1, 0.1}, {"drawer", true, 3, 9}, {"dresser", false, 0, 1, 0.29},
        {"garbagecan", false, 1, 1}, {"laundryhamper", false, 0, 1, 0.6}, {"safe", true, 0, 1, 0.63},
        {"shelf", false, 2, 6}, {"sidetable", false, 0, 1, 0.52}},
       {{"alarmclock", 0, {"desk", "shelf", "sidetable", "dresser", "diningtable"}, {42, 35, 11, 7, 3}, 0.06},
        {"book", 0, {"bed", "drawer", "desk"}, {60, 16, 15}, 0.07},
        {"bowl", 0, {"desk", "shelf"}, {46, 28}, 0.24},
        {"box", 0, {"desk", "shelf"}, {1, 1}, 0.98},
        {"cd", 0, {"desk", "drawer", "garbagecan", "dresser", "shelf", "sidetable", "diningtable"}, {31, 30, 15, 7, 6, 4, 4}, 0.06},
        {"cellphone", 0, {"drawer", "bed", "desk", "safe", "sidetable", "shelf", "dresser", "diningtable"}, {26, 26, 18, 16, 6, 6, 5, 4}, 0.0},
        {"creditcard", 0, {"drawer", "desk", "shelf", "sidetable", "dresser"}, {56, 25, 16, 7, 4}, 0.0},
        {"keychain", 0, {"drawer", "safe", "desk", "shelf", "dresser", "sidetable", "diningtable"}, {29, 23, 23, 19, 7, 6, 5}, 0.0},
        {"laptop", 0, {"bed", "desk"}, {58, 18}, 0.24},
        {"mug", 0, {"desk", "shelf", "diningtable"}, {49, 25, 8}, 0.15},
        {"pen", 0, {"drawer", "desk", "shelf", "sidetable", "dresser", "diningtable", "garbagecan"}, {30, 25, 24, 6, 6, 6, 4}, 0.01},
        {"pencil", 0, {"desk", "shelf", "drawer", "dresser", "sidetable", "diningtable", "garbagecan"}, {41, 26, 15, 12, 7, 5, 4}, 0.0},
        {"pillow", 0, {"bed"}, {1}, 0.13},
        {"remotecontrol", 0, {"drawer", "dresser", "armchair", "diningtable"}, {1, 1, 1, 1}, 0.95},
        {"statue", 0, {"shelf", "sidetable"}, {3, 1}, 0.96},
        {"teddybear", 0, {"bed"}, {1}, 0.83, 1, 1},
        {"tissuebox", 0, {"desk", "drawer", "shelf"}, {5, 1, 1}, 0.93},
        {"vase", 0, {"shelf", "desk", "dresser", "sidetable"}, {3, 1, 1, 1}, 0.94},
        {"watch", 0, {"dresser", "desk", "drawer"}, {1, 1, 1}, 0.99}},
       true,
       {1, 14, 1, 1, 1, 1}},  // real look tasks: 29 bedrooms, 2 living rooms
      {"livingroom",
       {{"armchair", false, 1, 2}, {"cabinet", true, 0, 4}, {"coffeetable", false, 0, 1, 0.54},
        {"diningtable", false, 0, 1, 0.43}, {"drawer", true, 3, 9}, {"dresser", false, 0, 1, 0.64},
        {"garbagecan", false, 1, 1}, {"ottoman", false, 0, 1, 0.11}, {"safe", true, 0, 1, 0.43},
        {"shelf", false, 3, 9}, {"sidetable", false, 1, 3}, {"sofa", false, 1, 1}, {"tvstand", false, 0, 1, 0.21}},
       {{"book", 0, {"sidetable", "coffeetable", "dresser", "diningtable", "armchair", "drawer"}, {3, 3, 3, 2, 1, 1}, 0.77},
        {"bowl", 0, {"diningtable", "coffeetable"}, {4, 1}, 0.91},
        {"box", 0, {"sofa", "cabinet", "dresser", "diningtable", "shelf", "coffeetable", "sidetable"}, {12, 10, 7, 6, 5, 2, 2}, 0.18},
        {"candle", 0, {"sidetable", "diningtable", "coffeetable"}, {1, 1, 1}, 0.95},
        {"cellphone", 0, {"dresser", "armchair", "drawer", "sidetable", "shelf", "sofa", "safe"}, {9, 9, 4, 3, 3, 2, 2}, 0.37},
        {"creditcard", 0, {"sidetable", "sofa", "armchair", "shelf", "drawer", "dresser", "coffeetable", "diningtable"},
         {10, 9, 8, 8, 7, 5, 5, 3}, 0.0},
        {"keychain", 0, {"sofa", "sidetable", "drawer", "dresser", "coffeetable", "diningtable", "tvstand", "shelf", "safe"},
         {10, 10, 8, 6, 5, 3, 3, 3, 2}, 0.09},
        {"laptop", 0, {"sofa", "dresser", "diningtable", "coffeetable", "armchair"}, {12, 10, 8, 8, 7}, 0.16},
        {"newspaper", 0, {"sofa", "dresser", "sidetable", "shelf", "cabinet", "diningtable", "armchair"}, {9, 9, 7, 6, 5, 4, 2}, 0.23},
        {"pen", 0, {"sidetable", "coffeetable", "tvstand", "diningtable"}, {4, 1, 1, 1}, 0.87},
        {"pencil", 0, {"coffeetable", "sidetable"}, {5, 4}, 0.84},
        {"pillow", 0, {"sofa", "armchair"}, {19, 19}, 0.32},
        {"plate", 0, {"diningtable", "shelf", "sidetable", "tvstand"}, {6, 2, 1, 1}, 0.82},
        {"remotecontrol", 0, {"sofa", "dresser", "coffeetable", "sidetable", "armchair", "diningtable", "drawer", "tvstand"},
         {14, 14, 7, 6, 5, 3, 2, 2}, 0.03},
        {"statue", 0, {"sidetable", "shelf", "diningtable", "dresser", "coffeetable", "tvstand", "safe"}, {14, 14, 13, 11, 5, 3, 3}, 0.0},
        {"tissuebox", 0, {"cabinet", "sidetable", "diningtable", "dresser", "shelf", "coffeetable", "garbagecan"}, {10, 7, 5, 5, 3, 2, 1}, 0.41},
        {"vase", 0, {"shelf", "safe", "diningtable", "cabinet", "coffeetable", "tvstand", "dresser", "sidetable"},
         {15, 6, 5, 5, 4, 4, 4, 2}, 0.2},
        {"watch", 0, {"sidetable", "drawer", "safe", "coffeetable", "dresser", "shelf", "diningtable"}, {9, 8, 6, 5, 5, 4, 3}, 0.27}},
       true,
       {1, 1, 1, 1, 1, 1}},
  };
}

}  // namespace

const std::vector<RoomDef>& alfworld_rooms() {
  static const std::vector<RoomDef> defs = [] {
    std::vector<RoomDef> out = kitchen_and_bathroom();
    for (auto& r : bedroom_and_livingroom()) out.push_back(r);
    return out;
  }();
  return defs;
}

double placement_weight(const std::string& object_type, const std::string& recep_type) {
  static const std::map<std::pair<std::string, std::string>, double> table = [] {
    std::map<std::pair<std::string, std::string>, double> t;
    for (const RoomDef& room : alfworld_rooms())
      for (const ObjDef& od : room.objects)
        for (size_t k = 0; k < od.receptacles.size(); ++k) t[{od.type, od.receptacles[k]}] += od.weights[k];
    // Lamps are placed by the generator itself, on kLampSpots.
    for (const LampSpot& l : kLampSpots) t[{"desklamp", l.type}] = l.prior;
    return t;
  }();
  auto it = table.find({object_type, recep_type});
  return it == table.end() ? 0.0 : it->second;
}

}  // namespace agentrl::envs::alfworld
