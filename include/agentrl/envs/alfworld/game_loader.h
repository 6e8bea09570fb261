// Loader of real ALFWorld games.
//
// Reads ALFWorld's `game.tw-pddl` files (JSON: pddl_domain, grammar,
// pddl_problem, solvable[, walkthrough]) and ALFRED trial folders
// (`initial_state.pddl` + `traj_data.json`), and names everything the way
// ALFWorld does (its Demangler, alfworld/alfworld `alfworld/gen/utils` ...):
// the id prefix before the first `_bar_`, lowercased, plus "basin" when the
// id contains "basin" (Sink|...|SinkBasin -> sinkbasin); numbered per name
// over the sorted ids, the first id getting the highest number (ALFWorld
// pops numbers from the end of 1..n). Locations are named the same way
// ("loc 12"), which the 2.1.1 grammar prints on arrival.
//
// Text: the two known grammar versions are supported exactly (json_2.1.1's
// "put {o} in/on {r}" / "You arrive at loc N." and alfred.twl2's
// "move {o} to {r}" / "You arrive at {r}."): the strings that differ are read
// from the game's own grammar (GameText); a grammar without them is rejected.
//
// Errors: FormatError naming the file (and the PDDL line where it applies).
// Thread-safety: free functions without shared state.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agentrl/envs/alfworld/game.h"

namespace agentrl::envs::alfworld {

struct LoadedGame {
  std::shared_ptr<const Game> game;
  bool solvable = false;
  bool has_solvable_key = false;
  std::vector<std::string> walkthrough;
};

// Parses game.tw-pddl text; `file` names the source in error messages.
LoadedGame parse_game_json(const std::string& text, const std::string& file);
// Reads and parses a game.tw-pddl file.
LoadedGame load_game_file(const std::string& path);
// Builds a game from an ALFRED trial: initial_state.pddl (problem with goal)
// and traj_data.json (task type and pddl_params give the task description
// with ALFWorld's first template); text in the twl2 form.
LoadedGame load_trial(const std::string& initial_state_pddl, const std::string& traj_data_json);
// Builds a game from a PDDL problem and a TextWorld grammar.
std::shared_ptr<Game> build_game(const std::string& pddl_problem, const std::string& grammar,
                                 const std::string& file);

// ALFWorld's task description templates (alfworld/gen/goal_library.py),
// `variant` 0 or 1, e.g. ("put a clean {obj} in {recep}.").
std::string task_description(TaskType type, int variant, const std::string& obj, const std::string& recep,
                             const std::string& toggle);

}  // namespace agentrl::envs::alfworld
