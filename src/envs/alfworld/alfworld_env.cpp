#include "agentrl/envs/alfworld/alfworld_env.h"

#include <algorithm>

#include "agentrl/core/error.h"
#include "agentrl/envs/alfworld/game_dir.h"
#include "agentrl/envs/alfworld/game_loader.h"
#include "agentrl/envs/registry.h"

namespace agentrl::envs::alfworld {

void AlfworldConfig::visit(config::Visitor& v) {
  v.field("data_dir", data_dir,
          "folder of real ALFWorld games (json_2.1.1 layout: <split>/<task>/<trial>/game.tw-pddl); "
          "empty = built-in procedural scenes");
  v.field("train_size", train_size, "built-in scenes: games in split train", config::Range::at_least(1));
  v.field("valid_seen_size", valid_seen_size, "built-in scenes: games in split valid_seen", config::Range::at_least(1));
  v.field("valid_unseen_size", valid_unseen_size, "built-in scenes: games in split valid_unseen",
          config::Range::at_least(1));
  v.field("max_steps", max_steps, "steps per episode (ALFWorld evaluates with 50)", config::Range::at_least(1));
  v.field("seed", seed, "seed of the built-in scene generator", config::Range::at_least(0));
  v.field("eval_split", eval_split, "split used for evaluation (valid_seen = ALFWorld's eval_in_distribution, "
                                    "valid_unseen = eval_out_of_distribution)");
  v.field("grammar", grammar, "text of built-in scenes: twl2 (ALFWorld >= 0.4: 'move X to Y') or 2.1.1 "
                              "('put X in/on Y', arrival at 'loc N')",
          {"twl2", "2.1.1"});
  v.field("scene_tables", scene_tables,
          "built-in scenes: room tables: agentrl (hand-written ranges; the quickstart's scenes) or alfworld (fitted "
          "to ALFWorld's real evaluation games: receptacle counts per room, object types and where they lie, "
          "which room hosts which task)",
          {"agentrl", "alfworld"});
  v.field("max_receptacles", max_receptacles,
          "built-in scenes: at most this many receptacles per room (0 = no cap; quickstart: 8)",
          config::Range::at_least(0));
  v.field("room_types", room_types, "built-in scenes: room types allowed (empty = all)",
          {"kitchen", "bathroom", "bedroom", "livingroom"});
  v.field("task_types", task_types, "built-in scenes: task types allowed (empty = all six)",
          {"pick", "look", "clean", "heat", "cool", "pick2", "pick_and_place_simple", "look_at_obj_in_light",
           "pick_clean_then_place_in_recep", "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep",
           "pick_two_obj_and_place"});
  v.field("load_threads", load_threads, "threads parsing real game files (0 = all cores)", config::Range::at_least(0));
  v.field("expert", expert,
          "expert of demos/eval: omniscient (reads the state: shortest plans), search (uses only what it has "
          "seen, exploring receptacles in order: demonstrations a policy can imitate on unseen scenes) or prior "
          "(searches where real ALFWorld games most often put the wanted object first, lamps included: "
          "imitable from the last steps of a window prompt)",
          {"omniscient", "search", "prior"});
}

SceneOptions AlfworldConfig::scene_options() const {
  SceneOptions o;
  o.max_receptacles = max_receptacles;
  o.room_types = room_types;
  o.grammar = grammar;
  o.tables = scene_tables;
  for (const auto& t : task_types) {
    TaskType tt;
    if (!parse_task_type(t, &tt)) throw ConfigError("alfworld.task_types: unknown task type '" + t + "'");
    o.task_types.push_back(tt);
  }
  return o;
}

// ---- AlfworldSuite ----------------------------------------------------------

AlfworldSuite::AlfworldSuite(const AlfworldConfig& config) : config_(config), scene_(config.scene_options()) {
  if (!config_.data_dir.empty()) {
    for (auto& sp : load_game_dir(config_.data_dir, static_cast<int>(config_.load_threads))) {
      RealSplit r;
      r.name = sp.name;
      for (auto& p : sp.paths) {
        std::string rel = p.substr(config_.data_dir.size());
        while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
        r.paths.push_back(rel);
      }
      r.games = std::move(sp.games);
      real_.push_back(std::move(r));
    }
  }
  auto names = splits();
  if (std::find(names.begin(), names.end(), config_.eval_split) == names.end()) {
    std::string list;
    for (auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError("alfworld.eval_split: '" + config_.eval_split + "' is not a split (available: " + list + ")");
  }
}

std::unique_ptr<Env> AlfworldSuite::make_env() const {
  return std::make_unique<AlfworldEnv>(shared_from_this());
}

std::string AlfworldSuite::train_split() const {
  // Always "train": a download without it makes size("train") throw a
  // ConfigError listing the splits that exist, instead of silently
  // training on an evaluation split.
  return "train";
}

std::string AlfworldSuite::eval_split() const { return config_.eval_split; }

std::vector<std::string> AlfworldSuite::splits() const {
  if (real_.empty()) return {"train", "valid_seen", "valid_unseen"};
  std::vector<std::string> out;
  for (const auto& r : real_) out.push_back(r.name);
  return out;
}

const AlfworldSuite::RealSplit* AlfworldSuite::real_split(const std::string& split) const {
  for (const auto& r : real_)
    if (r.name == split) return &r;
  return nullptr;
}

size_t AlfworldSuite::size(const std::string& split) const {
  if (!real_.empty()) {
    if (const RealSplit* r = real_split(split)) return r->games.size();
  } else {
    if (split == "train") return static_cast<size_t>(config_.train_size);
    if (split == "valid_seen") return static_cast<size_t>(config_.valid_seen_size);
    if (split == "valid_unseen") return static_cast<size_t>(config_.valid_unseen_size);
  }
  std::string list;
  for (auto& n : splits()) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError("alfworld: unknown split '" + split + "' (available: " + list + ")");
}

std::shared_ptr<const Game> AlfworldSuite::game(const std::string& split, size_t index) const {
  const size_t n = size(split);
  if (index >= n)
    throw std::out_of_range("alfworld: task " + std::to_string(index) + " of split " + split + " (size " +
                            std::to_string(n) + ")");
  if (const RealSplit* r = real_split(split)) return r->games[index];
  return generate_game(split, static_cast<int64_t>(index), static_cast<uint64_t>(config_.seed), scene_);
}

Task AlfworldSuite::get(const std::string& split, size_t index) const {
  auto g = game(split, index);
  Task t;
  const RealSplit* r = real_split(split);
  t.id = r ? r->paths[index] : g->id;
  t.split = split;
  t.index = static_cast<int64_t>(index);
  t.task_type = task_type_name(g->task.type);
  return t;
}

// ---- AlfworldEnv ------------------------------------------------------------

AlfworldEnv::AlfworldEnv(std::shared_ptr<const AlfworldSuite> suite) : suite_(std::move(suite)) {}

std::string AlfworldEnv::reset(const Task& task, uint64_t seed) {
  (void)seed;  // ALFWorld episodes are deterministic given the game
  auto g = suite_->game(task.split, static_cast<size_t>(task.index));
  sim_ = std::make_unique<Simulator>(g);
  sim_->set_searching_expert(suite_->config().expert == "search");
  sim_->set_prior_search(suite_->config().expert == "prior");
  task_type_ = task_type_name(g->task.type);
  steps_ = 0;
  done_ = false;
  return sim_->reset();
}

StepResult AlfworldEnv::step(const std::string& action) {
  if (!sim_) throw std::logic_error("AlfworldEnv::step before reset");
  StepResult r;
  r.info.task_type = task_type_;
  if (done_) {
    r.observation = "Nothing happens.";
    r.done = true;
    r.info.invalid_action = true;
    r.info.success = sim_->goal_satisfied();
    r.info.score = r.info.success ? 1.0 : 0.0;
    return r;
  }
  bool valid = false;
  r.observation = sim_->step(action, &valid);
  ++steps_;
  r.info.invalid_action = !valid;
  r.info.success = sim_->goal_satisfied();
  r.info.score = r.info.success ? 1.0 : 0.0;
  r.reward = r.info.success ? 1.0 : 0.0;
  r.done = r.info.success || steps_ >= max_steps();
  done_ = r.done;
  r.info.metrics["won"] = r.info.success ? 1.0 : 0.0;
  r.info.metrics["steps"] = steps_;
  return r;
}

std::vector<std::string> AlfworldEnv::admissible_actions() const {
  if (!sim_ || done_) return {};
  return sim_->admissible();
}

std::string AlfworldEnv::task_description() const { return sim_ ? sim_->game().task_description : ""; }

std::optional<std::string> AlfworldEnv::expert_action() {
  if (!sim_ || done_) return std::nullopt;
  return sim_->expert_action();
}

int AlfworldEnv::max_steps() const { return static_cast<int>(suite_->config().max_steps); }

AGENTRL_REGISTER_ENV(alfworld, AlfworldConfig, "ALFWorld household tasks (built-in scenes or real ALFWorld games)",
                     [](const AlfworldConfig& c) { return std::make_shared<AlfworldSuite>(c); });

}  // namespace agentrl::envs::alfworld
