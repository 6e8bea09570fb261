// The `alfworld` environment: ALFWorld household tasks over the Env
// interface, on built-in procedural scenes (default) or on real ALFWorld
// games (`alfworld.data_dir` = a json_2.1.1 / json_2.1.3 folder).
//
// Reward 1 on the step that reaches the goal, else 0; the episode ends on
// success or after max_steps (50, as in ALFWorld's evaluations).
// info.task_type is ALFRED's task type name; info.metrics holds
// "won" (0/1) and "steps".
//
// Thread-safety: AlfworldSuite is immutable after construction (games are
// loaded eagerly, in parallel) and its const methods are safe to call
// concurrently; each AlfworldEnv is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/envs/alfworld/game.h"
#include "agentrl/envs/alfworld/scene_generator.h"
#include "agentrl/envs/alfworld/simulator.h"
#include "agentrl/envs/env.h"

namespace agentrl::envs::alfworld {

struct AlfworldConfig {
  std::string data_dir;            // "" = built-in scenes
  int64_t train_size = 3553;       // built-in split sizes (ALFWorld's train / valid_seen / valid_unseen)
  int64_t valid_seen_size = 140;
  int64_t valid_unseen_size = 134;
  int64_t max_steps = 50;
  int64_t seed = 0;                // seed of the scene generator
  std::string eval_split = "valid_seen";
  std::string grammar = "twl2";    // text of built-in scenes: twl2 (ALFWorld >= 0.4) or 2.1.1
  std::string scene_tables = "agentrl";  // built-in room tables: agentrl or alfworld (fitted to the real games)
  int64_t max_receptacles = 0;     // quickstart knob: cap receptacles per built-in room (0 = no cap)
  std::vector<std::string> room_types;  // built-in rooms allowed (empty = all)
  std::vector<std::string> task_types;  // task types allowed in built-in scenes (empty = all)
  int64_t load_threads = 0;        // threads parsing real games (0 = all cores)
  std::string expert = "omniscient";  // omniscient (knows every object's place) | search (explores) | prior (explores likely places first)

  void visit(config::Visitor& v);
  SceneOptions scene_options() const;  // throws ConfigError for unknown task types
};

class AlfworldSuite;

class AlfworldEnv final : public Env {
 public:
  explicit AlfworldEnv(std::shared_ptr<const AlfworldSuite> suite);
  std::string reset(const Task& task, uint64_t seed) override;
  StepResult step(const std::string& action) override;
  std::vector<std::string> admissible_actions() const override;
  std::string task_description() const override;
  std::optional<std::string> expert_action() override;
  int max_steps() const override;

  // The simulator of the current episode (null before reset).
  const Simulator* simulator() const { return sim_.get(); }

 private:
  std::shared_ptr<const AlfworldSuite> suite_;
  std::unique_ptr<Simulator> sim_;
  std::string task_type_;
  int steps_ = 0;
  bool done_ = false;
};

class AlfworldSuite final : public EnvSuite, public TaskSource, public std::enable_shared_from_this<AlfworldSuite> {
 public:
  // Loads real games when config.data_dir is set (throws ConfigError /
  // FormatError); built-in scenes are generated lazily. Create it with
  // std::make_shared (make_env() hands each Env a shared_ptr to the suite).
  explicit AlfworldSuite(const AlfworldConfig& config);

  // EnvSuite
  const std::string& name() const override { return name_; }
  const TaskSource& tasks() const override { return *this; }
  std::unique_ptr<Env> make_env() const override;
  std::string train_split() const override;
  std::string eval_split() const override;

  // TaskSource
  std::vector<std::string> splits() const override;
  size_t size(const std::string& split) const override;
  Task get(const std::string& split, size_t index) const override;

  // The game of a task (generated or loaded).
  std::shared_ptr<const Game> game(const std::string& split, size_t index) const;
  const AlfworldConfig& config() const { return config_; }

 private:
  struct RealSplit {
    std::string name;
    std::vector<std::string> paths;
    std::vector<std::shared_ptr<const Game>> games;
  };
  const RealSplit* real_split(const std::string& split) const;

  std::string name_ = "alfworld";
  AlfworldConfig config_;
  SceneOptions scene_;
  std::vector<RealSplit> real_;
};

}  // namespace agentrl::envs::alfworld
