// Code-tool sandbox benchmarks: interpreter start latency, executions/s with
// 1, 2 and 8 concurrent episodes, stateless (fresh sandbox per block) vs
// stateful (one interpreter per episode).
//
//   ./codetool_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include "agentrl/envs/codetool/sandbox.h"

namespace {

using agentrl::envs::codetool::PythonSession;
using agentrl::envs::codetool::run_python_once;
using agentrl::envs::codetool::SandboxConfig;

const char* kBlock = "x = sum(i * i for i in range(10000))\nprint(x)";

void BM_SandboxStart(benchmark::State& state) {
  SandboxConfig c;
  for (auto _ : state) {
    auto s = PythonSession::start(c);
    benchmark::DoNotOptimize(s.get());
  }
}
BENCHMARK(BM_SandboxStart)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StatelessExec(benchmark::State& state) {
  SandboxConfig c;
  for (auto _ : state) {
    auto r = run_python_once(c, kBlock);
    if (!r.ok) state.SkipWithError("execution failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StatelessExec)->Unit(benchmark::kMillisecond)->UseRealTime()->Threads(1)->Threads(2)->Threads(8);

void BM_StatefulExec(benchmark::State& state) {
  SandboxConfig c;
  auto s = PythonSession::start(c);
  for (auto _ : state) {
    auto r = s->execute(kBlock);
    if (!r.ok) state.SkipWithError("execution failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StatefulExec)->Unit(benchmark::kMillisecond)->UseRealTime()->Threads(1)->Threads(2)->Threads(8);

}  // namespace

BENCHMARK_MAIN();
