// Integration: concurrent code-tool episodes (one env per thread, shared
// suite), as the rollout pool runs them.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "agentrl/envs/codetool/codetool_env.h"

namespace agentrl::envs::codetool {
namespace {

TEST(CodetoolConcurrency, EpisodesOnFourThreadsAreIndependent) {
  if (!probe_sandbox(SandboxConfig{}).available) GTEST_SKIP() << "bubblewrap unusable here";
  CodeToolConfig c;
  c.builtin_train = 4;
  c.builtin_test = 8;
  c.mode = "stateful";
  CodeToolSuite suite(c);
  std::atomic<int> solved{0}, state_ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto env = suite.make_env();
      for (size_t i = static_cast<size_t>(t); i < suite.size("test"); i += 4) {
        env->reset(suite.get("test", i), 0);
        // Each thread's interpreter holds its own variable.
        env->step("```python\nmine = " + std::to_string(t) + "\n```\n");
        StepResult probe = env->step("```python\nprint(mine)\n```\n");
        if (probe.observation == "\nCode execution result: " + std::to_string(t) + "\n") ++state_ok;
        StepResult r = env->step(*env->expert_action());
        if (r.done && r.reward == 1.0) ++solved;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(solved.load(), 8);
  EXPECT_EQ(state_ok.load(), 8);
}

}  // namespace
}  // namespace agentrl::envs::codetool
