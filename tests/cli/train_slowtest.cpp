// End-to-end training through the binary: bit-exact resume (including
// kill -9), SIGTERM, config-change refusal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"

namespace fs = std::filesystem;

namespace agentrl {
namespace {

using testing::run_agentrl;

const std::string kConfig = std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml";

std::string out_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("agentrl_train_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d.string();
}

std::string args(const std::string& dir, const std::string& extra = "") {
  return "train " + kConfig + " runtime.output_dir=" + dir + " " + extra;
}

// Metrics per step without the wall-clock dependent keys.
std::vector<std::string> metric_lines(const std::string& run_dir) {
  std::ifstream in(fs::path(run_dir) / "metrics.jsonl");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    nlohmann::json k;
    for (auto& [key, v] : j.items())
      if (key != "wall_time" && key.rfind("time/", 0) != 0 && key.find("_s") == std::string::npos &&
          key.find("per_s") == std::string::npos)
        k[key] = v;
    out.push_back(k.dump());
  }
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string final_weights(const std::string& run_dir) {
  return read(fs::path(run_dir) / "checkpoints" / "step_000004" / "model" / "model.safetensors");
}

TEST(Training, ResumedRunIsBitIdenticalToAnUninterruptedOne) {
  const auto a = out_dir("straight"), b = out_dir("resumed");
  auto r = run_agentrl(args(a));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_agentrl(args(b, "--stop-after 2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_agentrl(args(b, "--resume auto"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto wa = final_weights(a + "/tiny"), wb = final_weights(b + "/tiny");
  ASSERT_FALSE(wa.empty());
  EXPECT_TRUE(wa == wb) << "final parameters differ";
  EXPECT_EQ(metric_lines(a + "/tiny"), metric_lines(b + "/tiny"));
}

TEST(Training, Bf16RunUpdatesAndResumesBitIdentically) {
  // bf16 compute weights with fp32 masters: checkpoints store the masters in
  // float32, so a resumed run equals the uninterrupted one bit for bit. The
  // device is saved as written (auto), not as this process resolved it.
  const auto a = out_dir("bf16_straight"), b = out_dir("bf16_resumed");
  const std::string extra = "model.dtype=bfloat16 model.device=auto";
  auto r = run_agentrl(args(a, extra));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fp32 master weights"), std::string::npos) << r.output;
  r = run_agentrl(args(b, extra + " --stop-after 2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_agentrl(args(b, extra + " --resume auto"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto wa = final_weights(a + "/tiny"), wb = final_weights(b + "/tiny");
  ASSERT_FALSE(wa.empty());
  EXPECT_TRUE(wa == wb) << "final parameters differ";
  EXPECT_EQ(metric_lines(a + "/tiny"), metric_lines(b + "/tiny"));
  const auto ck = fs::path(a) / "tiny" / "checkpoints";
  EXPECT_FALSE(read(ck / "step_000001" / "model" / "model.safetensors") == wa) << "RL did not change the weights";
  EXPECT_NE(read(ck / "step_000004" / "model" / "config.json").find("\"torch_dtype\": \"float32\""), std::string::npos);
  EXPECT_NE(read(ck / "step_000004" / "config.yaml").find("device: auto"), std::string::npos);
}

TEST(Training, RolloutDumpOfARunFeedsAgentrlAdvantages) {
  // The documented path: runs/NAME/rollouts/iter_N.jsonl (the trainer's
  // writer) read back by `agentrl advantages` (the same serializer's reader).
  const auto d = out_dir("dump");
  ASSERT_EQ(run_agentrl(args(d, "trainer.iterations=1")).exit_code, 0);
  const auto dump = fs::path(d) / "tiny" / "rollouts" / "iter_1.jsonl";
  ASSERT_TRUE(fs::exists(dump));
  int turns = 0;
  {
    std::ifstream in(dump);
    std::string line;
    while (std::getline(in, line)) turns += static_cast<int>(nlohmann::json::parse(line).at("turns").size());
  }
  ASSERT_GT(turns, 0);
  auto r = run_agentrl("advantages " + dump.string() + " --estimator empg --no-filters");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int steps = 0;
  std::istringstream out(r.output);
  std::string line;
  while (std::getline(out, line))
    if (line.find("\"advantage\"") != std::string::npos) ++steps;
  EXPECT_EQ(steps, turns) << r.output;
}

TEST(Training, KillNineAtARandomMomentThenResumeIsBitIdentical) {
  const auto a = out_dir("ref9"), b = out_dir("kill9");
  ASSERT_EQ(run_agentrl(args(a)).exit_code, 0);
  std::mt19937 gen(static_cast<unsigned>(::getpid()));
  const int delay_ms = 1500 + static_cast<int>(gen() % 4000);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string bin = std::string(AGENTRL_BINARY_DIR) + "/agentrl";
    const std::string od = "runtime.output_dir=" + b;
    ::freopen("/dev/null", "w", stdout);
    ::execl(bin.c_str(), bin.c_str(), "train", kConfig.c_str(), od.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  ::kill(pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  auto r = run_agentrl(args(b, "--resume auto"));
  ASSERT_EQ(r.exit_code, 0) << "killed after " << delay_ms << " ms\n" << r.output;
  EXPECT_TRUE(final_weights(a + "/tiny") == final_weights(b + "/tiny")) << "killed after " << delay_ms << " ms";
  EXPECT_EQ(metric_lines(a + "/tiny"), metric_lines(b + "/tiny")) << "killed after " << delay_ms << " ms";
}

TEST(Training, SigtermWritesACheckpointAndExitsZero) {
  const auto d = out_dir("sigterm");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string bin = std::string(AGENTRL_BINARY_DIR) + "/agentrl";
    const std::string od = "runtime.output_dir=" + d;
    ::freopen("/dev/null", "w", stdout);
    ::execl(bin.c_str(), bin.c_str(), "train", kConfig.c_str(), od.c_str(), "trainer.iterations=1000",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until RL is running (first RL checkpoint exists), then SIGTERM.
  const auto ck = fs::path(d) / "tiny" / "checkpoints";
  for (int i = 0; i < 600 && !fs::exists(ck / "step_000001"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGTERM);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
  auto state = nlohmann::json::parse(read(fs::path(ck) / read(ck / "latest").substr(0, 11) / "trainer_state.json"));
  EXPECT_GE(state["iteration"].get<int>(), 1);
  EXPECT_LT(state["iteration"].get<int>(), 1000);
}

TEST(Training, ResumeWithAChangedConfigIsRefusedNamingTheKey) {
  const auto d = out_dir("changed");
  ASSERT_EQ(run_agentrl(args(d, "--stop-after 1")).exit_code, 0);
  auto r = run_agentrl(args(d, "--resume auto rollout.group_size=3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rollout.group_size: checkpoint has 2, this run has 3"), std::string::npos) << r.output;
  // Allowed keys may change.
  r = run_agentrl(args(d, "--resume auto trainer.iterations=2"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(Training, FreshRunRefusesToOverwriteExistingCheckpoints) {
  const auto d = out_dir("overwrite");
  ASSERT_EQ(run_agentrl(args(d, "--stop-after 1")).exit_code, 0);
  auto r = run_agentrl(args(d));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("already has checkpoints"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace agentrl
