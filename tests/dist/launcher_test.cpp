// agentrl launch: rank environment, failure propagation, no silent hang.
#include <gtest/gtest.h>

#include <chrono>

#include "agentrl/core/error.h"
#include "agentrl/dist/launcher.h"

namespace agentrl::dist {
namespace {

LaunchOptions sh(const std::string& script, int n) {
  LaunchOptions o;
  o.nproc_per_node = n;
  o.executable = "/bin/sh";
  o.args = {"-c", script};
  o.kill_timeout_s = 1.0;
  o.master_port = 29611;
  return o;
}

TEST(Launcher, AllRanksSucceedingGivesExitCodeZero) {
  auto r = launch(sh("test \"$WORLD_SIZE\" = 3 && test \"$RANK\" = \"$LOCAL_RANK\" && test -n \"$MASTER_PORT\"", 3));
  EXPECT_EQ(r.exit_code, 0) << r.failure;
  EXPECT_EQ(r.failed_rank, -1);
}

TEST(Launcher, AFailingRankStopsTheOthersAndReportsItsError) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = launch(sh("if [ \"$RANK\" = 1 ]; then echo 'rank one broke' >&2; exit 3; fi; exec sleep 60", 3));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.failed_rank, 1);
  EXPECT_NE(r.failure.find("exited with code 3"), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("rank one broke"), std::string::npos) << r.failure;
  EXPECT_LT(s, 10.0) << "the sleeping ranks must be stopped, not waited for";
}

TEST(Launcher, ARankKilledBySignalIsAFailure) {
  auto r = launch(sh("if [ \"$RANK\" = 0 ]; then kill -9 $$; fi; exec sleep 60", 2));
  EXPECT_EQ(r.failed_rank, 0);
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_NE(r.failure.find("killed by signal"), std::string::npos) << r.failure;
}

TEST(Launcher, RanksIgnoringSigtermAreKilledAfterTheTimeout) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = launch(sh("if [ \"$RANK\" = 0 ]; then exit 5; fi; trap '' TERM; exec sleep 60", 2));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_LT(s, 10.0);
}

TEST(Launcher, BadOptionsAreUsageErrors) {
  LaunchOptions o = sh("true", 1);
  o.node_rank = 2;
  o.nnodes = 2;
  try {
    launch(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--node-rank 2"), std::string::npos) << e.what();
  }
  o = sh("true", 1);
  o.args.clear();
  EXPECT_THROW(launch(o), UsageError);
}

}  // namespace
}  // namespace agentrl::dist
