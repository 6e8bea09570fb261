// Resuming a checkpoint written by an earlier version: keys added since (at
// their defaults) and keys removed since are no config change; real changes
// still are.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agentrl/core/error.h"
#include "agentrl/train/run_setup.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

struct OldCheckpoint {
  fs::path dir = fs::temp_directory_path() / ("agentrl_resume_cfg_" + std::to_string(::getpid()));
  // The config.yaml of `cfg`, edited as an older version would have written it.
  explicit OldCheckpoint(const ExperimentConfig& cfg) {
    fs::create_directories(dir);
    auto c = cfg;
    std::string yaml = config::to_yaml(c);
    erase_line(yaml, "\n  timeout_s: 1800");           // dist.timeout_s did not exist
    erase_line(yaml, "\n  kv_memory_fraction: 0");     // nor engine.kv_memory_fraction
    const auto at = yaml.find('\n', yaml.find("\nalgorithm:") + 1);
    yaml.insert(at + 1, "  gamma: 1\n");  // a key since removed
    std::ofstream(dir / "config.yaml") << yaml;
  }
  ~OldCheckpoint() { fs::remove_all(dir); }
  // Erases the line that starts with `start` (after its newline), comment included.
  static void erase_line(std::string& s, const std::string& start) {
    const auto p = s.find(start);
    ASSERT_NE(p, std::string::npos) << "the config no longer has" << start;
    s.erase(p, s.find('\n', p + 1) - p);
  }
};

TEST(ResumeConfig, KeysAddedOrRemovedSinceTheCheckpointAreNoChange) {
  ExperimentConfig cfg;
  OldCheckpoint old(cfg);
  EXPECT_NO_THROW(check_resume_config(cfg, old.dir.string()));
}

TEST(ResumeConfig, ANewKeyAwayFromItsDefaultAndOtherChangesAreRefused) {
  ExperimentConfig cfg;
  OldCheckpoint old(cfg);
  cfg.engine.kv_memory_fraction = 0.5;  // not what the old run did
  cfg.rollout.group_size = 3;
  try {
    check_resume_config(cfg, old.dir.string());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("engine.kv_memory_fraction: checkpoint has <absent>, this run has 0.5"), std::string::npos) << m;
    EXPECT_NE(m.find("rollout.group_size"), std::string::npos) << m;
    EXPECT_EQ(m.find("algorithm.gamma"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace agentrl::train
