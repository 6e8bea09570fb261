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

TEST(Training, LoraRunTrainsOnlyAdaptersResumesBitIdenticallyAndExports) {
  // model.lora through the binary: SFT and RL train adapters on a frozen
  // base (the SFT adapters are folded into the base, so the KL reference,
  // adapters off, is the SFT policy); checkpoints hold adapter/ in PEFT's
  // format plus the from-scratch base; resume is bit-exact; export writes
  // the adapter (PEFT) or the merged model (HF), and eval loads a LoRA
  // checkpoint.
  const auto a = out_dir("lora_straight"), b = out_dir("lora_resumed");
  const std::string extra =
      "model.lora.enabled=true model.lora.rank=4 model.lora.alpha=8 trainer.keep_checkpoints=10 "
      "trainer.recompute_old_logprobs=true";
  auto r = run_agentrl(args(a, extra));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("LoRA: 7 adapted layers"), std::string::npos) << r.output;
  r = run_agentrl(args(b, extra + " --stop-after 2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_agentrl(args(b, extra + " --resume auto"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto ck = fs::path(a) / "tiny" / "checkpoints";
  const auto adapter = [](const fs::path& step) { return read(step / "adapter" / "adapter_model.safetensors"); };
  const auto last_a = adapter(ck / "step_000004");
  ASSERT_FALSE(last_a.empty());
  EXPECT_TRUE(last_a == adapter(fs::path(b) / "tiny" / "checkpoints" / "step_000004")) << "final adapters differ";
  EXPECT_EQ(metric_lines(a + "/tiny"), metric_lines(b + "/tiny"));
  EXPECT_FALSE(adapter(ck / "step_000001") == last_a) << "RL did not change the adapters";
  // The engine samples with the live (unmerged) adapters: its log-probs are
  // the trainer's recomputation to float rounding; the KL to the reference
  // (adapters off) grows from zero as the adapters move.
  int iterations = 0;
  double last_kl = 0;
  std::ifstream in(fs::path(a) / "tiny" / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("rollout/logprob_mismatch_max")) continue;
    ++iterations;
    EXPECT_LT(j["rollout/logprob_mismatch_max"].get<double>(), 1e-4) << line;
    last_kl = j["actor/kl"].get<double>();
  }
  EXPECT_EQ(iterations, 4);
  EXPECT_GT(last_kl, 0.0);
  EXPECT_TRUE(read(ck / "step_000000" / "model" / "model.safetensors") ==
              read(ck / "step_000004" / "model" / "model.safetensors"))
      << "RL changed the frozen base";
  EXPECT_FALSE(fs::exists(ck / "step_000004" / "ref_model")) << "the reference is the base, not a copy";
  EXPECT_NE(read(ck / "step_000004" / "adapter" / "adapter_config.json").find("\"peft_type\": \"LORA\""),
            std::string::npos);

  r = run_agentrl("export " + (ck / "step_000004").string() + " --format peft --out " + a + "/peft");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(read(fs::path(a) / "peft" / "adapter_model.safetensors") == last_a) << "PEFT export != checkpoint";
  r = run_agentrl("export " + (ck / "step_000004").string() + " --out " + a + "/merged");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto merged = read(fs::path(a) / "merged" / "model.safetensors");
  EXPECT_FALSE(merged.empty());
  EXPECT_EQ(merged.find("lora_"), std::string::npos) << "a merged export holds no adapter tensors";
  EXPECT_FALSE(merged == read(ck / "step_000004" / "model" / "model.safetensors")) << "adapters were not merged";
  r = run_agentrl("eval " + kConfig + " --model " + (ck / "step_000004").string() + " --episodes 2 --out " + a +
                  "/eval " + extra);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("LoRA: 7 adapted layers from"), std::string::npos) << r.output;
  // A run without LoRA has no adapter to export in PEFT's format.
  r = run_agentrl("export " + (fs::path(a) / "merged").string() + " --format peft --out " + a + "/y");
  EXPECT_NE(r.exit_code, 0);
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

TEST(Training, SigtermDuringSftStopsAtTheNextStepWithoutACheckpoint) {
  const auto d = out_dir("sigterm_sft");
  const std::string log = (fs::path(d) / "stdout.txt").string();
  fs::create_directories(d);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string bin = std::string(AGENTRL_BINARY_DIR) + "/agentrl";
    const std::string od = "runtime.output_dir=" + d;
    ::freopen(log.c_str(), "w", stdout);
    ::freopen(log.c_str(), "a", stderr);
    // An SFT stage of hours if it ran to its end.
    ::execl(bin.c_str(), bin.c_str(), "train", kConfig.c_str(), od.c_str(), "sft.enabled=true", "sft.epochs=100000",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 600 && read(log).find("SFT on ") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_NE(read(log).find("SFT on "), std::string::npos) << read(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // inside the SFT loop
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  int st = 0;
  ::waitpid(pid, &st, 0);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << read(log);
  EXPECT_LT(s, 30.0) << "SIGTERM waited for the SFT stage to end";
  EXPECT_NE(read(log).find("interrupted during SFT"), std::string::npos) << read(log);
  EXPECT_FALSE(fs::exists(fs::path(d) / "tiny" / "checkpoints" / "latest"));
  // The next run of the same command starts over rather than refusing.
  auto again = run_agentrl(args(d, "--stop-after 1 sft.enabled=true sft.epochs=1"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

TEST(Training, IterationsWithNothingToTrainStillEvaluateAndCheckpointOnSchedule) {
  // An untrained policy fails every episode: with DAPO's dynamic sampling
  // every group is filtered, so no iteration has anything to train on.
  const auto d = out_dir("all_filtered");
  auto r = run_agentrl(args(d, "sft.enabled=false algorithm.filters=[zero_variance] trainer.iterations=2 "
                               "trainer.save_every=2 rollout.max_turns=2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("iteration 2: no trainable trajectories"), std::string::npos) << r.output;
  const auto run = fs::path(d) / "tiny";
  EXPECT_TRUE(fs::exists(run / "checkpoints" / "step_000002")) << "the last iteration's checkpoint";
  EXPECT_NE(r.output.find("final eval success rate: "), std::string::npos) << r.output;
  std::ifstream in(run / "metrics.jsonl");
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const auto j = nlohmann::json::parse(last);
  EXPECT_EQ(j["step"].get<int>(), 2);
  EXPECT_TRUE(j.contains("eval/success_rate")) << last;
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
