// The ALFWorld expert: a hand-coded plan per task type, replanned from the
// current state at every call (so it also recovers after other actions).
// It knows the whole state (where every object is), like ALFWorld's
// handcoded expert knows the PDDL facts. Plans:
//   pick/clean/heat/cool: go to the object's receptacle, open it if closed,
//     take it; (clean/heat/cool with the first sinkbasin/microwave/fridge);
//     go to the target receptacle, open it if closed, put it.
//   pick2: the same twice into one receptacle (one that already holds a
//     finished object if there is one).
//   look: take the object, go to the lamp's receptacle, use the lamp.
// Each object costs at most 3 + 2 + 3 steps, well within ALFWorld's 50.
// The searching variants (simulator.h) plan the same way over what the agent
// has seen and search for the rest: in "go to" order (search), or likely
// receptacle types first, by the real games' placements (prior).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "agentrl/envs/alfworld/simulator.h"
#include "scene_tables.h"

namespace agentrl::envs::alfworld {
namespace {

// "cabinet 12" -> 12 (names end in the instance number).
int instance_number(const std::string& name) {
  const size_t sp = name.rfind(' ');
  return sp == std::string::npos ? 0 : std::atoi(name.c_str() + sp + 1);
}

}  // namespace

int Simulator::target_receptacle() const {
  const Game& g = *game_;
  int best = -1, best_n = -1;
  for (int r = 0; r < static_cast<int>(g.receptacles.size()); ++r) {
    if (g.receptacles[r].type != g.task.recep_type) continue;
    int n = 0;
    for (int o = 0; o < static_cast<int>(g.objects.size()); ++o)
      if (object_done(o, r)) ++n;
    // The prior expert breaks ties by the lowest number (the first of the
    // type in the admissible list); the others by listing order.
    if (n > best_n || (prior_ && n == best_n &&
                       instance_number(g.receptacles[r].name) < instance_number(g.receptacles[best].name))) {
      best = r;
      best_n = n;
    }
  }
  return best;
}

int Simulator::appliance_for_task() const {
  int type = -1;
  switch (game_->task.type) {
    case TaskType::kClean: type = sink_type_; break;
    case TaskType::kHeat: type = microwave_type_; break;
    case TaskType::kCool: type = fridge_type_; break;
    default: return -1;
  }
  for (int r = 0; r < static_cast<int>(game_->receptacles.size()); ++r)
    if (game_->receptacles[r].type == type) return r;
  return -1;
}

std::optional<std::string> Simulator::expert_action() const {
  if (goal_satisfied()) return std::nullopt;
  const Game& g = *game_;
  const State& s = state_;
  const TaskSpec& t = g.task;
  auto at = [&](int r) { return g.receptacles[r].location == s.agent_location; };
  // A receptacle holding o, one at the agent's location if possible (an
  // object can be in two receptacles, see State).
  auto where = [&](int o) {
    int first = -1;
    for (int r = 0; r < static_cast<int>(g.receptacles.size()); ++r) {
      if (!s.in(o, r)) continue;
      if (at(r)) return r;
      if (first < 0) first = r;
    }
    return first;
  };
  auto go_or = [&](int r, const std::string& then) -> std::string {
    if (!at(r)) return "go to " + g.receptacles[r].name;
    if (g.receptacles[r].openable && !s.opened[r]) return "open " + g.receptacles[r].name;
    return then;
  };

  if (s.held >= 0) {
    const Object& h = g.objects[s.held];
    if (h.type != t.object_type) return std::nullopt;  // the expert never picks a wrong object
    if (t.type == TaskType::kLook) {
      for (int o = 0; o < static_cast<int>(g.objects.size()); ++o) {
        if (g.objects[o].type != t.lamp_type || !g.objects[o].toggleable) continue;
        int r = where(o);
        if (r < 0 || (prior_ && !seen_[static_cast<size_t>(r)])) continue;
        if (!at(r)) return "go to " + g.receptacles[r].name;
        return "use " + g.objects[o].name;
      }
      return prior_ ? search_step(t.lamp_type) : std::nullopt;
    }
    const uint8_t need = t.type == TaskType::kClean ? kClean : t.type == TaskType::kHeat ? kHot
                         : t.type == TaskType::kCool ? kCool : 0;
    if (need != 0 && !(s.flags[s.held] & need)) {
      int ap = appliance_for_task();
      if (ap < 0) return std::nullopt;
      if (!at(ap)) return "go to " + g.receptacles[ap].name;
      const char* verb = need == kClean ? "clean " : need == kHot ? "heat " : "cool ";
      return verb + h.name + " with " + g.receptacles[ap].name;
    }
    int r = target_receptacle();
    if (r < 0) return std::nullopt;
    std::string put = g.text.put_command;
    // GameText placeholders: {o} object, {r} receptacle.
    std::string out;
    for (size_t i = 0; i < put.size(); ++i) {
      if (put.compare(i, 3, "{o}") == 0) { out += h.name; i += 2; }
      else if (put.compare(i, 3, "{r}") == 0) { out += g.receptacles[r].name; i += 2; }
      else out += put[i];
    }
    return go_or(r, out);
  }

  // Hands empty: fetch an object of the type that is not already finished
  // in the target receptacle; prefer one at the current location. The
  // searching expert only knows objects in receptacles it has seen.
  const int target = t.type == TaskType::kLook ? -1 : target_receptacle();
  int pick = -1;
  for (int o = 0; o < static_cast<int>(g.objects.size()); ++o) {
    const Object& ob = g.objects[o];
    int r = where(o);
    if (ob.type != t.object_type || !ob.pickupable || r < 0) continue;
    if (searching_ && !seen_[static_cast<size_t>(r)]) continue;
    if (target >= 0 && object_done(o, target)) continue;
    if (pick < 0 || (at(r) && !at(where(pick)))) pick = o;
  }
  if (pick < 0) return searching_ ? search_step(t.object_type) : std::nullopt;
  int r = where(pick);
  return go_or(r, "take " + g.objects[pick].name + " from " + g.receptacles[r].name);
}

std::vector<int> Simulator::prior_order(int wanted) const {
  // Receptacle types by how often real games put the wanted type there
  // (unlikely types last, alphabetically), instances by ascending number.
  const Game& g = *game_;
  const std::string want = wanted >= 0 ? g.type_names[static_cast<size_t>(wanted)] : "";
  std::vector<double> w(g.receptacles.size());
  for (size_t r = 0; r < w.size(); ++r) w[r] = placement_weight(want, g.type_names[g.receptacles[r].type]);
  std::vector<int> order(goto_order_);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (w[a] != w[b]) return w[a] > w[b];
    const int ta = g.receptacles[a].type, tb = g.receptacles[b].type;
    if (ta != tb) return g.type_names[ta] < g.type_names[tb];
    return instance_number(g.receptacles[a].name) < instance_number(g.receptacles[b].name);
  });
  return order;
}

std::optional<std::string> Simulator::search_step(int wanted) const {
  // Open a closed receptacle here first, else go to the first receptacle
  // (in "go to" command order, or the prior's) whose contents have not
  // been seen.
  const Game& g = *game_;
  for (int r : here_)
    if (g.receptacles[r].openable && !state_.opened[r]) return "open " + g.receptacles[r].name;
  for (int r : prior_ ? prior_order(wanted) : goto_order_)
    if (!seen_[static_cast<size_t>(r)]) return "go to " + g.receptacles[r].name;
  return std::nullopt;
}

}  // namespace agentrl::envs::alfworld
