// Procedural ALFWorld scenes. The agentrl tables below condense ALFRED's
// scene statistics (gen/constants.py: OPENABLE_CLASS_LIST, the receptacle and
// object classes per room, VAL_RECEPTACLE_OBJECTS and the object properties
// of AI2-THOR) into ranges per room type; they are written by hand for
// agentrl and are a simplification, not ALFRED's exact tables. The fitted
// tables (scene_tables_alfworld.cpp) follow ALFWorld's real games.
#include "agentrl/envs/alfworld/scene_generator.h"

#include <algorithm>
#include <map>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/envs/alfworld/game_loader.h"
#include "scene_tables.h"

namespace agentrl::envs::alfworld {

const std::vector<RoomDef>& agentrl_rooms() {
  static const std::vector<const char*> food = {"countertop", "diningtable", "fridge", "microwave", "sinkbasin", "garbagecan"};
  static const std::vector<const char*> dish = {"countertop", "diningtable", "fridge", "microwave", "sinkbasin", "cabinet", "shelf"};
  static const std::vector<const char*> utensil = {"countertop", "diningtable", "drawer", "sinkbasin"};
  static const std::vector<const char*> kmisc = {"countertop", "diningtable", "cabinet", "shelf", "drawer"};
  static const std::vector<const char*> bath = {"countertop", "toilet", "cabinet", "shelf", "drawer", "garbagecan"};
  static const std::vector<const char*> wet = {"countertop", "sinkbasin", "bathtubbasin", "toilet", "cabinet", "shelf", "drawer", "garbagecan"};
  static const std::vector<const char*> desk = {"desk", "dresser", "sidetable", "shelf", "drawer"};
  static const std::vector<const char*> lounge = {"sofa", "armchair", "coffeetable", "sidetable", "dresser", "diningtable"};
  static const std::vector<RoomDef> defs = {
      {"kitchen",
       {{"cabinet", true, 3, 10}, {"coffeemachine", false, 1, 1}, {"countertop", false, 1, 3}, {"diningtable", false, 0, 1},
        {"drawer", true, 1, 6}, {"fridge", true, 1, 1}, {"garbagecan", false, 1, 1}, {"microwave", true, 1, 1},
        {"shelf", false, 0, 3}, {"sinkbasin", false, 1, 1}, {"stoveburner", false, 2, 4}, {"toaster", false, 0, 1}},
       {{"apple", C | H | K | S, food}, {"bread", H | K | S, food}, {"egg", C | H | K | S, food},
        {"lettuce", C | K | S, food}, {"potato", C | H | K | S, food}, {"tomato", C | H | K | S, food},
        {"bowl", C | H | K | RO, dish}, {"cup", C | H | K | RO, dish},
        {"mug", C | H | K | RO, {"countertop", "diningtable", "fridge", "microwave", "sinkbasin", "cabinet", "shelf", "coffeemachine"}},
        {"plate", C | H | K | RO, dish}, {"pan", C | K, {"stoveburner", "countertop", "diningtable", "cabinet", "sinkbasin", "fridge"}},
        {"pot", C | K, {"stoveburner", "countertop", "diningtable", "cabinet", "sinkbasin", "fridge"}},
        {"kettle", C, {"stoveburner", "countertop", "diningtable", "cabinet", "sinkbasin"}},
        {"butterknife", C, utensil}, {"fork", C, utensil}, {"knife", C, utensil}, {"ladle", C, utensil},
        {"spatula", C, utensil}, {"spoon", C, utensil}, {"dishsponge", C, kmisc}, {"peppershaker", 0, kmisc},
        {"saltshaker", 0, kmisc}, {"soapbottle", 0, kmisc}, {"winebottle", K, {"countertop", "diningtable", "fridge", "cabinet", "shelf", "garbagecan"}}},
       false},
      {"bathroom",
       {{"bathtubbasin", false, 0, 1}, {"cabinet", true, 1, 4}, {"countertop", false, 1, 1}, {"drawer", true, 0, 4},
        {"garbagecan", false, 1, 1}, {"handtowelholder", false, 0, 2}, {"shelf", false, 0, 2}, {"sinkbasin", false, 1, 2},
        {"toilet", false, 1, 1}, {"toiletpaperhanger", false, 1, 1}, {"towelholder", false, 0, 1}},
       {{"candle", 0, bath}, {"cloth", C, wet}, {"handtowel", 0, {"handtowelholder", "countertop"}},
        {"soapbar", C, wet}, {"soapbottle", 0, bath}, {"spraybottle", 0, bath}, {"tissuebox", 0, bath},
        {"toiletpaper", 0, {"toiletpaperhanger", "toilet", "countertop", "cabinet", "shelf", "drawer", "garbagecan"}},
        {"towel", 0, {"towelholder", "bathtubbasin"}}},
       false},
      {"bedroom",
       {{"armchair", false, 0, 1}, {"bed", false, 1, 1}, {"desk", false, 0, 1}, {"drawer", true, 1, 6},
        {"dresser", false, 0, 1}, {"garbagecan", false, 1, 1}, {"laundryhamper", false, 0, 1}, {"safe", true, 0, 1},
        {"shelf", false, 0, 6}, {"sidetable", false, 1, 2}},
       {{"alarmclock", 0, {"desk", "dresser", "sidetable", "shelf"}}, {"book", 0, {"bed", "desk", "dresser", "sidetable", "shelf", "drawer"}},
        {"bowl", 0, {"desk", "dresser", "sidetable", "shelf"}}, {"cd", 0, {"desk", "dresser", "sidetable", "shelf", "drawer", "safe", "garbagecan"}},
        {"cellphone", 0, {"bed", "desk", "dresser", "sidetable", "shelf", "drawer"}}, {"creditcard", 0, {"bed", "desk", "dresser", "sidetable", "shelf", "drawer"}},
        {"keychain", 0, {"desk", "dresser", "sidetable", "shelf", "drawer", "safe"}}, {"laptop", 0, {"bed", "desk", "dresser", "sidetable"}},
        {"mug", 0, {"desk", "dresser", "sidetable", "shelf"}}, {"pen", 0, {"desk", "dresser", "sidetable", "shelf", "drawer", "garbagecan"}},
        {"pencil", 0, {"desk", "dresser", "sidetable", "shelf", "drawer", "garbagecan"}}, {"pillow", 0, {"bed", "armchair"}},
        {"watch", 0, {"desk", "dresser", "sidetable", "shelf", "drawer", "safe"}}},
       true},
      {"livingroom",
       {{"armchair", false, 0, 2}, {"cabinet", true, 0, 4}, {"coffeetable", false, 1, 1}, {"diningtable", false, 0, 1},
        {"drawer", true, 0, 4}, {"dresser", false, 0, 1}, {"garbagecan", false, 1, 1}, {"ottoman", false, 0, 1},
        {"shelf", false, 0, 4}, {"sidetable", false, 1, 2}, {"sofa", false, 1, 1}, {"tvstand", false, 0, 1}},
       {{"box", 0, lounge}, {"creditcard", 0, {"sofa", "armchair", "coffeetable", "sidetable", "dresser", "drawer", "shelf"}},
        {"keychain", 0, {"sofa", "armchair", "coffeetable", "sidetable", "dresser", "drawer", "shelf"}},
        {"laptop", 0, lounge}, {"newspaper", 0, {"sofa", "armchair", "coffeetable", "sidetable", "dresser", "ottoman"}},
        {"pillow", 0, {"sofa", "armchair", "ottoman"}},
        {"remotecontrol", 0, {"sofa", "armchair", "coffeetable", "sidetable", "tvstand", "dresser", "drawer"}},
        {"statue", 0, {"coffeetable", "sidetable", "tvstand", "dresser", "shelf", "cabinet"}},
        {"tissuebox", 0, {"coffeetable", "sidetable", "tvstand", "dresser", "shelf"}},
        {"vase", 0, {"coffeetable", "sidetable", "tvstand", "dresser", "shelf", "cabinet"}},
        {"watch", 0, {"coffeetable", "sidetable", "tvstand", "dresser", "shelf", "drawer"}}},
       true},
  };
  return defs;
}

namespace {

// Index drawn with probability proportional to `w` (entries <= 0 never
// drawn; at least one must be positive): one uniform draw, so every table
// draw spends the same randomness as before this helper served them all.
size_t draw_weighted(const std::vector<double>& w, Rng& rng) {
  double total = 0;
  for (double x : w)
    if (x > 0) total += x;
  double u = rng.uniform() * total;
  size_t last = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0) continue;
    last = i;
    u -= w[i];
    if (u < 0) return i;
  }
  return last;
}

