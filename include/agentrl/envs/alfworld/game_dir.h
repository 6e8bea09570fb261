// Loading a whole ALFWorld download: every split folder of a json_2.1.1 /
// json_2.1.3 directory, with ALFWorld's own filters, parsed in parallel.
//
// Errors: ConfigError naming alfworld.data_dir when the folder is not an
// ALFWorld download (not a directory, games at the wrong depth, no games);
// the FormatError of the first malformed game file in path order.
// Thread-safety: a free function without shared state (it starts and joins
// its own threads).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agentrl/envs/alfworld/game.h"

namespace agentrl::envs::alfworld {

struct GameSplit {
  std::string name;                 // folder name: "valid_seen", "valid_unseen", "train", ...
  std::vector<std::string> paths;   // game.tw-pddl files kept, sorted
  std::vector<std::shared_ptr<const Game>> games;
  size_t skipped = 0;               // filtered out (movable, Sliced, not solvable, no solvable key)
};

// Loads every split folder of `data_dir`: games under
// <split>/<task>/<trial>/game.tw-pddl, with ALFWorld's filters (skip paths
// containing "movable" or "Sliced", require `solvable: true`). Parses files
// on `threads` threads (0 = hardware). Splits without games are left out.
std::vector<GameSplit> load_game_dir(const std::string& data_dir, int threads = 0);

}  // namespace agentrl::envs::alfworld
