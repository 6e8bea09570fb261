// Model throughput: forward-only and forward+backward tokens/s (and achieved
// GFLOP/s) for a tiny config and the Qwen2.5-0.5B shape with random weights,
// next to the machine's measured matmul GFLOP/s.
//
//   ninja -C build model_bench && build/model_bench
//
// Shapes: arg 0 = tiny (hidden 256, 4 layers, 4/2 heads, inter 768, vocab
// 4096); arg 1 = Qwen2.5-0.5B (896, 24, 14/2, 4864, 151936).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "agentrl/model/logprobs.h"
#include "agentrl/model/transformer.h"
#include "bench_models.h"

using namespace agentrl::model;

namespace {

using agentrl::bench::model_for;
using agentrl::bench::shape;

void BM_Matmul(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  auto a = torch::randn({M, K}), b = torch::randn({K, N});
  for (auto _ : state) benchmark::DoNotOptimize(torch::matmul(a, b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * M * K * N * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Matmul)->UseRealTime()->Args({512, 896, 4864})->Args({512, 4864, 896})->Args({1, 896, 4864})->Unit(benchmark::kMillisecond);

// Forward (and backward) over B x T tokens, loss = sum of chunked log-probs.
void run_model(benchmark::State& state, bool backward) {
  const int64_t which = state.range(0), B = state.range(1), T = state.range(2);
  auto& m = model_for(which);
  auto ids = torch::randint(m->args().vocab_size, {B, T}, torch::kInt64);
  auto mask = torch::ones({B, T}, torch::kBool);
  auto pos = position_ids_from_mask(mask);
  for (auto _ : state) {
    if (backward) {
      auto st = logprobs_and_entropy(m, ids, mask, pos);
      st.logprobs.sum().backward();
      m->zero_grad();
    } else {
      torch::NoGradGuard g;
      benchmark::DoNotOptimize(logprobs_and_entropy(m, ids, mask, pos).logprobs);
    }
  }
  const double flops = forward_flops_per_token(m->args(), T / 2) * B * T * (backward ? 3.0 : 1.0);
  state.counters["tokens/s"] = benchmark::Counter(double(B * T) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
void BM_Forward(benchmark::State& s) { run_model(s, false); }
void BM_ForwardBackward(benchmark::State& s) { run_model(s, true); }
BENCHMARK(BM_Forward)->UseRealTime()->Args({0, 4, 256})->Args({1, 1, 256})->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ForwardBackward)->UseRealTime()->Args({0, 4, 256})->Args({1, 1, 256})->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
