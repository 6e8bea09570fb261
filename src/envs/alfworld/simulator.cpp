// ALFWorld simulator. Preconditions and effects follow alfred.pddl (ALFWorld
// 0.5.0); feedback strings follow the grammar (alfred.twl2 and the 2.1.1
// grammar inside json_2.1.1 game files, which agree on every string except
// the ones held in GameText).
#include "agentrl/envs/alfworld/simulator.h"
#include "agentrl/core/strings.h"

#include <algorithm>
#include <numeric>

namespace agentrl::envs::alfworld {
namespace {

using strings::trim;

// Substitutes {o}, {r}, {l} in a GameText template.
std::string fill(const std::string& tmpl, const std::string& o, const std::string& r, const std::string& l) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}') {
      char c = tmpl[i + 1];
      if (c == 'o' || c == 'r' || c == 'l') {
        out += c == 'o' ? o : c == 'r' ? r : l;
        i += 2;
        continue;
      }
    }
    out += tmpl[i];
  }
  return out;
}

}  // namespace

std::string join_list(const std::vector<std::string>& items) {
  // TextWorld's list rule with ALFWorld's list_separator ", " and
  // list_last_separator ", and " (alfred.twl2, look grammar).
  if (items.empty()) return "nothing";
  std::string out = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    out += (i + 1 == items.size()) ? ", and " : ", ";
    out += items[i];
  }
  return out;
}

Simulator::Simulator(std::shared_ptr<const Game> game) : game_(std::move(game)) {
  sink_type_ = game_->find_type("sinkbasin");
  microwave_type_ = game_->find_type("microwave");
  fridge_type_ = game_->find_type("fridge");
  knife_type_ = game_->find_type("knife");
  butterknife_type_ = game_->find_type("butterknife");
  state_ = game_->initial;
  const int nr = static_cast<int>(game_->receptacles.size());
  goto_cmd_.resize(nr);
  goto_order_.resize(nr);
  for (int r = 0; r < nr; ++r) {
    goto_cmd_[r] = "go to " + game_->receptacles[r].name;
    goto_order_[r] = r;
  }
  std::sort(goto_order_.begin(), goto_order_.end(), [&](int a, int b) { return goto_cmd_[a] < goto_cmd_[b]; });
  update_here();
}

void Simulator::update_here() {
  here_.clear();
  for (int r = 0; r < static_cast<int>(game_->receptacles.size()); ++r)
    if (game_->receptacles[r].location == state_.agent_location) here_.push_back(r);
}

std::string Simulator::reset() {
  state_ = game_->initial;
  update_here();
  seen_.assign(game_->receptacles.size(), 0);
  mark_seen();
  admissible_valid_ = false;
  return "-= Welcome to TextWorld, ALFRED! =-\n\n" + look_text() + "\n\nYour task is to: " + game_->task_description;
}

bool Simulator::receptacle_visible(int r) const {
  const Receptacle& rc = game_->receptacles[r];
  return rc.location == state_.agent_location && (!rc.openable || state_.opened[r]);
}

std::string Simulator::list_contents(int r) const {
  std::vector<std::string> items;
  for (size_t o = 0; o < game_->objects.size(); ++o)
    if (state_.in(static_cast<int>(o), r)) items.push_back("a " + game_->objects[o].name);
  return join_list(items);
}

std::string Simulator::examine_receptacle(int r) const {
  const Receptacle& rc = game_->receptacles[r];
  if (rc.openable && state_.opened[r]) return "The " + rc.name + " is open. In it, you see " + list_contents(r) + ".";
  if (rc.openable) return "The " + rc.name + " is closed.";
  return "On the " + rc.name + ", you see " + list_contents(r) + ".";
}