constexpr int kSeenLayouts = 30;    // per room type, shared by train and valid_seen
constexpr int kUnseenLayouts = 10;  // per room type, valid_unseen only

uint64_t hash_str(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Draft {
  std::vector<std::pair<std::string, bool>> receps;  // type, openable (instance order)
  std::vector<std::pair<std::string, int>> objects;  // type, receptacle instance
  std::vector<int> obj_def;                           // ObjDef index, -1 for the lamp
};

Draft draw_layout(const RoomDef& room, uint64_t seed, int layout, int64_t max_receptacles) {
  Rng rng(mix_seed(mix_seed(seed, 0x1a40), hash_str(room.name) + static_cast<uint64_t>(layout)));
  std::vector<std::pair<std::string, bool>> required, extra;
  for (const auto& rd : room.receps) {
    // p < 1 (fitted tables only) spends one more draw; p == 1 keeps the
    // draws, and so the scenes, of the agentrl tables as they were.
    int n = 0;
    if (rd.p >= 1.0) n = static_cast<int>(rng.uniform_int(rd.min, rd.max));
    else if (rng.uniform() < rd.p) n = static_cast<int>(rng.uniform_int(std::max(rd.min, 1), rd.max));
    for (int k = 0; k < n; ++k) (k == 0 && rd.min > 0 ? required : extra).push_back({rd.type, rd.openable});
  }
  // Shuffle the optional instances so a receptacle cap keeps a varied subset.
  for (size_t i = extra.size(); i > 1; --i) std::swap(extra[i - 1], extra[rng.uniform_int(0, static_cast<int64_t>(i) - 1)]);
  Draft d;
  d.receps = required;
  for (auto& e : extra) d.receps.push_back(e);
  if (max_receptacles > 0 && static_cast<int64_t>(d.receps.size()) > max_receptacles) d.receps.resize(max_receptacles);
  return d;
}

bool can_hold(const ObjDef& od, const std::string& recep) {
  for (const char* r : od.receptacles)
    if (recep == r) return true;
  return false;
}

// A receptacle type drawn by the object's weights among the types the room
// has, then one of its instances uniformly (fitted tables: real games put a
// fork on a counter top more often than in one of several drawers).
int weighted_spot(const ObjDef& od, const Draft& d, Rng& rng) {
  std::vector<std::vector<int>> by_type(od.receptacles.size());
  std::vector<double> w(od.receptacles.size(), 0.0);
  for (size_t t = 0; t < od.receptacles.size(); ++t) {
    for (size_t r = 0; r < d.receps.size(); ++r)
      if (d.receps[r].first == od.receptacles[t]) by_type[t].push_back(static_cast<int>(r));
    if (!by_type[t].empty()) w[t] = od.weights[t];
  }
  const auto& inst = by_type[draw_weighted(w, rng)];
  return inst[rng.uniform_int(0, static_cast<int64_t>(inst.size()) - 1)];
}

void place_objects(const RoomDef& room, Draft& d, Rng& rng) {
  for (size_t k = 0; k < room.objects.size(); ++k) {
    const ObjDef& od = room.objects[k];
    std::vector<int> spots;
    for (size_t r = 0; r < d.receps.size(); ++r)
      if (can_hold(od, d.receps[r].first)) spots.push_back(static_cast<int>(r));
    if (spots.empty() || rng.uniform() < od.skip) continue;
    int n = static_cast<int>(rng.uniform_int(od.min_n, od.max_n));
    for (int i = 0; i < n; ++i) {
      const int r = od.weights.empty() ? spots[rng.uniform_int(0, static_cast<int64_t>(spots.size()) - 1)]
                                       : weighted_spot(od, d, rng);
      d.objects.push_back({od.type, r});
      d.obj_def.push_back(static_cast<int>(k));
    }
  }
  if (room.lamps) {
    std::vector<int> spots;
    for (size_t r = 0; r < d.receps.size(); ++r) {
      for (const LampSpot& l : kLampSpots)
        if (d.receps[r].first == l.type) spots.push_back(static_cast<int>(r));
    }
    if (!spots.empty()) {
      d.objects.push_back({"desklamp", spots[rng.uniform_int(0, static_cast<int64_t>(spots.size()) - 1)]});
      d.obj_def.push_back(-1);
    }
  }
}

struct Goal {
  TaskType type;
  std::string obj, recep;
};

std::vector<Goal> candidate_goals(const RoomDef& room, const Draft& d, TaskType type, bool unseen) {
  std::map<std::string, int> count;
  std::map<std::string, const ObjDef*> def;
  for (size_t i = 0; i < d.objects.size(); ++i)
    if (d.obj_def[i] >= 0) {
      ++count[d.objects[i].first];
      def[d.objects[i].first] = &room.objects[d.obj_def[i]];
    }
  auto has_recep = [&](const std::string& t) {
    for (const auto& r : d.receps)
      if (r.first == t) return true;
    return false;
  };
  std::vector<Goal> out;
  if (type == TaskType::kLook) {
    if (!count.count("desklamp") && std::none_of(d.obj_def.begin(), d.obj_def.end(), [](int k) { return k < 0; })) return out;
    for (const auto& [obj, n] : count)
      if (held_out_combination(obj, "desklamp") == unseen) out.push_back({type, obj, "desklamp"});
    return out;
  }
  const char* appliance = type == TaskType::kClean ? "sinkbasin" : type == TaskType::kHeat ? "microwave"
                          : type == TaskType::kCool ? "fridge" : nullptr;
  const int need_prop = type == TaskType::kClean ? C : type == TaskType::kHeat ? H : type == TaskType::kCool ? K : 0;
  if (appliance && !has_recep(appliance)) return out;
  for (const auto& [obj, n] : count) {
    const ObjDef* od = def[obj];
    if ((od->props & need_prop) != need_prop || (type == TaskType::kPickTwo && n < 2)) continue;
    std::vector<std::string> seen_types;
    for (const auto& r : d.receps) {
      const std::string& rt = r.first;
      if (std::find(seen_types.begin(), seen_types.end(), rt) != seen_types.end()) continue;
      seen_types.push_back(rt);
      if (!can_hold(*od, rt) || (appliance && rt == appliance)) continue;
      if (held_out_combination(obj, rt) != unseen) continue;
      // The goal must not hold initially: no object of the type already in
      // a receptacle of the target type.
      bool already = false;
      for (const auto& o : d.objects)
        if (o.first == obj && d.receps[o.second].first == rt) already = true;
      if (!already) out.push_back({type, obj, rt});
    }
  }
  return out;
}

// Names ("cabinet 3") and ALFWorld's listing order: types alphabetically,
// numbers descending within a type (ALFWorld numbers sorted ids from n down).
template <class T>
std::vector<size_t> name_and_order(std::vector<T>& items, const std::vector<std::string>& types) {
  std::map<std::string, int> n;
  std::vector<int> num(items.size());
  for (size_t i = 0; i < items.size(); ++i) num[i] = ++n[types[i]];
  for (size_t i = 0; i < items.size(); ++i) items[i].name = types[i] + " " + std::to_string(num[i]);
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (types[a] != types[b]) return types[a] < types[b];
    return num[a] > num[b];
  });
  return order;
}

