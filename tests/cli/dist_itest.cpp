// Multi-process collectives through `agentrl launch` (Gloo on loopback).
#include <gtest/gtest.h>

#include "cli/cli_test_support.h"

namespace agentrl {
namespace {

TEST(DistributedCli, TwoRanksPassTheCollectivesSelftest) {
  auto r = testing::run_agentrl("launch --nproc-per-node 2 --master-port 29633 -- dist selftest");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dist selftest ok: rank 0 of 2 (gloo"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dist selftest ok: rank 1 of 2 (gloo"), std::string::npos) << r.output;
}

TEST(DistributedCli, FourRanksPassTheCollectivesSelftest) {
  auto r = testing::run_agentrl("launch --nproc-per-node 4 --master-port 29634 -- dist selftest");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 3 of 4"), std::string::npos) << r.output;
}

TEST(DistributedCli, LaunchWithoutACommandIsAUsageError) {
  auto r = testing::run_agentrl("launch --nproc-per-node 2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace agentrl