std::string Simulator::examine_object(int o) const {
  // examineObject.feedback: the first rule whose condition holds.
  const Object& ob = game_->objects[o];
  const uint8_t f = state_.flags[o];
  const bool clean = f & kClean, hot = f & kHot, cool = f & kCool, sliced = f & kSliced;
  const std::string& n = ob.name;
  // inReceptacleObject never holds: ALFWorld's filtered games have no
  // movable receptacles and the domain has no action that creates it.
  if (ob.receptacle_object) return "This is a normal " + n + ". In it, you see nothing.";
  if (clean && hot && sliced) return "This is a hot and clean sliced " + n + ".";
  if (clean && cool && sliced) return "This is a cool and clean sliced " + n + ".";
  if (clean && sliced) return "This is a clean sliced " + n + ".";
  if (hot && sliced) return "This is a hot sliced " + n + ".";
  if (cool && sliced) return "This is a cool sliced " + n + ".";
  if (clean && hot) return "This is a hot and clean " + n + ".";
  if (clean && cool) return "This is a cool and clean " + n + ".";
  if (hot) return "This is a hot " + n + ".";
  if (clean) return "This is a clean " + n + ".";
  if (cool) return "This is a cold " + n + ".";
  if (ob.toggleable && (f & kToggled)) return "This " + n + " is on.";
  if (ob.toggleable) return "This " + n + " is off.";
  if (ob.sliceable && sliced) return "This is a sliced " + n + ".";
  return "There's nothing special about " + n + ".";
}

std::string Simulator::look_text() const {
  const Game& g = *game_;
  std::vector<std::string> here;
  for (size_t r = 0; r < g.receptacles.size(); ++r)
    if (g.receptacles[r].location == state_.agent_location) here.push_back(g.receptacles[r].name);
  if (here.empty()) {
    std::vector<std::string> all;
    all.reserve(g.receptacles.size());
    for (const auto& rc : g.receptacles) all.push_back("a " + rc.name);
    return "You are in the middle of a room. Looking quickly around you, you see " + join_list(all) + ".";
  }
  // list_objects_on_the_floor: objects at this location that are not in (some)
  // receptacle of this location, each listed once.
  std::vector<std::string> floor;
  for (size_t o = 0; o < g.objects.size(); ++o) {
    if (state_.object_location[o] != state_.agent_location) continue;
    bool outside_some = false;
    for (size_t r = 0; r < g.receptacles.size(); ++r)
      if (g.receptacles[r].location == state_.agent_location && !state_.in(static_cast<int>(o), static_cast<int>(r)))
        outside_some = true;
    if (outside_some) floor.push_back("a " + g.objects[o].name);
  }
  return "You are facing the " + join_list(here) + ". Next to it, you see " + join_list(floor) + ".";
}

std::string Simulator::command_text(const Action& a) const {
  const Game& g = *game_;
  auto on = [&](int o) -> const std::string& { return g.objects[o].name; };
  auto rn = [&](int r) -> const std::string& { return g.receptacles[r].name; };
  switch (a.kind) {
    case Kind::kLook: return "look";
    case Kind::kInventory: return "inventory";
    case Kind::kHelp: return "help";
    case Kind::kExamineR: return "examine " + rn(a.r);
    case Kind::kExamineO: return "examine " + on(a.o);
    case Kind::kGoto: return goto_cmd_[a.r];
    case Kind::kOpen: return "open " + rn(a.r);
    case Kind::kClose: return "close " + rn(a.r);
    case Kind::kTake: return "take " + on(a.o) + " from " + rn(a.r);
    case Kind::kPut: return fill(g.text.put_command, on(a.o), rn(a.r), "");
    case Kind::kClean: return "clean " + on(a.o) + " with " + rn(a.r);
    case Kind::kHeat: return "heat " + on(a.o) + " with " + rn(a.r);
    case Kind::kCool: return "cool " + on(a.o) + " with " + rn(a.r);
    case Kind::kToggle: return "use " + on(a.o);
    case Kind::kSlice: return "slice " + on(a.o) + " with " + on(a.r);
  }
  return "";
}