std::shared_ptr<Game> build(const RoomDef& room, const Draft& d, const Goal& goal, int variant,
                            const SceneOptions& opt, const std::string& id) {
  auto g = std::make_shared<Game>();
  g->id = id;
  std::map<std::string, int> tidx;
  auto type = [&](const std::string& t) {
    auto it = tidx.find(t);
    if (it != tidx.end()) return it->second;
    int k = static_cast<int>(g->type_names.size());
    g->type_names.push_back(t);
    tidx.emplace(t, k);
    return k;
  };
  std::vector<Receptacle> rs(d.receps.size());
  std::vector<std::string> rtypes;
  for (size_t i = 0; i < rs.size(); ++i) {
    rs[i].type = type(d.receps[i].first);
    rs[i].openable = d.receps[i].second;
    rs[i].id = d.receps[i].first + "_" + std::to_string(i);
    rtypes.push_back(d.receps[i].first);
  }
  std::vector<Object> os(d.objects.size());
  std::vector<std::string> otypes;
  for (size_t i = 0; i < os.size(); ++i) {
    Object& o = os[i];
    o.type = type(d.objects[i].first);
    o.id = d.objects[i].first + "_" + std::to_string(i);
    otypes.push_back(d.objects[i].first);
    if (d.obj_def[i] < 0) {
      o.toggleable = true;
      continue;
    }
    const int p = room.objects[d.obj_def[i]].props;
    o.pickupable = true;
    o.cleanable = p & C;
    o.heatable = p & H;
    o.coolable = p & K;
    o.sliceable = p & S;
    o.receptacle_object = p & RO;
  }
  auto rorder = name_and_order(rs, rtypes);
  auto oorder = name_and_order(os, otypes);
  std::vector<int> rpos(rs.size());
  for (size_t k = 0; k < rorder.size(); ++k) {
    rpos[rorder[k]] = static_cast<int>(k);
    g->receptacles.push_back(rs[rorder[k]]);
  }
  for (size_t k = 0; k < g->receptacles.size(); ++k) {
    g->receptacles[k].location = static_cast<int>(k);
    g->location_names.push_back("loc " + std::to_string(k + 1));
  }
  g->location_names.push_back("loc " + std::to_string(g->receptacles.size() + 1));  // the start
  State& s = g->initial;
  for (size_t k = 0; k < oorder.size(); ++k) g->objects.push_back(os[oorder[k]]);
  s.init(g->objects.size(), g->receptacles.size());
  for (size_t k = 0; k < oorder.size(); ++k) {
    int r = rpos[d.objects[oorder[k]].second];
    s.set_in(static_cast<int>(k), r, true);
    s.object_location[k] = g->receptacles[r].location;
  }
  s.agent_location = static_cast<int>(g->location_names.size()) - 1;
  const size_t nt = g->type_names.size();
  g->can_contain.assign(nt * nt, 0);
  for (const auto& od : room.objects) {
    auto ot = tidx.find(od.type);
    if (ot == tidx.end()) continue;
    for (const char* r : od.receptacles) {
      auto rt = tidx.find(r);
      if (rt != tidx.end()) g->can_contain[rt->second * nt + ot->second] = 1;
    }
  }
  g->task.type = goal.type;
  g->task.object_type = tidx.at(goal.obj);
  if (goal.type == TaskType::kLook) g->task.lamp_type = tidx.at("desklamp");
  else g->task.recep_type = tidx.at(goal.recep);
  g->task_description = task_description(goal.type, variant, goal.obj, goal.recep, goal.recep);
  if (opt.grammar == "2.1.1") {
    g->text.goto_feedback = "You arrive at {l}. ";
    g->text.put_command = "put {o} in/on {r}";
    g->text.put_feedback = "You put the {o} in/on the {r}.";
  } else {
    g->text.help = twl2_help_text();
  }
  return g;
}

