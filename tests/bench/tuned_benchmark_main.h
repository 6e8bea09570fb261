// The main() of a Google Benchmark binary whose process tunes glibc malloc as
// the agentrl binary does (core/malloc_tuning.h; AGENTRL_MALLOC_TUNING=0 keeps
// glibc's defaults). Without the tuning the first steps of a large batch pay
// a page fault per 4 KiB of their activations, which training and rollouts
// inside `agentrl train` do not (docs/benchmarks.md, "Engine prefill in
// blocks of rows"). Use: AGENTRL_TUNED_BENCHMARK_MAIN() in place of
// BENCHMARK_MAIN(), once per binary.
#pragma once

#include <benchmark/benchmark.h>

#include "agentrl/core/malloc_tuning.h"

#define AGENTRL_TUNED_BENCHMARK_MAIN()                                  \
  int main(int argc, char** argv) {                                     \
    agentrl::tune_malloc_for_tensor_reuse();                            \
    benchmark::Initialize(&argc, argv);                                 \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;   \
    benchmark::RunSpecifiedBenchmarks();                                \
    benchmark::Shutdown();                                              \
    return 0;                                                           \
  }