void Simulator::compute_admissible() const {
  // The "go to" commands (most of the list) come pre-sorted from the
  // constructor; only the few commands of the current location are built
  // and sorted here, then merged. Strings are assigned into the previous
  // buffers so a step allocates (almost) nothing.
  const Game& g = *game_;
  const State& s = state_;
  local_.clear();
  auto add = [&](Kind k, int o, int r) { local_.push_back({command_text({k, o, r}), {k, o, r}}); };
  add(Kind::kLook, -1, -1);
  add(Kind::kInventory, -1, -1);
  if (!g.text.help.empty()) add(Kind::kHelp, -1, -1);
  const int no = static_cast<int>(g.objects.size());
  for (int r : here_) {
    const Receptacle& rc = g.receptacles[r];
    add(Kind::kExamineR, -1, r);
    if (rc.openable) add(s.opened[r] ? Kind::kClose : Kind::kOpen, -1, r);
    const bool visible = !rc.openable || s.opened[r];
    for (int o = 0; o < no; ++o) {
      if (!s.in(o, r)) continue;
      if (visible) add(Kind::kExamineO, o, -1);
      if (visible && s.held < 0 && g.objects[o].pickupable) add(Kind::kTake, o, r);
      if (g.objects[o].toggleable) add(Kind::kToggle, o, r);
    }
    if (s.held >= 0) {
      const Object& h = g.objects[s.held];
      if (visible && g.contains(rc.type, h.type)) add(Kind::kPut, s.held, r);
      if (rc.type == sink_type_ && h.cleanable) add(Kind::kClean, s.held, r);
      if (rc.type == microwave_type_ && h.heatable) add(Kind::kHeat, s.held, r);
      if (rc.type == fridge_type_ && h.coolable) add(Kind::kCool, s.held, r);
    }
  }
  if (s.held >= 0) {
    add(Kind::kExamineO, s.held, -1);
    const int ht = g.objects[s.held].type;
    if (ht >= 0 && (ht == knife_type_ || ht == butterknife_type_)) {
      for (int o = 0; o < no; ++o)
        if (o != s.held && g.objects[o].sliceable && s.object_location[o] == s.agent_location)
          add(Kind::kSlice, o, s.held);
    }
  }
  std::sort(local_.begin(), local_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t k = 0;
  admissible_actions_.clear();
  auto emit = [&](const std::string& text, const Action& a) {
    if (k > 0 && admissible_[k - 1] == text) return;  // de-duplicate
    if (k < admissible_.size()) admissible_[k].assign(text);
    else admissible_.push_back(text);
    admissible_actions_.push_back(a);
    ++k;
  };
  size_t li = 0;
  for (int r : goto_order_) {
    if (g.receptacles[r].location == s.agent_location) continue;  // GotoLocation binds lStart != lEnd
    const std::string& go = goto_cmd_[r];
    while (li < local_.size() && local_[li].first < go) {
      emit(local_[li].first, local_[li].second);
      ++li;
    }
    emit(go, {Kind::kGoto, -1, r});
  }
  for (; li < local_.size(); ++li) emit(local_[li].first, local_[li].second);
  admissible_.resize(k);
  admissible_valid_ = true;
}

const std::vector<std::string>& Simulator::admissible() const {
  if (!admissible_valid_) compute_admissible();
  return admissible_;
}

std::string Simulator::step(const std::string& command, bool* valid) {
  const std::string cmd = trim(command);
  const auto& adm = admissible();
  auto it = std::lower_bound(adm.begin(), adm.end(), cmd);
  if (it == adm.end() || *it != cmd) {
    if (valid) *valid = false;
    return "Nothing happens.";
  }
  if (valid) *valid = true;
  Action a = admissible_actions_[static_cast<size_t>(it - adm.begin())];
  std::string out = apply(a);
  mark_seen();
  admissible_valid_ = false;
  return out;
}

void Simulator::mark_seen() {
  if (seen_.size() != game_->receptacles.size()) seen_.assign(game_->receptacles.size(), 0);
  for (int r : here_)
    if (receptacle_visible(r)) seen_[static_cast<size_t>(r)] = 1;
}

std::string Simulator::apply(const Action& a) {
  const Game& g = *game_;
  State& s = state_;
  switch (a.kind) {
    case Kind::kLook: return look_text();
    case Kind::kInventory:
      if (s.held < 0) return "You are not carrying anything.";
      return "You are carrying: a " + g.objects[s.held].name + ".";
    case Kind::kHelp: return g.text.help;
    case Kind::kExamineR: return examine_receptacle(a.r);
    case Kind::kExamineO: return examine_object(a.o);
    case Kind::kGoto: {
      const Receptacle& rc = g.receptacles[a.r];
      s.agent_location = rc.location;
      update_here();
      return fill(g.text.goto_feedback, "", rc.name, g.location_names[rc.location]) + examine_receptacle(a.r);
    }
    case Kind::kOpen:
      s.opened[a.r] = 1;
      return "You open the " + g.receptacles[a.r].name + ". " + examine_receptacle(a.r);
    case Kind::kClose: s.opened[a.r] = 0; return "You close the " + g.receptacles[a.r].name + ".";
    case Kind::kTake:
      // PickupObject: not inReceptacle(o, r) for this r only.
      s.set_in(a.o, a.r, false);
      s.object_location[a.o] = -1;
      s.held = a.o;
      return "You pick up the " + g.objects[a.o].name + " from the " + g.receptacles[a.r].name + ".";
    case Kind::kPut:
      s.set_in(a.o, a.r, true);
      s.object_location[a.o] = s.agent_location;
      s.held = -1;
      return fill(g.text.put_feedback, g.objects[a.o].name, g.receptacles[a.r].name, "");
    case Kind::kClean:
      s.flags[a.o] |= kClean;
      return "You clean the " + g.objects[a.o].name + " using the " + g.receptacles[a.r].name + ".";
    case Kind::kHeat:
      s.flags[a.o] = static_cast<uint8_t>((s.flags[a.o] | kHot) & ~kCool);
      return "You heat the " + g.objects[a.o].name + " using the " + g.receptacles[a.r].name + ".";
    case Kind::kCool:
      s.flags[a.o] = static_cast<uint8_t>((s.flags[a.o] | kCool) & ~kHot);
      return "You cool the " + g.objects[a.o].name + " using the " + g.receptacles[a.r].name + ".";
    case Kind::kToggle:
      // ToggleObject flips isOn and always sets isToggled, so the feedback
      // rule "toggleable & istoggled" always fires: "You turn on the ...".
      s.flags[a.o] = static_cast<uint8_t>((s.flags[a.o] ^ kOn) | kToggled);
      return "You turn on the " + g.objects[a.o].name + ".";
    case Kind::kSlice:
      s.flags[a.o] |= kSliced;
      return "You sliced the " + g.objects[a.o].name + " with the " + g.objects[a.r].name + ".";
  }
  return "Nothing happens.";
}

bool Simulator::object_done(int o, int r) const {
  const Game& g = *game_;
  const TaskSpec& t = g.task;
  if (g.objects[o].type != t.object_type || !state_.in(o, r)) return false;
  if (g.receptacles[r].type != t.recep_type) return false;
  const uint8_t f = state_.flags[o];
  switch (t.type) {
    case TaskType::kClean: return g.objects[o].cleanable && (f & kClean);
    case TaskType::kHeat: return g.objects[o].heatable && (f & kHot);
    case TaskType::kCool: return g.objects[o].coolable && (f & kCool);
    default: return true;
  }
}

bool Simulator::goal_satisfied() const {
  const Game& g = *game_;
  const TaskSpec& t = g.task;
  const int no = static_cast<int>(g.objects.size());
  if (t.type == TaskType::kLook) {
    // Goal of look_at_obj_in_light: a toggled lamp of the type in a
    // receptacle at the agent's location, and the agent holds the object.
    if (state_.held < 0 || g.objects[state_.held].type != t.object_type) return false;
    for (int o = 0; o < no; ++o) {
      const Object& ob = g.objects[o];
      if (ob.type != t.lamp_type || !ob.toggleable || !(state_.flags[o] & kToggled)) continue;
      for (int r = 0; r < static_cast<int>(g.receptacles.size()); ++r)
        if (state_.in(o, r) && g.receptacles[r].location == state_.agent_location) return true;
    }
    return false;
  }
  const int need = t.type == TaskType::kPickTwo ? 2 : 1;
  for (int r = 0; r < static_cast<int>(g.receptacles.size()); ++r) {
    if (g.receptacles[r].type != t.recep_type) continue;
    int n = 0;
    for (int o = 0; o < no; ++o)
      if (object_done(o, r)) ++n;
    if (n >= need) return true;
  }
  return false;
}

}  // namespace agentrl::envs::alfworld