// A room type for a task of type `type`, by the rooms' task weights.
const RoomDef* weighted_room(const std::vector<const RoomDef*>& able, TaskType type, Rng& rng) {
  std::vector<double> w;
  for (const RoomDef* r : able) w.push_back(r->task_weight[static_cast<size_t>(type)]);
  return able[draw_weighted(w, rng)];
}

}  // namespace

bool held_out_combination(const std::string& object_type, const std::string& recep_type) {
  return hash_str(object_type + "|" + recep_type) % 4 == 0;
}

std::shared_ptr<const Game> generate_game(const std::string& split, int64_t index, uint64_t seed,
                                          const SceneOptions& opt) {
  if (split != "train" && split != "valid_seen" && split != "valid_unseen")
    throw ConfigError("alfworld: unknown split '" + split + "' for built-in scenes (expected train, valid_seen or valid_unseen)");
  const bool unseen = split == "valid_unseen";
  std::vector<const RoomDef*> allowed;
  const bool fitted = opt.tables == "alfworld";
  if (!fitted && opt.tables != "agentrl")
    throw ConfigError("alfworld.scene_tables: unknown value '" + opt.tables + "' (expected agentrl or alfworld)");
  for (const auto& r : fitted ? alfworld_rooms() : agentrl_rooms())
    if (opt.room_types.empty() || std::find(opt.room_types.begin(), opt.room_types.end(), r.name) != opt.room_types.end())
      allowed.push_back(&r);
  if (allowed.empty()) throw ConfigError("alfworld.room_types: no known room type selected");
  std::vector<TaskType> types = opt.task_types;
  if (types.empty())
    for (int t = 0; t < kNumTaskTypes; ++t) types.push_back(static_cast<TaskType>(t));
  // Task types drawn with the frequencies of ALFWorld's train split (790
  // pick, 308 look, 650 clean, 459 heat, 533 cool, 813 pick2 of 3553), then
  // a room type that can host the task.
  static const double kWeight[kNumTaskTypes] = {790, 308, 650, 459, 533, 813};
  auto hosts = [](const RoomDef& r, TaskType t) {
    const std::string n = r.name;
    if (t == TaskType::kHeat || t == TaskType::kCool) return n == "kitchen";
    if (t == TaskType::kClean) return n == "kitchen" || n == "bathroom";
    if (t == TaskType::kLook) return r.lamps;
    return true;
  };
  Rng rng(mix_seed(mix_seed(seed, hash_str(split)), static_cast<uint64_t>(index)));
  std::vector<double> type_weight;
  for (TaskType t : types) type_weight.push_back(kWeight[static_cast<int>(t)]);
  auto draw_type = [&] { return types[draw_weighted(type_weight, rng)]; };
  TaskType type = types.front();
  for (int attempt = 0; attempt < 200; ++attempt) {
    // Keep the drawn type for several scene draws before drawing another,
    // so types that are rarer to place (held-out look goals) keep their share.
    if (attempt % 25 == 0) type = draw_type();
    std::vector<const RoomDef*> able;
    for (const RoomDef* r : allowed)
      if (hosts(*r, type)) able.push_back(r);
    if (able.empty()) continue;
    const RoomDef& room = fitted ? *weighted_room(able, type, rng)
                                 : *able[rng.uniform_int(0, static_cast<int64_t>(able.size()) - 1)];
    int layout = unseen ? kSeenLayouts + static_cast<int>(rng.uniform_int(0, kUnseenLayouts - 1))
                        : static_cast<int>(rng.uniform_int(0, kSeenLayouts - 1));
    Draft d = draw_layout(room, seed, layout, opt.max_receptacles);
    place_objects(room, d, rng);
    auto goals = candidate_goals(room, d, type, unseen);
    if (goals.empty()) continue;
    const Goal& goal = goals[rng.uniform_int(0, static_cast<int64_t>(goals.size()) - 1)];
    int variant = static_cast<int>(rng.uniform_int(0, 1));
    return build(room, d, goal, variant, opt,
                 "builtin/" + split + "/" + std::to_string(index) + "/" + room.name + "-" + std::to_string(layout));
  }
  throw ConfigError("alfworld: the scene options (room_types, task_types, max_receptacles) allow no solvable task");
}

}  // namespace agentrl::envs::alfworld
