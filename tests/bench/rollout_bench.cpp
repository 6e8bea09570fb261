// Rollout throughput: episodes/s and the generation engine's busy fraction
// with 1, 4, 16, 64 concurrent episodes on ALFWorld and WebShop (built-in
// data), a tiny random policy (vocab 259 byte-level + ChatML, hidden 128,
// 2 layers) on CPU, window context as in configs/base/env_*.yaml.
//
//   ninja -C build rollout_bench && build/rollout_bench
//
// Args: {env (0 alfworld, 1 webshop), concurrency C, mode (0 throughput, 1 lock-step)}.
// One iteration = pool runs of C episodes each (so exactly C are in flight),
// at least 8 episodes in all; episodes have at most 5 turns x 16 new tokens
// (a random policy never finishes a task: every episode runs all 5 turns).
// Counters: episodes_per_s (wall), busy_frac (engine busy_seconds / wall),
// env_frac (env time summed over episodes / wall), gen_tok_per_s,
// prefill_tok_per_s (prompt tokens computed, i.e. not served from the prefix
// cache), engine_steps_per_s, and cpu_s_per_episode (process CPU time:
// robust when the machine is shared).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "agentrl/envs/alfworld/alfworld_env.h"
#include "agentrl/envs/registry.h"
#include "agentrl/envs/webshop/webshop_env.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/rollout/rollout_pool.h"
#include "agentrl/text/chat_template.h"
#include "../rollout/rollout_test_support.h"

using namespace agentrl;

namespace {

constexpr int64_t kMaxTurns = 5, kNewTokens = 16;

model::TransformerLM& tiny_policy() {
  static model::TransformerLM m = testing::tiny_byte_policy(128, 384, /*seed=*/1, /*std=*/0.1);
  return m;
}

std::shared_ptr<envs::EnvSuite> suite_for(int64_t which) {
  static std::shared_ptr<envs::EnvSuite> suites[2];
  if (suites[which]) return suites[which];
  config::ExtensionSections sections;
  if (which == 0) {
    sections.as<envs::alfworld::AlfworldConfig>("alfworld").train_size = 256;
    suites[0] = envs::make_env_suite("alfworld", sections);
  } else {
    auto& c = sections.as<envs::webshop::WebshopConfig>("webshop");
    c.num_products = 1000;
    c.num_goals = 400;
    c.test_goals = 50;
    c.eval_goals = 50;
    c.index_dir = (std::filesystem::temp_directory_path() / "agentrl_rollout_bench_webshop").string();
    suites[1] = envs::make_env_suite("webshop", sections);
  }
  return suites[which];
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void BM_Rollout(benchmark::State& state) {
  const int64_t which = state.range(0), C = state.range(1);
  const bool lockstep = state.range(2) == 1;
  auto suite = suite_for(which);
  auto ctx = std::make_shared<rollout::AgentContext>();
  ctx->rollout.context_mode = "window";
  ctx->rollout.window_turns = 2;
  ctx->rollout.max_turns = kMaxTurns;
  ctx->rollout.max_new_tokens = kNewTokens;
  ctx->rollout.max_context_tokens = 4096;
  ctx->rollout.observation_token_budget = 256;
  ctx->rollout.concurrency = C;
  ctx->rollout.deterministic = lockstep;
  ctx->tokenizer = std::make_shared<testing::ByteTokenizer>();
  ctx->chat = text::ChatTemplate::create("chatml", ctx->tokenizer, "");
  rollout::EngineOptions o;
  o.max_batch_size = 64;
  o.max_seq_len = 4096;
  o.kv_budget_tokens = 2 * C * o.max_seq_len;  // room for every episode plus its kept previous turn
  rollout::GenerationEngine engine(tiny_policy(), ctx->tokenizer, o, ctx->chat->stop_token_ids());
  rollout::RolloutPool pool(engine, suite, ctx);

  // A pool run of C episodes has exactly C in flight (lock-step batches all
  // of a run's episodes); small C repeats runs so that an iteration covers
  // at least 8 episodes.
  const int64_t runs = std::max<int64_t>(1, 8 / C);
  double wall = 0, busy = 0, env = 0, cpu = 0;
  int64_t episodes = 0, turns = 0, tokens = 0, iteration = 0;
  const rollout::EngineStats start = engine.stats();
  for (auto _ : state) {
    for (int64_t run = 0; run < runs; ++run, ++iteration) {
      std::vector<envs::Task> tasks;
      for (int64_t i = 0; i < C; ++i)
        tasks.push_back(suite->tasks().get("train", static_cast<size_t>(iteration * C + i) % suite->tasks().size("train")));
      auto specs = rollout::make_group_episodes(tasks, 1, 7, iteration);
      const double busy0 = engine.stats().busy_seconds, cpu0 = process_cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      rollout::RolloutStats st;
      auto trajs = pool.run(specs, &st);
      wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      busy += engine.stats().busy_seconds - busy0;
      cpu += process_cpu_seconds() - cpu0;
      env += st.env_seconds;
      for (const auto& t : trajs) {
        if (t.failed) state.SkipWithError(("episode failed: " + t.error).c_str());
        turns += static_cast<int64_t>(t.turns.size());
        tokens += t.num_generated_tokens();
      }
      episodes += C;
    }
  }
  state.counters["episodes_per_s"] = episodes / wall;
  state.counters["busy_frac"] = busy / wall;
  state.counters["env_frac"] = env / wall;
  state.counters["turns_per_ep"] = static_cast<double>(turns) / episodes;
  state.counters["gen_tok_per_s"] = tokens / wall;
  state.counters["cpu_s_per_episode"] = cpu / episodes;
  const rollout::EngineStats end = engine.stats();
  state.counters["prefill_tok_per_s"] = (end.prefill_tokens - start.prefill_tokens) / wall;
  state.counters["engine_steps_per_s"] = (end.steps - start.steps) / wall;
  state.SetLabel(std::string(which == 0 ? "alfworld" : "webshop") + (lockstep ? " lock-step" : " throughput"));
}

void Args(benchmark::internal::Benchmark* b) {
  for (int64_t env : {0, 1})
    for (int64_t mode : {0, 1})
      for (int64_t c : {1, 4, 16, 64}) b->Args({env, c, mode});
  b->ArgNames({"env", "C", "lockstep"})->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime()->MeasureProcessCPUTime();
}
BENCHMARK(BM_Rollout)->Apply(Args);

}  // namespace

BENCHMARK_MAIN();
