// Directory loading of real ALFWorld games (see game_dir.h).
#include "agentrl/envs/alfworld/game_dir.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <thread>

#include "agentrl/core/error.h"
#include "agentrl/envs/alfworld/game_loader.h"

namespace agentrl::envs::alfworld {
namespace fs = std::filesystem;
namespace {

// Sorted game.tw-pddl files of one split folder; refuses games that are not
// at ALFWorld's depth <split>/<task>/<trial>/game.tw-pddl (a game one level
// higher means data_dir names a split folder, not the download).
std::vector<std::string> split_game_files(const std::string& data_dir, const std::string& split) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(data_dir) / split))
    if (e.is_regular_file() && e.path().filename() == "game.tw-pddl") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const fs::path rel = fs::path(f).lexically_relative(fs::path(data_dir) / split);
    if (std::distance(rel.begin(), rel.end()) != 3)
      throw ConfigError("alfworld.data_dir: '" + f + "' is not at <split>/<task>/<trial>/game.tw-pddl under '" +
                        data_dir + "'; point data_dir at the folder that holds valid_seen/, valid_unseen/ (and train/)");
  }
  return files;
}

// Parses `files` on up to `threads` threads; rethrows the error of the first
// failing file in path order, so the message does not depend on scheduling.
std::vector<LoadedGame> load_files(const std::vector<std::string>& files, int threads) {
  std::vector<LoadedGame> loaded(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<size_t> next{0};
  int nthreads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  nthreads = std::min<int>(nthreads, static_cast<int>(std::max<size_t>(1, files.size())));
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      try {
        loaded[i] = load_game_file(files[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int k = 1; k < nthreads; ++k) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return loaded;
}

GameSplit load_split(const std::string& data_dir, const std::string& name, int threads) {
  GameSplit sp;
  sp.name = name;
  std::vector<std::string> kept;
  for (auto& f : split_game_files(data_dir, name)) {
    // ALFWorld's filter on the path below the download folder.
    const std::string rel = f.substr(data_dir.size());
    if (rel.find("movable") != std::string::npos || rel.find("Sliced") != std::string::npos) {
      ++sp.skipped;
      continue;
    }
    kept.push_back(f);
  }
  std::vector<LoadedGame> loaded = load_files(kept, threads);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (!loaded[i].solvable) {
      ++sp.skipped;
      continue;
    }
    sp.paths.push_back(kept[i]);
    sp.games.push_back(loaded[i].game);
  }
  return sp;
}

}  // namespace

std::vector<GameSplit> load_game_dir(const std::string& data_dir, int threads) {
  std::error_code ec;
  if (!fs::is_directory(data_dir, ec))
    throw ConfigError("alfworld.data_dir: '" + data_dir + "' is not a directory (expected a json_2.1.1 folder)");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(data_dir))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<GameSplit> splits;
  for (const auto& name : names) {
    GameSplit sp = load_split(data_dir, name, threads);
    if (!sp.games.empty()) splits.push_back(std::move(sp));
  }
  if (splits.empty()) throw ConfigError("alfworld.data_dir: no game.tw-pddl games found under '" + data_dir + "'");
  return splits;
}

}  // namespace agentrl::envs::alfworld
