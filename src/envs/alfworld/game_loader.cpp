// Real ALFWorld games: game.tw-pddl / initial_state.pddl parsing, ALFWorld's
// naming rule, the goal shapes of the six task types (directory loading:
// game_dir.cpp).
#include "agentrl/envs/alfworld/game_loader.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "pddl_parser.h"

namespace agentrl::envs::alfworld {
namespace {

std::string lower(std::string s) { return strings::lower_ascii(std::move(s)); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open ALFWorld file " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "AppleType" -> "apple".
std::string type_name(const std::string& t) {
  std::string s = t;
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "Type") == 0) s.resize(s.size() - 4);
  return lower(s);
}

// ALFWorld's naming rule (see game_loader.h): ids lowercased (TextWorld's
// PDDL reader is case-insensitive), name = prefix before "_bar_" plus
// "basin" if the id contains "basin", numbered per name from n down to 1
// over the ids in sorted order. Ids without "_bar_" get no number.
std::unordered_map<std::string, std::string> demangle(const std::vector<std::string>& ids) {
  std::vector<std::string> sorted;
  sorted.reserve(ids.size());
  for (const auto& id : ids) sorted.push_back(lower(id));
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  auto base = [](const std::string& id) {
    size_t p = id.find("_bar_");
    if (p == std::string::npos) return std::string();
    std::string name = id.substr(0, p);
    if (id.find("basin") != std::string::npos) name += "basin";
    return name;
  };
  std::map<std::string, int> count;
  for (const auto& id : sorted) {
    std::string b = base(id);
    if (!b.empty()) ++count[b];
  }
  std::unordered_map<std::string, std::string> names;
  for (const auto& id : sorted) {
    std::string b = base(id);
    names[id] = b.empty() ? id : b + " " + std::to_string(count[b]--);
  }
  return names;
}

// Reads the JSON string literal starting at text[pos] == '"'.
std::string json_string_at(const std::string& text, size_t pos, const std::string& file) {
  size_t end = pos + 1;
  while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
  if (end >= text.size()) throw FormatError(file + ": unterminated string in grammar");
  try {
    return nlohmann::json::parse(text.substr(pos, end - pos + 1)).get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(file + ": bad string in grammar: " + e.what());
  }
}

// The first "rhs" of grammar rule `key` ("GotoLocation.feedback", ...).
std::string grammar_rhs(const std::string& grammar, const std::string& key, const std::string& file) {
  size_t k = grammar.find("\"" + key + "\"");
  if (k == std::string::npos) throw FormatError(file + ": grammar has no rule \"" + key + "\"");
  size_t r = grammar.find("\"rhs\"", k);
  if (r == std::string::npos) throw FormatError(file + ": grammar rule \"" + key + "\" has no rhs");
  size_t q = grammar.find('"', grammar.find(':', r + 5));
  return json_string_at(grammar, q, file);
}

std::string action_template(const std::string& grammar, const std::string& action, const std::string& file) {
  size_t a = grammar.find("action " + action + " {");
  if (a == std::string::npos) throw FormatError(file + ": grammar has no action " + action);
  size_t t = grammar.find("template :: \"", a);
  if (t == std::string::npos) throw FormatError(file + ": grammar action " + action + " has no template");
  size_t b = t + 13, e = grammar.find('"', b);
  return grammar.substr(b, e - b);
}

using strings::replace_all;

// GameText from the grammar; rejects grammars of unknown shape rather than
// printing text ALFWorld would not print.
GameText read_text(const std::string& grammar, const std::string& file) {
  GameText t;
  std::string go = grammar_rhs(grammar, "GotoLocation.feedback", file);
  const std::string tail = "#examineReceptacle.feedback#";
  if (go.size() < tail.size() || go.compare(go.size() - tail.size(), tail.size(), tail) != 0)
    throw FormatError(file + ": unsupported GotoLocation.feedback in grammar: '" + go + "'");
  go.resize(go.size() - tail.size());
  t.goto_feedback = replace_all(replace_all(go, "{lend.name}", "{l}"), "{r.name}", "{r}");
  t.put_feedback =
      replace_all(replace_all(grammar_rhs(grammar, "PutObject.feedback", file), "{o.name}", "{o}"), "{r.name}", "{r}");
  t.put_command = action_template(grammar, "PutObject", file);
  if (t.put_command.find("{o}") == std::string::npos || t.put_command.find("{r}") == std::string::npos)
    throw FormatError(file + ": unsupported PutObject template '" + t.put_command + "'");
  // json_2.1.1 games have neither a help action in their domain nor a
  // help rule in their grammar; alfred.twl2 has both.
  if (grammar.find("\"help.feedback\"") != std::string::npos) t.help = grammar_rhs(grammar, "help.feedback", file);
  return t;
}

const SExpr* find_section(const SExpr& problem, const std::string& key) {
  for (const auto& it : problem.items)
    if (it.is_list() && !it.items.empty() && lower(it.items[0].atom) == key) return &it;
  return nullptr;
}

// Goal shapes of ALFWorld's six task types (alfworld/gen/goal_library.py):
// objectType facts name the object (and lamp) types, receptacleType the
// target type; isClean/isHot/isCool/isToggled select the type; two distinct
// object variables with the same type make pick_two_obj_and_place.
struct GoalScan {
  std::map<std::string, std::string> var_type;  // ?o -> AppleType
  std::string recep_type;
  std::set<std::string> preds;
  std::set<std::string> toggle_vars;
};

void scan_goal(const SExpr& e, GoalScan& g) {
  if (!e.is_list() || e.items.empty()) return;
  const std::string head = lower(e.items[0].atom);
  if (head == "objecttype" && e.items.size() == 3) g.var_type[e.items[1].atom] = e.items[2].atom;
  if (head == "receptacletype" && e.items.size() == 3) g.recep_type = e.items[2].atom;
  if (head == "toggleable" && e.items.size() == 2) g.toggle_vars.insert(e.items[1].atom);
  if (!head.empty()) g.preds.insert(head);
  for (const auto& it : e.items) scan_goal(it, g);
}

struct Ids {
  const std::unordered_map<std::string, int>& objects;
  const std::unordered_map<std::string, int>& receptacles;
  const std::unordered_map<std::string, int>& locations;
};

// Applies the :init facts that the actions read or change (the scene's
// entities and types exist already).
void apply_facts(Game& g, const SExpr& init, const Ids& ids, const std::map<std::string, int>& types,
                 const std::string& where) {
  auto err = [&](int line, const std::string& what) {
    return FormatError(where + ": line " + std::to_string(line) + ": " + what);
  };
  const size_t nt = g.type_names.size();
  State& s = g.initial;
  const auto& oidx = ids.objects;
  const auto& ridx = ids.receptacles;
  const auto& lidx = ids.locations;
  auto obj = [&](const SExpr& f, size_t k) {
    auto it = oidx.find(lower(f.items.at(k).atom));
    if (it == oidx.end()) throw err(f.line, "unknown object '" + f.items[k].atom + "'");
    return it->second;
  };
  auto rec = [&](const SExpr& f, size_t k) {
    auto it = ridx.find(lower(f.items.at(k).atom));
    if (it == ridx.end()) throw err(f.line, "unknown receptacle '" + f.items[k].atom + "'");
    return it->second;
  };
  auto loc = [&](const SExpr& f, size_t k) {
    auto it = lidx.find(lower(f.items.at(k).atom));
    if (it == lidx.end()) throw err(f.line, "unknown location '" + f.items[k].atom + "'");
    return it->second;
  };
  static const std::map<std::string, uint8_t> kStateFlags = {
      {"isclean", kClean}, {"ishot", kHot}, {"iscool", kCool}, {"issliced", kSliced}, {"ison", kOn},
      {"istoggled", kToggled}};
  for (size_t i = 1; i < init.items.size(); ++i) {
    const SExpr& f = init.items[i];
    const std::string p = lower(f.items[0].atom);
    const size_t argc = f.items.size() - 1;
    auto need = [&](size_t n) {
      if (argc != n) throw err(f.line, p + " takes " + std::to_string(n) + " argument(s), got " + std::to_string(argc));
    };
    if (p == "cancontain") {
      need(2);
      // Rows for types absent from the scene cannot matter; skip them.
      auto rt = types.find(type_name(f.items[1].atom)), ot = types.find(type_name(f.items[2].atom));
      if (rt != types.end() && ot != types.end())
        g.can_contain[static_cast<size_t>(rt->second) * nt + static_cast<size_t>(ot->second)] = 1;
    } else if (p == "inreceptacle") {
      need(2);
      s.set_in(obj(f, 1), rec(f, 2), true);
    } else if (p == "receptacleatlocation") {
      need(2);
      g.receptacles[rec(f, 1)].location = loc(f, 2);
    } else if (p == "objectatlocation") {
      need(2);
      s.object_location[obj(f, 1)] = loc(f, 2);
    } else if (p == "atlocation") {
      need(2);
      s.agent_location = loc(f, 2);
    } else if (p == "openable") {
      need(1);
      g.receptacles[rec(f, 1)].openable = true;
    } else if (p == "opened") {
      need(1);
      s.opened[rec(f, 1)] = 1;
    } else if (p == "pickupable" || p == "cleanable" || p == "heatable" || p == "coolable" || p == "toggleable" ||
               p == "sliceable" || p == "isreceptacleobject") {
      need(1);
      Object& o = g.objects[obj(f, 1)];
      (p == "pickupable"   ? o.pickupable
       : p == "cleanable"  ? o.cleanable
       : p == "heatable"   ? o.heatable
       : p == "coolable"   ? o.coolable
       : p == "toggleable" ? o.toggleable
       : p == "sliceable"  ? o.sliceable
                           : o.receptacle_object) = true;
    } else if (kStateFlags.count(p)) {
      need(1);
      s.flags[obj(f, 1)] |= kStateFlags.at(p);
    }
    // Other facts (objectType/receptacleType read above; checked, moveable,
    // ...) do not change what the actions can do.
  }
  if (s.agent_location < 0) throw FormatError(where + ": no (atLocation agent ...) fact");
  for (const auto& r : g.receptacles)
    if (r.location < 0) throw FormatError(where + ": receptacle '" + r.id + "' has no receptacleAtLocation fact");

}

// TaskSpec from the goal (see GoalScan); `type_index` finds or adds a type.
void read_goal(Game& g, const SExpr& goal, const std::function<int(const std::string&)>& type_index, size_t nt,
               const std::string& where) {
  auto err = [&](const std::string& what) {
    return FormatError(where + ": line " + std::to_string(goal.line) + ": " + what);
  };
  GoalScan scan;
  scan_goal(goal, scan);
  TaskSpec& t = g.task;
  std::vector<std::string> object_vars;
  for (const auto& [var, ty] : scan.var_type)
    if (!scan.toggle_vars.count(var)) object_vars.push_back(var);
  if (object_vars.empty()) throw err("goal has no (objectType ?o ...) condition");
  t.object_type = type_index(scan.var_type[object_vars[0]]);
  if (scan.preds.count("istoggled")) {
    t.type = TaskType::kLook;
    if (scan.toggle_vars.empty()) throw err("look goal without a toggleable light");
    t.lamp_type = type_index(scan.var_type[*scan.toggle_vars.begin()]);
  } else {
    if (scan.recep_type.empty()) throw err("goal has no (receptacleType ?r ...) condition");
    t.recep_type = type_index(scan.recep_type);
    t.type = object_vars.size() >= 2 ? TaskType::kPickTwo
             : scan.preds.count("isclean") ? TaskType::kClean
             : scan.preds.count("ishot")   ? TaskType::kHeat
             : scan.preds.count("iscool")  ? TaskType::kCool
                                           : TaskType::kPick;
  }
  const size_t n = g.type_names.size();
  if (n != nt) {
    // The goal named a type absent from the scene: grow the table (no
    // receptacle can contain it; the game is unsolvable but well-formed).
    std::vector<uint8_t> grown(n * n, 0);
    for (size_t a = 0; a < nt; ++a)
      for (size_t b = 0; b < nt; ++b) grown[a * n + b] = g.can_contain[a * nt + b];
    g.can_contain = std::move(grown);
  }
}

}  // namespace

