// One rank per GPU: the device each rank of a job takes, and the errors for
// devices that do not exist.
#include <gtest/gtest.h>

#include "agentrl/core/error.h"
#include "agentrl/dist/device_binding.h"

namespace agentrl::dist {
namespace {

std::string error_of(const std::string& configured, int world, int local_rank, int visible) {
  try {
    rank_device_name(configured, world, local_rank, visible);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RankDevice, CpuStaysCpuWhateverTheGpus) {
  EXPECT_EQ(rank_device_name("cpu", 1, 0, 0), "cpu");
  EXPECT_EQ(rank_device_name("cpu", 4, 3, 8), "cpu");
  EXPECT_EQ(rank_device_name("auto", 2, 1, 0), "cpu");
}

TEST(RankDevice, EachRankTakesTheGpuOfItsLocalRank) {
  for (const std::string cfg : {"auto", "cuda", "cuda:0", "cuda:3"}) {
    EXPECT_EQ(rank_device_name(cfg, 8, 0, 8), "cuda:0") << cfg;
    EXPECT_EQ(rank_device_name(cfg, 8, 5, 8), "cuda:5") << cfg;
    EXPECT_EQ(rank_device_name(cfg, 16, 7, 8), "cuda:7") << cfg;  // second node, LOCAL_RANK 7
  }
}

TEST(RankDevice, OneVisibleGpuPerTaskIsEveryRanksCuda0) {
  // Slurm --gpus-per-task=1 / CUDA_VISIBLE_DEVICES set per rank.
  EXPECT_EQ(rank_device_name("cuda", 4, 3, 1), "cuda:0");
  EXPECT_EQ(rank_device_name("auto", 4, 2, 1), "cuda:0");
}

TEST(RankDevice, ASingleProcessKeepsTheOrdinalItWasGiven) {
  EXPECT_EQ(rank_device_name("cuda", 1, 0, 2), "cuda:0");
  EXPECT_EQ(rank_device_name("cuda:1", 1, 0, 2), "cuda:1");
  EXPECT_EQ(rank_device_name("auto", 1, 0, 2), "cuda:0");
}

TEST(RankDevice, MissingDevicesAreClearErrors) {
  auto e = error_of("cuda:2", 1, 0, 2);
  EXPECT_NE(e.find("cuda:2"), std::string::npos) << e;
  EXPECT_NE(e.find("2 CUDA devices are visible"), std::string::npos) << e;
  e = error_of("cuda", 4, 3, 2);
  EXPECT_NE(e.find("LOCAL_RANK 3"), std::string::npos) << e;
  EXPECT_NE(e.find("cuda:3"), std::string::npos) << e;
  e = error_of("cuda", 1, 0, 0);
  EXPECT_NE(e.find("no CUDA device is visible"), std::string::npos) << e;
  e = error_of("cuda:x", 1, 0, 1);
  EXPECT_NE(e.find("'cuda:x' is not a device"), std::string::npos) << e;
  e = error_of("gpu", 1, 0, 1);
  EXPECT_NE(e.find("unknown device 'gpu'"), std::string::npos) << e;
}

TEST(RankDevice, BindingOnThisMachineAgreesWithTheRule) {
  const int visible = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  EXPECT_EQ(bind_rank_device("auto", 1, 0).str(), rank_device_name("auto", 1, 0, visible));
  EXPECT_EQ(bind_rank_device("cpu", 2, 1).str(), "cpu");
}

}  // namespace
}  // namespace agentrl::dist
