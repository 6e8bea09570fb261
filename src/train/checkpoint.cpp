#include "agentrl/train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

constexpr const char* kStateFile = "trainer_state.json";

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%06lld", static_cast<long long>(step));
  return buf;
}

bool is_complete(const fs::path& p) {
  const std::string name = p.filename().string();
  return fs::is_directory(p) && name.rfind("step_", 0) == 0 && name.find(".tmp") == std::string::npos &&
         fs::exists(p / kStateFile);
}

void fsync_path(const fs::path& p, bool directory) {
  int fd = ::open(p.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw IoError("cannot open " + p.string() + " to fsync it");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw IoError("fsync failed for " + p.string());
}

}  // namespace

void fsync_tree(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) fsync_path(e.path(), false);
    else if (e.is_directory()) fsync_path(e.path(), true);
  }
  fsync_path(dir, true);
}

CheckpointManager::CheckpointManager(std::string dir, int64_t keep) : dir_(std::move(dir)), keep_(keep) {
  fs::create_directories(dir_);
}

int64_t CheckpointManager::step_of(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (name.empty()) name = fs::path(path).parent_path().filename().string();
  if (name.rfind("step_", 0) != 0) return -1;
  try {
    return std::stoll(name.substr(5));
  } catch (...) {
    return -1;
  }
}

std::string CheckpointManager::staging_dir(int64_t step) const {
  return (fs::path(dir_) / (step_name(step) + ".shards.tmp")).string();
}

std::vector<std::string> CheckpointManager::list() const {
  std::vector<std::pair<int64_t, std::string>> found;
  if (!fs::exists(dir_)) return {};
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (is_complete(e.path())) found.emplace_back(step_of(e.path().string()), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [s, p] : found) out.push_back(p);
  return out;
}

std::optional<std::string> CheckpointManager::latest() const {
  // The pointer file is a convenience for people; the directory scan is the
  // truth (a crash between rename and pointer update must not hide the new
  // checkpoint, and a stale pointer must not resurrect a deleted one).
  auto all = list();
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::string CheckpointManager::save(int64_t step, const std::function<void(const std::string&)>& write) {
  const fs::path final_dir = fs::path(dir_) / step_name(step);
  const fs::path tmp_dir = fs::path(dir_) / (step_name(step) + ".tmp");
  fs::remove_all(tmp_dir);
  fs::create_directories(tmp_dir);
  write(tmp_dir.string());
  if (!fs::exists(tmp_dir / kStateFile))
    throw std::logic_error("checkpoint writer did not write " + std::string(kStateFile));
  fsync_tree(tmp_dir.string());
  fs::remove_all(final_dir);  // re-saving the same step replaces it
  fs::rename(tmp_dir, final_dir);
  fsync_path(dir_, true);
  write_file_atomic((fs::path(dir_) / "latest").string(), step_name(step) + "\n");
  // Prune: old complete checkpoints beyond `keep`, and stale .tmp dirs.
  auto all = list();
  for (size_t i = 0; i + static_cast<size_t>(keep_) < all.size(); ++i) fs::remove_all(all[i]);
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.is_directory() && e.path().filename().string().find(".tmp") != std::string::npos) fs::remove_all(e.path());
  }
  return final_dir.string();
}

std::optional<std::string> CheckpointManager::resolve(const std::string& dir, const std::string& resume) {
  if (resume.empty()) return std::nullopt;
  if (resume == "auto") {
    CheckpointManager m(dir, 1 << 30);
    return m.latest();
  }
  fs::path p(resume);
  if (!fs::exists(p)) throw ConfigError("--resume " + resume + ": no such checkpoint directory");
  if (!is_complete(p))
    throw ConfigError("--resume " + resume + ": not a complete checkpoint (expected a step_N directory with " +
                      kStateFile + "; .tmp directories are incomplete)");
  return p.string();
}

void write_trainer_state(const TrainerState& state, const std::string& checkpoint_dir) {
  nlohmann::json j;
  j["iteration"] = state.iteration;
  j["sft_done"] = state.sft_done;
  const auto& c = state.cursor;
  j["cursor"] = {{"split", c.split}, {"seed", c.seed}, {"epoch", c.epoch}, {"position", c.position}};
  j["rng"] = state.rng.state();
  const auto& k = state.counters;
  j["counters"] = {{"optimizer_steps", k.optimizer_steps},
                   {"consecutive_skips", k.consecutive_skips},
                   {"kl_coef", k.kl_coef}};
  write_file_atomic((fs::path(checkpoint_dir) / kStateFile).string(), j.dump(2));
}

TrainerState read_trainer_state(const std::string& checkpoint_dir, TrainerState initial) {
  const auto path = (fs::path(checkpoint_dir) / kStateFile).string();
  TrainerState st = std::move(initial);
  try {
    const auto j = nlohmann::json::parse(read_file(path));
    st.iteration = j.at("iteration").get<int64_t>();
    st.sft_done = j.at("sft_done").get<bool>();
    st.cursor.epoch = j.at("cursor").at("epoch").get<int64_t>();
    st.cursor.position = j.at("cursor").at("position").get<int64_t>();
    st.rng.set_state(j.at("rng").get<std::string>());
    st.counters.optimizer_steps = j.at("counters").at("optimizer_steps").get<int64_t>();
    st.counters.consecutive_skips = j.at("counters").at("consecutive_skips").get<int64_t>();
    st.counters.kl_coef = j.at("counters").at("kl_coef").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path + ": " + e.what());
  }
  return st;
}

}  // namespace agentrl::train
