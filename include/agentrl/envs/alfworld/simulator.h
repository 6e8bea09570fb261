// The ALFWorld simulator: plays one Game with the semantics of ALFWorld's
// PDDL domain (alfred.pddl) and the text of its TextWorld grammar.
//
// Actions (preconditions as in alfred.pddl): look, inventory, help,
// examine R/O, go to R, open/close R, take O from R, put/move O to R,
// clean O with sinkbasin, heat O with microwave, cool O with fridge,
// use O (toggle a lamp), slice O with knife. The admissible commands are
// every applicable grounded action, rendered with the game's grammar, sorted
// and de-duplicated; any other text gives "Nothing happens." and leaves the
// state unchanged. The goal (TaskSpec) is checked after every step.
//
// Thread-safety: a Simulator is used by one thread at a time; many
// Simulators may share one Game.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agentrl/envs/alfworld/game.h"

namespace agentrl::envs::alfworld {

class Simulator {
 public:
  explicit Simulator(std::shared_ptr<const Game> game);

  // Restores the initial state; returns the intro text:
  // "-= Welcome to TextWorld, ALFRED! =-\n\n<look>\n\nYour task is to: <task>".
  std::string reset();
  // Applies `command` (surrounding whitespace ignored). Returns the feedback;
  // `*valid` is false (and the state unchanged) when the command is not
  // admissible, in which case the feedback is "Nothing happens.".
  std::string step(const std::string& command, bool* valid);
  // Sorted, de-duplicated admissible commands of the current state.
  const std::vector<std::string>& admissible() const;
  bool goal_satisfied() const;
  // Next command of a planner with full knowledge of the state (it knows
  // where every object is), or nullopt when the goal holds or no plan exists.
  std::optional<std::string> expert_action() const;
  // Searching expert (alfworld.expert: search): like expert_action(), but it
  // only uses what the agent has seen. An object it has not seen yet is looked
  // for by visiting (and opening) receptacles in admissible-command order, so
  // demonstrations show the exploration a policy must do on unseen scenes.
  void set_searching_expert(bool on) { searching_ = on; }
  // Prior-searching expert (alfworld.expert: prior): searching, but it visits
  // the receptacle types where real ALFWorld games most often put the wanted
  // object first (placement_weight; a lamp, too, is searched for once it has
  // not been seen), instances in ascending number, and of equally good goal
  // receptacles it takes the lowest-numbered. Each of its choices follows
  // from the object type, the last receptacle visited and the admissible
  // commands, so a policy that sees only the last steps can imitate it.
  void set_prior_search(bool on) {
    prior_ = on;
    searching_ = searching_ || on;
  }

  const Game& game() const { return *game_; }
  const State& state() const { return state_; }
  // Text of the look action in the current state.
  std::string look_text() const;

 private:
  enum class Kind { kLook, kInventory, kHelp, kExamineR, kExamineO, kGoto, kOpen, kClose, kTake, kPut,
                    kClean, kHeat, kCool, kToggle, kSlice };
  struct Action {
    Kind kind;
    int o = -1;  // object (slice: the sliced object)
    int r = -1;  // receptacle (slice: the knife object)
  };
  void compute_admissible() const;
  std::string apply(const Action& a);
  std::string examine_receptacle(int r) const;
  std::string examine_object(int o) const;
  std::string list_contents(int r) const;
  std::string command_text(const Action& a) const;
  bool receptacle_visible(int r) const;  // at agent location and open (or not openable)
  bool object_done(int o, int r) const;  // o satisfies the goal's object conditions inside r
  int target_receptacle() const;
  void update_here();
  int appliance_for_task() const;

  std::shared_ptr<const Game> game_;
  State state_;
  int sink_type_ = -1, microwave_type_ = -1, fridge_type_ = -1, knife_type_ = -1, butterknife_type_ = -1;
  mutable bool admissible_valid_ = false;
  mutable std::vector<std::string> admissible_;
  mutable std::vector<Action> admissible_actions_;  // parallel to admissible_
  mutable std::vector<std::pair<std::string, Action>> local_;  // scratch of compute_admissible
  std::vector<std::string> goto_cmd_;  // "go to <r>" per receptacle
  std::vector<int> goto_order_;        // receptacles sorted by goto_cmd_
  std::vector<int> here_;              // receptacles at the agent's location
  std::vector<char> seen_;             // receptacles whose contents the agent has seen
  bool searching_ = false;
  bool prior_ = false;
  void mark_seen();
  // Next step of the search for an object of type `wanted` (-1: any order).
  std::optional<std::string> search_step(int wanted) const;
  std::vector<int> prior_order(int wanted) const;
};

// Joins items the TextWorld way: "a", "a, and b", "a, b, and c"; "nothing" if empty.
std::string join_list(const std::vector<std::string>& items);

}  // namespace agentrl::envs::alfworld
