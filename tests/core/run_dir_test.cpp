#include "agentrl/core/run_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "core/test_util.h"

namespace agentrl {
namespace {
namespace stdfs = std::filesystem;

TEST(RunDir, CreatesLayout) {
  testing::ScratchDir root;
  const RunDir d = RunDir::create(root.file("runs"), "exp1");
  EXPECT_EQ(d.path(), root.file("runs/exp1"));
  EXPECT_TRUE(stdfs::is_directory(root.file("runs/exp1/tb")));
  EXPECT_TRUE(stdfs::is_directory(root.file("runs/exp1/checkpoints")));
  EXPECT_TRUE(stdfs::is_directory(root.file("runs/exp1/rollouts")));
  EXPECT_EQ(d.config_yaml(), root.file("runs/exp1/config.yaml"));
  EXPECT_EQ(d.log_txt(), root.file("runs/exp1/log.txt"));
  EXPECT_EQ(d.metrics_jsonl(), root.file("runs/exp1/metrics.jsonl"));
}

TEST(RunDir, CreateIsIdempotentAndKeepsFiles) {
  testing::ScratchDir root;
  const RunDir d = RunDir::create(root.path(), "r");
  d.write_config("seed: 1\n");
  RunDir::create(root.path(), "r");
  EXPECT_EQ(read_file(d.config_yaml()), "seed: 1\n");
}

TEST(RunDir, RejectsNamesThatAreNotOneComponent) {
  testing::ScratchDir root;
  try {
    RunDir::create(root.path(), "a/b");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "run name 'a/b' must be a single directory name (no '/', not '.' or '..')");
  }
  EXPECT_THROW(RunDir::create(root.path(), ".."), ConfigError);
  EXPECT_THROW(RunDir::create(root.path(), ""), ConfigError);
}

TEST(RunDir, OpenMissingIsIoError) {
  EXPECT_THROW(RunDir::open("/nonexistent/agentrl/run"), IoError);
}

}  // namespace
}  // namespace agentrl
