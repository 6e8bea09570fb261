// The real trainer in a two-rank run over a fake c10d backend (the other rank
// mirrors this one) that records every tensor handed to a collective and
// rejects those not on the group's device. On this CPU-only machine the
// group's device is the host, so what the test shows is that every collective
// of Trainer::run goes through ProcessGroup's checked API (statistics as
// float64 host values, gradients as float32 buckets, parameters broadcast and
// hashed) and that the run completes; a wrong device would fail the first
// call, as it does in ProcessGroupDevices.ATensorOnAnotherDeviceIsRefused...
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "agentrl/model/lora.h"
#include "agentrl/train/policy.h"
#include "agentrl/train/trainer.h"
#include "dist/fake_backend.h"

namespace fs = std::filesystem;

namespace agentrl::train {
namespace {

// Sets the launcher's variables of rank 0 of 2 for the test's lifetime.
struct RankZeroOfTwo {
  RankZeroOfTwo() {
    ::setenv("RANK", "0", 1);
    ::setenv("WORLD_SIZE", "2", 1);
    ::setenv("LOCAL_RANK", "0", 1);
  }
  ~RankZeroOfTwo() {
    for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK"}) ::unsetenv(v);
  }
};

// Runs the trainer as rank 0 of 2 over a MirrorBackend; returns the backend
// (with its record of calls), null if the trainer never made a group; the
// run's summary into `summary` when given.
c10::intrusive_ptr<dist::testing::MirrorBackend> run_over_mirror(const ExperimentConfig& cfg,
                                                                  TrainSummary* summary = nullptr) {
  c10::intrusive_ptr<dist::testing::MirrorBackend> backend;
  TrainOptions opt;
  opt.make_process_group = [&](const dist::Rendezvous& rv, torch::Device device, std::chrono::milliseconds) {
    backend = c10::make_intrusive<dist::testing::MirrorBackend>(device);
    return std::make_unique<dist::ProcessGroup>(backend, rv.rank, rv.world_size, device, "mirror");
  };
  Trainer trainer(cfg, opt);
  const auto s = trainer.run();
  EXPECT_EQ(s.iterations_done, 2);
  if (summary) *summary = s;
  return backend;
}

TEST(TrainerOverAFakeGroup, EveryCollectiveOfATwoRankRunIsOnTheGroupsDevice) {
  RankZeroOfTwo env;
  const auto dir = fs::temp_directory_path() / ("agentrl_fake_group_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto cfg = load_experiment_config(std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml",
                                    {"runtime.output_dir=" + dir.string(), "trainer.iterations=2",
                                     "model.dtype=bfloat16"});
  auto backend = run_over_mirror(cfg);
  ASSERT_TRUE(backend);
  std::map<std::string, int> ops;
  int statistics = 0, fp32_buckets = 0;
  for (const auto& c : backend->calls) {
    EXPECT_EQ(c.device, torch::Device(torch::kCPU)) << c.op;
    ++ops[c.op];
    if (c.op == "allreduce" && c.dtype == torch::kFloat64) ++statistics;
    if (c.op == "allreduce" && c.dtype == torch::kFloat32) ++fp32_buckets;
  }
  EXPECT_GT(statistics, 10) << "batch statistics and flags are all-reduced as float64 host values";
  EXPECT_GT(fp32_buckets, 0) << "the gradients of the bf16 policy are all-reduced as its fp32 masters' buckets";
  EXPECT_GT(ops["broadcast"], 0) << "the initial parameters are broadcast";
  EXPECT_GT(ops["allgather"], 0) << "the parameter hashes are compared";
  EXPECT_GT(ops["barrier"], 0);
  fs::remove_all(dir);
}

TEST(TrainerOverAFakeGroup, ALoraRunReducesAndShardsTheAdaptersOnly) {
  // With model.lora only the adapters' gradients are summed over ranks (the
  // frozen base has none). (ZeRO-1 over the adapters needs both ranks' files:
  // DistributedTraining.ShardedTwoRankLoraRunMatchesOneRank.)
  RankZeroOfTwo env;
  const auto dir = fs::temp_directory_path() / ("agentrl_fake_group_lora_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto cfg = load_experiment_config(std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml",
                                    {"runtime.output_dir=" + dir.string(), "trainer.iterations=2",
                                     "model.lora.enabled=true", "model.lora.rank=2"});
  int64_t adapter_elements = 0, model_elements = 0;
  {
    model::TransformerLM m(cfg.model.init.to_args(100));
    for (const auto& p : m->parameters()) model_elements += p.numel();
    model::attach_lora(*m, lora_options(cfg));
    for (const auto& p : model::lora_parameters(*m)) adapter_elements += p.numel();
  }
  TrainSummary summary;
  auto backend = run_over_mirror(cfg, &summary);
  ASSERT_TRUE(backend);
  int64_t reduced = 0;
  for (const auto& c : backend->calls)
    if ((c.op == "allreduce" || c.op == "reduce") && c.dtype == torch::kFloat32) reduced += c.numel;
  ASSERT_GT(adapter_elements, 0);
  EXPECT_GT(reduced, 0);
  EXPECT_EQ(reduced % adapter_elements, 0) << reduced << " gradient elements reduced, adapters have "
                                           << adapter_elements << " (the model " << model_elements << ")";
  EXPECT_LE(reduced / adapter_elements, 2 * cfg.actor.ppo_epochs * cfg.actor.mini_batches)
      << "at most one reduction of the adapters per optimizer step";
  EXPECT_TRUE(fs::exists(fs::path(summary.last_checkpoint) / "adapter" / "adapter_model.safetensors"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace agentrl::train
