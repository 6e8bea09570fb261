// Data-parallel training end to end: `agentrl launch` with 2 CPU ranks (Gloo
// on loopback) against single-process runs of the same global batch, ZeRO-1
// sharding, and the resume rules of sharded and unsharded checkpoints.
//
// The runs use tests/data/tiny_alfworld.yaml (seconds each) with one PPO
// epoch and one mini-batch: mini-batches are drawn per rank, so with more of
// them 2 ranks would group other rows into steps than 1 rank does. Rollouts
// are deterministic per group, wherever the group runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "agentrl/model/safetensors.h"
#include "cli/cli_test_support.h"

namespace fs = std::filesystem;

namespace agentrl {
namespace {

using testing::CommandResult;
using testing::run_agentrl;

const std::string kConfig = std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml";
// 2 tasks x 2 samples per iteration: 1 rank rolls out both groups, 2 ranks
// one group each (per-rank batch b = 2 episodes, single-process batch 2b).
const std::string kSettings =
    "actor.ppo_epochs=1 actor.mini_batches=1 algorithm.adv_estimator=empg rollout.tasks_per_iteration=2 "
    "rollout.group_size=2 trainer.iterations=3 trainer.save_every=1 trainer.keep_checkpoints=5";
// Largest parameter difference allowed between runs that differ only in the
// float32 order of the gradient sums (over ranks vs over micro-batches). After
// 3 AdamW steps at lr 3e-4 (parameters move by ~9e-4) the measured differences
// are ~1e-6 (1 vs 2 ranks) and 0 (sharded vs unsharded).
constexpr double kTolerance = 1e-5;

std::string out_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("agentrl_dist_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d.string();
}

// `agentrl train` in `nproc` processes (through `agentrl launch` when > 1).
CommandResult train(int nproc, int port, const std::string& dir, const std::string& extra = "") {
  const std::string train_args = "train " + kConfig + " runtime.output_dir=" + dir + " " + kSettings + " " + extra;
  if (nproc == 1) return run_agentrl(train_args);
  return run_agentrl("launch --nproc-per-node " + std::to_string(nproc) + " --master-port " + std::to_string(port) +
                     " -- " + train_args);
}

fs::path checkpoint(const std::string& dir, int step) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%06d", step);
  return fs::path(dir) / "tiny" / "checkpoints" / name;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Largest element-wise difference between the models of two checkpoints.
double max_parameter_diff(const fs::path& a, const fs::path& b) {
  auto fa = model::SafetensorsFile::open((a / "model" / "model.safetensors").string());
  auto fb = model::SafetensorsFile::open((b / "model" / "model.safetensors").string());
  EXPECT_EQ(fa->header().tensors.size(), fb->header().tensors.size());
  double diff = 0;
  for (const auto& info : fa->header().tensors) {
    auto d = (fa->tensor(info.name).to(torch::kFloat64) - fb->tensor(info.name).to(torch::kFloat64)).abs().max();
    diff = std::max(diff, d.item<double>());
  }
  return diff;
}

// The parameter hash each rank logged at the end of the run.
std::vector<std::string> final_hashes(const std::string& dir, int nproc) {
  std::vector<std::string> out;
  const std::regex re("parameter hash after iteration 3: ([0-9a-f]{16})");
  for (int r = 0; r < nproc; ++r) {
    const auto log = read(fs::path(dir) / "tiny" / (r == 0 ? "log.txt" : "log_rank" + std::to_string(r) + ".txt"));
    std::smatch m;
    out.push_back(std::regex_search(log, m, re) ? m[1].str() : "");
  }
  return out;
}

std::vector<nlohmann::json> metrics(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "tiny" / "metrics.jsonl");
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(DistributedTraining, TwoRanksMatchOneRankWithTheDoubledBatch) {
  const auto one = out_dir("one"), two = out_dir("two");
  auto r = train(1, 0, one);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(2, 29661, two);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // RL moved the parameters (so the comparison below is not vacuous) ...
  EXPECT_GT(max_parameter_diff(checkpoint(one, 0), checkpoint(one, 3)), 50 * kTolerance);
  // ... and 2 ranks with half the groups each end where 1 rank ends.
  EXPECT_LT(max_parameter_diff(checkpoint(one, 3), checkpoint(two, 3)), kTolerance);
  // The batch-global statistics (EMPG's entropy range and g, the advantage
  // moments, episode counts) equal the single-process ones every iteration.
  const auto m1 = metrics(one), m2 = metrics(two);
  ASSERT_EQ(m1.size(), m2.size());
  int compared = 0;
  for (size_t i = 1; i < m1.size(); ++i) {
    for (const auto& [key, v] : m1[i].items()) {
      if (key.rfind("empg/", 0) != 0 && key.rfind("advantage/", 0) != 0 && key != "rollout/episodes") continue;
      ASSERT_TRUE(m2[i].contains(key)) << key;
      EXPECT_NEAR(m2[i][key].get<double>(), v.get<double>(), 1e-5 * (1 + std::abs(v.get<double>())))
          << key << " in metrics line " << i;
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
}

TEST(DistributedTraining, ParametersAreIdenticalOnEveryRank) {
  const auto dir = out_dir("ranks");
  auto r = train(2, 29662, dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto h = final_hashes(dir, 2);
  ASSERT_FALSE(h[0].empty()) << "rank 0 logged no parameter hash";
  EXPECT_EQ(h[0], h[1]);
}

TEST(DistributedTraining, ShardedOptimizerMatchesTheUnshardedOne) {
  const auto plain = out_dir("plain"), zero = out_dir("zero");
  auto r = train(2, 29663, plain);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(2, 29664, zero, "dist.shard_optimizer=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(max_parameter_diff(checkpoint(plain, 3), checkpoint(zero, 3)), kTolerance);
  const auto h = final_hashes(zero, 2);
  ASSERT_FALSE(h[0].empty());
  EXPECT_EQ(h[0], h[1]) << "sharded ranks ended with different parameters";
  // One optimizer shard per rank, no full copy.
  EXPECT_TRUE(fs::exists(checkpoint(zero, 3) / "optimizer_rank0.pt"));
  EXPECT_TRUE(fs::exists(checkpoint(zero, 3) / "optimizer_rank1.pt"));
  EXPECT_FALSE(fs::exists(checkpoint(zero, 3) / "optimizer.pt"));
}

TEST(DistributedTraining, ResumedShardedTwoRankRunEqualsTheUninterruptedOne) {
  const auto straight = out_dir("straight"), resumed = out_dir("resumed");
  auto r = train(2, 29665, straight, "dist.shard_optimizer=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(2, 29666, resumed, "dist.shard_optimizer=true --stop-after 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(2, 29667, resumed, "dist.shard_optimizer=true --resume auto");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("resumed from"), std::string::npos) << r.output;
  EXPECT_TRUE(read(checkpoint(straight, 3) / "model" / "model.safetensors") ==
              read(checkpoint(resumed, 3) / "model" / "model.safetensors"))
      << "final parameters differ";
}

TEST(DistributedTraining, ShardedTwoRankLoraRunMatchesOneRank) {
  // LoRA with ZeRO-1 over 2 ranks: the adapters' gradients are reduced and
  // their AdamW state sharded; the adapters end where one rank's do.
  const std::string lora = "model.lora.enabled=true model.lora.rank=4 model.lora.alpha=8";
  const auto one = out_dir("lora_one"), two = out_dir("lora_two");
  auto r = train(1, 0, one, lora);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(2, 29669, two, lora + " dist.shard_optimizer=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto fa = model::SafetensorsFile::open((checkpoint(one, 3) / "adapter" / "adapter_model.safetensors").string());
  auto fb = model::SafetensorsFile::open((checkpoint(two, 3) / "adapter" / "adapter_model.safetensors").string());
  auto f0 = model::SafetensorsFile::open((checkpoint(one, 0) / "adapter" / "adapter_model.safetensors").string());
  double diff = 0, moved = 0;
  for (const auto& info : fa->header().tensors) {
    const auto a = fa->tensor(info.name).to(torch::kFloat64);
    diff = std::max(diff, (a - fb->tensor(info.name).to(torch::kFloat64)).abs().max().item<double>());
    moved = std::max(moved, (a - f0->tensor(info.name).to(torch::kFloat64)).abs().max().item<double>());
  }
  EXPECT_GT(moved, 50 * kTolerance) << "RL did not move the adapters";
  EXPECT_LT(diff, kTolerance);
  const auto h = final_hashes(two, 2);
  ASSERT_FALSE(h[0].empty());
  EXPECT_EQ(h[0], h[1]);
  EXPECT_TRUE(fs::exists(checkpoint(two, 3) / "optimizer_rank1.pt"));
  EXPECT_FALSE(fs::exists(checkpoint(two, 3) / "optimizer.pt"));
}

TEST(DistributedTraining, ShardedCheckpointRefusesAnotherWorldSize) {
  const auto dir = out_dir("refuse");
  auto r = train(2, 29668, dir, "dist.shard_optimizer=true --stop-after 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(1, 0, dir, "dist.shard_optimizer=true --resume auto");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sharded over 2 ranks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--nproc-per-node 2"), std::string::npos) << r.output;
}

TEST(DistributedTraining, UnshardedCheckpointResumesWithAnotherWorldSize) {
  const auto dir = out_dir("reshape");
  auto r = train(2, 29670, dir, "--stop-after 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = train(1, 0, dir, "--resume auto");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto state = nlohmann::json::parse(read(checkpoint(dir, 3) / "trainer_state.json"));
  EXPECT_EQ(state["iteration"].get<int>(), 3);
  EXPECT_EQ(state["counters"]["optimizer_steps"].get<int>(), 3);
}

}  // namespace
}  // namespace agentrl
