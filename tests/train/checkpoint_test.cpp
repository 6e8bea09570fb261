// CheckpointManager: complete-or-absent checkpoints, pruning, resume lookup.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agentrl/core/error.h"
#include "agentrl/train/checkpoint.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

std::string fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("agentrl_ckpt_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d.string();
}

void write_state(const std::string& dir, const std::string& payload) {
  std::ofstream(fs::path(dir) / "trainer_state.json") << payload;
}

TEST(CheckpointManager, SaveRenamesTmpAndUpdatesLatest) {
  CheckpointManager m(fresh_dir("save"), 3);
  auto p = m.save(5, [](const std::string& d) { write_state(d, "{\"iteration\":5}"); });
  EXPECT_EQ(fs::path(p).filename(), "step_000005");
  EXPECT_TRUE(fs::exists(fs::path(p) / "trainer_state.json"));
  EXPECT_FALSE(fs::exists(p + ".tmp"));
  std::ifstream latest(fs::path(m.dir()) / "latest");
  std::string line;
  std::getline(latest, line);
  EXPECT_EQ(line, "step_000005");
  EXPECT_EQ(m.latest().value(), p);
  EXPECT_EQ(CheckpointManager::step_of(p), 5);
}

TEST(CheckpointManager, KeepsOnlyTheNewestK) {
  CheckpointManager m(fresh_dir("keep"), 2);
  for (int s : {1, 2, 3, 4}) m.save(s, [](const std::string& d) { write_state(d, "{}"); });
  auto all = m.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(CheckpointManager::step_of(all[0]), 3);
  EXPECT_EQ(CheckpointManager::step_of(all[1]), 4);
}

TEST(CheckpointManager, IncompleteTmpDirectoryIsNeverResumed) {
  CheckpointManager m(fresh_dir("tmp"), 3);
  m.save(1, [](const std::string& d) { write_state(d, "{}"); });
  fs::create_directories(fs::path(m.dir()) / "step_000002.tmp");
  write_state((fs::path(m.dir()) / "step_000002.tmp").string(), "{}");
  EXPECT_EQ(CheckpointManager::step_of(*m.latest()), 1);
  EXPECT_EQ(CheckpointManager::step_of(*CheckpointManager::resolve(m.dir(), "auto")), 1);
}

TEST(CheckpointManager, KillDuringCheckpointWritingLeavesThePreviousCheckpoint) {
  const std::string dir = fresh_dir("kill");
  {
    CheckpointManager m(dir, 3);
    m.save(1, [](const std::string& d) { write_state(d, "{\"iteration\":1}"); });
  }
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    CheckpointManager m(dir, 3);
    m.save(2, [](const std::string& d) {
      std::ofstream(fs::path(d) / "model.bin") << std::string(1 << 20, 'x');
      std::this_thread::sleep_for(std::chrono::seconds(30));  // killed here
      write_state(d, "{\"iteration\":2}");
    });
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  CheckpointManager m(dir, 3);
  auto latest = m.latest();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(CheckpointManager::step_of(*latest), 1);
  // The next save cleans the stale .tmp.
  m.save(3, [](const std::string& d) { write_state(d, "{}"); });
  EXPECT_FALSE(fs::exists(fs::path(dir) / "step_000002.tmp"));
}

TEST(CheckpointManager, ResolveRejectsAPathThatIsNotACompleteCheckpoint) {
  const std::string dir = fresh_dir("resolve");
  fs::create_directories(fs::path(dir) / "step_000007.tmp");
  try {
    CheckpointManager::resolve(dir, (fs::path(dir) / "step_000007.tmp").string());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not a complete checkpoint"), std::string::npos) << e.what();
  }
  try {
    CheckpointManager::resolve(dir, dir + "/nope");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no such checkpoint"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(CheckpointManager::resolve(dir, "auto").has_value());
}

}  // namespace
}  // namespace agentrl::train