std::string task_description(TaskType type, int variant, const std::string& obj, const std::string& recep,
                             const std::string& toggle) {
  // ALFWorld's goal_library templates, with the final period ALFWorld adds.
  const bool v = variant != 0;
  switch (type) {
    case TaskType::kPick: return v ? "put some " + obj + " on " + recep + "." : "put a " + obj + " in " + recep + ".";
    case TaskType::kLook:
      return v ? "examine the " + obj + " with the " + toggle + "." : "look at " + obj + " under the " + toggle + ".";
    case TaskType::kClean:
      return v ? "clean some " + obj + " and put it in " + recep + "." : "put a clean " + obj + " in " + recep + ".";
    case TaskType::kHeat:
      return v ? "heat some " + obj + " and put it in " + recep + "." : "put a hot " + obj + " in " + recep + ".";
    case TaskType::kCool:
      return v ? "cool some " + obj + " and put it in " + recep + "." : "put a cool " + obj + " in " + recep + ".";
    case TaskType::kPickTwo:
      return v ? "find two " + obj + " and put them in " + recep + "." : "put two " + obj + " in " + recep + ".";
  }
  return "";
}

std::shared_ptr<Game> build_game(const std::string& pddl_problem, const std::string& grammar,
                                 const std::string& file) {
  const std::string where = file + " (pddl_problem)";
  SExpr problem = parse_sexpr(pddl_problem, where);
  auto err = [&](int line, const std::string& what) {
    return FormatError(where + ": line " + std::to_string(line) + ": " + what);
  };
  const SExpr* objects = find_section(problem, ":objects");
  const SExpr* init = find_section(problem, ":init");
  const SExpr* goal = find_section(problem, ":goal");
  if (!objects || !init || !goal) throw FormatError(where + ": missing (:objects ...), (:init ...) or (:goal ...)");

  // Declarations "id - type".
  std::vector<std::string> all_ids, obj_ids, rec_ids, loc_ids;
  for (size_t i = 1; i < objects->items.size(); i += 3) {
    const SExpr& id = objects->items[i];
    if (i + 2 >= objects->items.size() || objects->items[i + 1].atom != "-")
      throw err(id.line, "expected 'id - type' in :objects near '" + id.atom + "'");
    const std::string kind = lower(objects->items[i + 2].atom);
    all_ids.push_back(id.atom);
    if (kind == "object") obj_ids.push_back(id.atom);
    if (kind == "receptacle") rec_ids.push_back(id.atom);
    if (kind == "location") loc_ids.push_back(id.atom);
  }
  auto names = demangle(all_ids);

  auto g = std::make_shared<Game>();
  g->id = file;
  std::map<std::string, int> types;
  auto type_index = [&](const std::string& t) {
    std::string n = type_name(t);
    auto it = types.find(n);
    if (it != types.end()) return it->second;
    int k = static_cast<int>(g->type_names.size());
    g->type_names.push_back(n);
    types.emplace(n, k);
    return k;
  };
  // First pass over facts: types of objects and receptacles.
  std::unordered_map<std::string, int> otype, rtype;
  for (size_t i = 1; i < init->items.size(); ++i) {
    const SExpr& f = init->items[i];
    if (!f.is_list() || f.items.empty()) throw err(f.line, "expected a fact '(predicate args...)'");
    const std::string p = lower(f.items[0].atom);
    if ((p == "objecttype" || p == "receptacletype") && f.items.size() != 3) throw err(f.line, p + " takes 2 arguments");
    if (p == "objecttype") otype[lower(f.items[1].atom)] = type_index(f.items[2].atom);
    if (p == "receptacletype") rtype[lower(f.items[1].atom)] = type_index(f.items[2].atom);
  }
  // Entities in ALFWorld's listing order (sorted lowercased ids).
  auto sorted_lower = [](std::vector<std::string> v) {
    for (auto& s : v) s = lower(s);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  std::unordered_map<std::string, int> oidx, ridx, lidx;
  for (const auto& id : sorted_lower(loc_ids)) {
    lidx[id] = static_cast<int>(g->location_names.size());
    g->location_names.push_back(names[id]);
  }
  // Entities declared without a type fact still exist for TextWorld (one
  // can go to them), but no canContain row or appliance rule matches them.
  int untyped = -1;
  auto untyped_type = [&] {
    if (untyped < 0) {
      untyped = static_cast<int>(g->type_names.size());
      g->type_names.push_back("(untyped)");
    }
    return untyped;
  };
  for (const auto& id : sorted_lower(rec_ids)) {
    auto t = rtype.find(id);
    Receptacle r;
    r.id = id;
    r.name = names[id];
    r.type = t == rtype.end() ? untyped_type() : t->second;
    r.location = -1;
    ridx[id] = static_cast<int>(g->receptacles.size());
    g->receptacles.push_back(r);
  }
  for (const auto& id : sorted_lower(obj_ids)) {
    auto t = otype.find(id);
    // ALFRED's placeholder objects ("Apple - object", no "_bar_") have no
    // facts and are not part of the scene.
    if (t == otype.end() && id.find("_bar_") == std::string::npos) continue;
    Object o;
    o.id = id;
    o.name = names[id];
    o.type = t == otype.end() ? untyped_type() : t->second;
    oidx[id] = static_cast<int>(g->objects.size());
    g->objects.push_back(o);
  }
  const size_t nt = g->type_names.size();
  g->can_contain.assign(nt * nt, 0);
  State& s = g->initial;
  s.init(g->objects.size(), g->receptacles.size());

  apply_facts(*g, *init, Ids{oidx, ridx, lidx}, types, where);

  read_goal(*g, *goal, type_index, nt, where);

  // Text.
  if (!grammar.empty()) {
    g->text = read_text(grammar, file);
    std::string task = grammar_rhs(grammar, "task", file);
    const std::string prefix = "Your task is to: ";
    if (task.compare(0, prefix.size(), prefix) != 0) throw FormatError(file + ": grammar task rule '" + task + "'");
    g->task_description = task.substr(prefix.size());
  } else {
    g->text.help = twl2_help_text();
  }
  return g;
}

LoadedGame parse_game_json(const std::string& text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + std::min(e.byte, text.size()), '\n'));
    // nlohmann's message quotes everything it read ("last read: ..."),
    // which is the whole file for a truncated one-line game: cut it.
    std::string what = e.what();
    size_t cut = what.find("; last read:");
    if (cut != std::string::npos) what.resize(cut);
    throw FormatError(file + ": line " + std::to_string(line) + ": malformed game.tw-pddl JSON (" + what + ")");
  }
  if (!j.is_object() || !j.contains("pddl_problem") || !j["pddl_problem"].is_string() || !j.contains("grammar") ||
      !j["grammar"].is_string())
    throw FormatError(file + ": game.tw-pddl needs string fields 'pddl_problem' and 'grammar'");
  LoadedGame out;
  out.has_solvable_key = j.contains("solvable");
  out.solvable = out.has_solvable_key && j["solvable"].is_boolean() && j["solvable"].get<bool>();
  if (j.contains("walkthrough") && j["walkthrough"].is_array())
    for (const auto& w : j["walkthrough"]) out.walkthrough.push_back(w.get<std::string>());
  out.game = build_game(j["pddl_problem"].get<std::string>(), j["grammar"].get<std::string>(), file);
  return out;
}

LoadedGame load_game_file(const std::string& path) { return parse_game_json(read_file(path), path); }

LoadedGame load_trial(const std::string& initial_state_pddl, const std::string& traj_data_json) {
  nlohmann::json traj;
  try {
    traj = nlohmann::json::parse(read_file(traj_data_json));
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(traj_data_json + ": malformed traj_data.json (" + e.what() + ")");
  }
  auto g = build_game(read_file(initial_state_pddl), "", initial_state_pddl);
  try {
    const auto& p = traj.at("pddl_params");
    TaskType type;
    std::string tt = traj.at("task_type").get<std::string>();
    if (!parse_task_type(tt, &type))
      throw FormatError(traj_data_json + ": unsupported task_type '" + tt + "' (movable/sliced tasks are filtered)");
    g->task_description = task_description(type, 0, lower(p.at("object_target").get<std::string>()),
                                           lower(p.at("parent_target").get<std::string>()),
                                           lower(p.at("toggle_target").get<std::string>()));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(traj_data_json + ": missing task_type/pddl_params field (" + e.what() + ")");
  }
  LoadedGame out;
  out.game = g;
  out.solvable = true;
  out.has_solvable_key = false;
  return out;
}

}  // namespace agentrl::envs::alfworld
