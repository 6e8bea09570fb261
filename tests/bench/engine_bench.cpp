// Generation engine throughput: prefill tokens/s and decode tokens/s at batch
// 1, 8, 32, 64 for the tiny config and the Qwen2.5-0.5B shape (random
// weights), vs a naive loop without KV cache, and the pure matmul time of one
// decode step (all weight matrices applied to B rows).
//
//   ninja -C build engine_bench && build/engine_bench
//
// Args: {shape (0 tiny, 1 = 0.5B), batch, new tokens}. Prompts are 64 tokens.
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "../../src/model/few_rows_linear.h"
#include "../../src/model/infer_kernels.h"
#include "agentrl/model/intra_op_team.h"
#include "agentrl/model/sampler.h"
#include "agentrl/rollout/generation_engine.h"
#include "bench_models.h"
#include "tuned_benchmark_main.h"

using namespace agentrl;
using namespace agentrl::model;

namespace {

using agentrl::bench::model_for;
using agentrl::bench::shape;

constexpr int64_t kPrompt = 64;
constexpr double kPrefillSeconds = 0.5;  // run_engine's prefill calls, at least

std::vector<rollout::GenerationRequest> requests(int64_t B, int64_t n, int64_t vocab, int64_t prompt = kPrompt) {
  std::vector<rollout::GenerationRequest> rs;
  for (int64_t b = 0; b < B; ++b) {
    rollout::GenerationRequest r;
    for (int64_t i = 0; i < prompt; ++i) r.prompt.push_back(static_cast<int32_t>((b * 131 + i * 7) % vocab));
    r.max_new_tokens = n;
    r.sampling.temperature = 0;
    rs.push_back(r);
  }
  return rs;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void run_engine(benchmark::State& state, bool static_shapes, bool fused = true) {
  const int64_t which = state.range(0), B = state.range(1), n = state.range(2);
  auto& m = model_for(which);
  rollout::EngineOptions o;
  o.static_decode_shapes = static_shapes;
  o.fused_kernels = fused;
  o.max_batch_size = B;
  o.max_seq_len = kPrompt + n + 1;
  o.kv_budget_tokens = (B + (static_shapes ? 1 : 0)) * o.max_seq_len;  // + the pad rows' slot
  o.prefill_chunk_tokens = B * kPrompt;  // whole batch prefilled in one step
  rollout::GenerationEngine e(m, nullptr, o, {-1});  // no EOS: always n tokens
  double prefill = 0, total = 0;
  // Untimed warm-up: the engine thread's first step pays one-time costs
  // (its OpenMP team, first allocations) that are not prefill.
  e.generate_batch(requests(B, 2, m->args().vocab_size));
  for (auto _ : state) {
    // The prefill (+ its one token) repeated for at least kPrefillSeconds:
    // one call of a few ms is noise on a shared VM. The Python reference
    // times its prefill the same way (python_generate_ref.py).
    int64_t calls = 0;
    const double t0 = now_s();
    double t1 = t0;
    do {
      e.generate_batch(requests(B, 1, m->args().vocab_size));
      ++calls;
      t1 = now_s();
    } while (t1 - t0 < kPrefillSeconds);
    e.generate_batch(requests(B, n, m->args().vocab_size));
    const double t2 = now_s();
    prefill += (t1 - t0) / static_cast<double>(calls);
    total += t2 - t1;
  }
  const double it = static_cast<double>(state.iterations());
  state.counters["prefill_tok/s"] = B * kPrompt * it / prefill;
  state.counters["decode_tok/s"] = B * (n - 1) * it / std::max(1e-9, total - prefill);
  state.counters["step_ms"] = 1e3 * (total - prefill) / it / (n - 1);
}
void BM_Engine(benchmark::State& state) { run_engine(state, false); }
// engine.static_decode_shapes: what the padding costs where nothing replays
// a captured graph (batch 5 pads to 8, 33 to 64).
void BM_EngineStaticShapes(benchmark::State& state) { run_engine(state, true); }
BENCHMARK(BM_Engine)->Args({0, 5, 64})->Args({0, 33, 64})->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_EngineStaticShapes)->Args({0, 5, 64})->Args({0, 33, 64})->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Engine)
    ->Args({0, 1, 64})->Args({0, 8, 64})->Args({0, 32, 64})->Args({0, 64, 64})
    ->Args({1, 1, 8})->Args({1, 8, 8})->Args({1, 32, 4})->Args({1, 64, 4})
    ->Iterations(1)->Unit(benchmark::kSecond);
// Prefill of long prompts (the contexts of WebShop's and ALFWorld's CPU
// recipes), where attention is a large share of the step. Args: {shape,
// batch, prompt tokens}; prefill + one token, the whole batch in one step.
// AGENTRL_ATTENTION=eager gives the explicit attention path for a ratio.
void BM_EnginePrefill(benchmark::State& state) {
  const int64_t which = state.range(0), B = state.range(1), P = state.range(2);
  auto& m = model_for(which);
  rollout::EngineOptions o;
  o.max_batch_size = B;
  o.max_seq_len = P + 2;
  o.kv_budget_tokens = B * o.max_seq_len;
  o.prefill_chunk_tokens = B * P;
  rollout::GenerationEngine e(m, nullptr, o, {-1});
  e.generate_batch(requests(B, 1, m->args().vocab_size, 16));  // warm-up, as run_engine's
  double prefill = 0;
  for (auto _ : state) {
    const double t0 = now_s();
    e.generate_batch(requests(B, 1, m->args().vocab_size, P));
    prefill += now_s() - t0;
  }
  state.counters["prefill_tok/s"] = static_cast<double>(B * P * state.iterations()) / prefill;
}
BENCHMARK(BM_EnginePrefill)
    ->UseRealTime()->Args({2, 1, 2048})->Args({2, 4, 1024})->Args({0, 1, 2048})->Args({0, 8, 512})->Args({0, 8, 64})
    ->Iterations(3)->Unit(benchmark::kMillisecond);
// engine.fused_kernels: false, the ATen ops only (the engine before the fused
// CPU kernels), for a side-by-side ratio in one run.
void BM_EngineAten(benchmark::State& state) { run_engine(state, false, false); }
BENCHMARK(BM_EngineAten)
    ->Args({0, 1, 64})->Args({0, 8, 64})->Args({0, 32, 64})->Args({0, 64, 64})->Args({1, 1, 8})->Args({1, 8, 8})
    ->Iterations(1)->Unit(benchmark::kSecond);

// Naive loop: full forward over the whole [B, T] batch for every new token.
void BM_NaiveNoCache(benchmark::State& state) {
  const int64_t which = state.range(0), B = state.range(1), n = state.range(2);
  auto& m = model_for(which);
  torch::NoGradGuard g;
  for (auto _ : state) {
    auto ids = torch::randint(m->args().vocab_size, {B, kPrompt}, torch::kInt64);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t T = ids.size(1);
      auto pos = torch::arange(T).unsqueeze(0).expand({B, T});
      auto h = m->forward_hidden(ids, pos, torch::ones({B, T}, torch::kBool));
      auto next = m->logits(h.select(1, T - 1)).argmax(-1, true);
      ids = torch::cat({ids, next}, 1);
    }
  }
  state.counters["decode_tok/s"] = benchmark::Counter(double(B * n) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NaiveNoCache)->UseRealTime()->Args({0, 8, 64})->Args({1, 8, 4})->Iterations(1)->Unit(benchmark::kSecond);

// Pure matmul time of one decode step: every weight matrix times B rows,
// through torch::matmul (BM_DecodeMatmulFloor) or through the engine's
// few-row kernel (BM_DecodeFewRowsFloor, few_rows_linear.h: it reads each
// weight once where OpenBLAS's sgemm packs it first).
void decode_floor(benchmark::State& state, bool few_rows) {
  const int64_t which = state.range(0), B = state.range(1);
  auto& m = model_for(which);
  std::vector<torch::Tensor> ws;
  for (auto& p : m->named_parameters())
    if (p.value().dim() == 2 && p.key().find("embed_tokens") == std::string::npos) ws.push_back(p.value());
  ws.push_back(m->lm_head_weight());
  torch::NoGradGuard g;
  std::vector<torch::Tensor> xs;
  for (auto& w : ws) xs.push_back(torch::randn({B, w.size(1)}));
  for (auto _ : state)
    for (size_t i = 0; i < ws.size(); ++i)
      benchmark::DoNotOptimize(few_rows ? model::detail::few_rows_linear(xs[i], ws[i], {})
                                        : torch::matmul(xs[i], ws[i].t()));
}
void BM_DecodeMatmulFloor(benchmark::State& state) { decode_floor(state, false); }
void BM_DecodeFewRowsFloor(benchmark::State& state) { decode_floor(state, true); }
BENCHMARK(BM_DecodeMatmulFloor)
    ->UseRealTime()->ArgsProduct({{0}, {1, 8, 16, 32, 64}})->ArgsProduct({{1}, {1, 8, 16}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeFewRowsFloor)
    ->UseRealTime()->ArgsProduct({{0}, {1, 8, 16, 32, 64}})->ArgsProduct({{1}, {1, 8, 16}})
    ->Unit(benchmark::kMillisecond);

// One product [M, K] x [N, K]^T: the few-row kernel (kernel = 1) against
// torch::linear (0). {896, 896}: a 0.5B-shape q/o projection, which stays
// in cache from one call to the next; {151936, 896}: the 0.5B lm head, read
// from memory each call.
void BM_FewRowsLinear(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1), M = state.range(2);
  auto w = torch::randn({N, K});
  auto x = torch::randn({M, K});
  torch::NoGradGuard g;
  for (auto _ : state)
    benchmark::DoNotOptimize(state.range(3) ? model::detail::few_rows_linear(x, w, {})
                                            : torch::nn::functional::linear(x, w));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(M * N * K) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FewRowsLinear)
    ->UseRealTime()
    ->ArgsProduct({{896}, {896}, {1, 8, 16, 64}, {0, 1}})
    ->ArgsProduct({{151936}, {896}, {1, 8}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// The MLP's SiLU gate, silu(gate) * up, on [rows, width]: the engine's fused
// kernel (fused = 1) against ATen's silu and mul (0), side by side. {512,
// 4864} is a 0.5B-shape prefill of 8 x 64 tokens, per layer.
void BM_SiluMul(benchmark::State& state) {
  const int64_t R = state.range(0), W = state.range(1);
  torch::manual_seed(0);
  auto g = torch::randn({R, W}) * 3, u = torch::randn({R, W});
  torch::NoGradGuard ng;
  for (auto _ : state)
    benchmark::DoNotOptimize(state.range(2) ? model::detail::silu_mul(g, u) : torch::silu(g) * u);
}
BENCHMARK(BM_SiluMul)->UseRealTime()->Args({512, 4864, 0})->Args({512, 4864, 1})->Args({64, 1024, 0})
    ->Args({64, 1024, 1})->Unit(benchmark::kMicrosecond);

// The host sampler on one step's logits (model::sample_rows: max, log-sum-exp,
// entropy and the draw per row), and the lm head that produces them, for a
// row count and vocabulary. Args: {V, rows, sampled (temperature 1) or
// greedy (0)}. At the 0.5B shape's V both are part of the decode step's time
// over its matmul floor.
void BM_SampleRows(benchmark::State& state) {
  const int64_t V = state.range(0), S = state.range(1);
  torch::manual_seed(0);
  auto logits = torch::randn({S, V}) * 3;
  std::vector<SamplerParams> ps(static_cast<size_t>(S));
  for (auto& p : ps) p.temperature = state.range(2) ? 1.0 : 0.0;
  std::vector<Rng> rngs;
  for (int64_t i = 0; i < S; ++i) rngs.emplace_back(static_cast<uint64_t>(i));
  std::vector<Rng*> rp;
  for (auto& r : rngs) rp.push_back(&r);
  for (auto _ : state) benchmark::DoNotOptimize(sample_rows(logits, ps, rp));
}
BENCHMARK(BM_SampleRows)->UseRealTime()->Args({151936, 1, 0})->Args({151936, 8, 0})->Args({151936, 8, 1})
    ->Args({4096, 64, 0})->Args({4096, 64, 1})->Unit(benchmark::kMillisecond);

}  // namespace

// Tensor ops of one decode step at batch B (issue #20: the count must not
// grow with B): top-level ATen calls (those the engine and the model issue,
// not the ones an op makes inside its kernel, e.g. the CPU bmm's per-matrix
// loop) and all calls, counted by a RecordFunction observer over a run of 3
// new tokens minus a run of 2 (same prefill), on the tiny config.
// With AGENTRL_BENCH_OP_NAMES=1 the top-level ops of the step are also
// printed by name (to stderr), to see which ones a step spends.
std::atomic<int64_t> g_ops{0}, g_top_ops{0};
thread_local int g_depth = 0;
bool g_profile = false;  // set once before the observer is added: names and times only when asked for
std::mutex g_names_mu;
std::map<std::string, int64_t> g_names;
std::map<std::string, double> g_seconds;  // time inside each top-level op, by name

struct OpStart : at::ObserverContext {
  double t = 0;
};

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  ++g_ops;
  if (g_depth++ == 0) {
    ++g_top_ops;
    if (!g_profile) return nullptr;
    std::lock_guard<std::mutex> g(g_names_mu);
    ++g_names[fn.name()];
    auto c = std::make_unique<OpStart>();
    c->t = now_s();
    return c;
  }
  return nullptr;
}
void on_op_end(const at::RecordFunction& fn, at::ObserverContext* c) {
  --g_depth;
  if (c) {
    std::lock_guard<std::mutex> g(g_names_mu);
    g_seconds[fn.name()] += now_s() - static_cast<OpStart*>(c)->t;
  }
}

// Per decode step: top-level ops by name with their count and time, from a
// run of 2 + kSteps new tokens minus a run of 2 (same prefill), and the
// step's wall time; what is not inside ops is the engine's own host work.
void print_step_profile(rollout::GenerationEngine& e, int64_t B, int64_t vocab) {
  constexpr int64_t kSteps = 16;
  std::map<std::string, int64_t> n[2];
  std::map<std::string, double> sec[2];
  double wall[2];
  for (int run = 0; run < 2; ++run) {
    g_names.clear();
    g_seconds.clear();
    const double t0 = now_s();
    e.generate_batch(requests(B, run == 0 ? 2 : 2 + kSteps, vocab));
    wall[run] = now_s() - t0;
    n[run].swap(g_names);
    sec[run].swap(g_seconds);
  }
  double in_ops = 0;
  for (const auto& [name, count] : n[1]) {
    const double us = 1e6 * (sec[1][name] - sec[0][name]) / kSteps;
    in_ops += us;
    std::fprintf(stderr, "batch %ld: %6.1f %8.1f us %s\n", static_cast<long>(B),
                 static_cast<double>(count - n[0][name]) / kSteps, us, name.c_str());
  }
  std::fprintf(stderr, "batch %ld: step %.1f us, inside top-level ops %.1f us\n", static_cast<long>(B),
               1e6 * (wall[1] - wall[0]) / kSteps, in_ops);
}

// Args: {batch, engine.fused_kernels (1) or the ATen ops (0)}.
void BM_DecodeStepOps(benchmark::State& state) {
  const int64_t B = state.range(0);
  auto& m = model_for(0);
  rollout::EngineOptions o;
  o.fused_kernels = state.range(1) != 0;
  o.max_batch_size = B;
  o.max_seq_len = kPrompt + 20;  // room for print_step_profile's 18 tokens
  o.kv_budget_tokens = B * o.max_seq_len;
  o.prefill_chunk_tokens = B * kPrompt;
  rollout::GenerationEngine e(m, nullptr, o, {-1});
  const char* dump = std::getenv("AGENTRL_BENCH_OP_NAMES");
  g_profile = dump && std::string(dump) == "1";
  auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_op_start, on_op_end).scopes({at::RecordScope::FUNCTION}));
  int64_t all = 0, top = 0;
  for (auto _ : state) {
    g_ops = g_top_ops = 0;
    e.generate_batch(requests(B, 2, m->args().vocab_size));
    const int64_t all2 = g_ops.exchange(0), top2 = g_top_ops.exchange(0);
    e.generate_batch(requests(B, 3, m->args().vocab_size));
    all = g_ops.load() - all2;
    top = g_top_ops.load() - top2;
  }
  if (g_profile) print_step_profile(e, B, m->args().vocab_size);
  at::removeCallback(handle);
  state.counters["top_level_ops"] = static_cast<double>(top);
  state.counters["all_ops"] = static_cast<double>(all);
}
BENCHMARK(BM_DecodeStepOps)
    ->Args({1, 1})->Args({8, 1})->Args({64, 1})->Args({1, 0})->Args({8, 0})->Args({64, 0})
    ->Iterations(1)->Unit(benchmark::kMillisecond);

// One small parallel region (2 items of ~2k multiply-adds each, as a
// tiny-shape norm or attention call) run by a second thread, as the engine's
// loop runs its step, while the main thread keeps its own OpenMP team
// (second_team = 1: the trainer's thread before this commit) or has freed it
// (0: release_intra_op_team, as the engine's callers now do). libgomp spins
// its workers between regions only while it manages no more threads than
// there are cores (agentrl/model/intra_op_team.h). Args: {second_team}.
void BM_ParallelRegion(benchmark::State& state) {
  at::parallel_for(0, 64, 1, [](int64_t, int64_t) {});  // the main thread's team
  if (state.range(0) == 0) model::release_intra_op_team();
  std::thread loop([&state] {
    float sums[2] = {0, 0};
    for (auto _ : state) {
      at::parallel_for(0, 2, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          for (int k = 0; k < 2048; ++k) sums[i] += static_cast<float>(k) * 0.5f;
      });
      benchmark::DoNotOptimize(sums);
    }
  });
  loop.join();
}
BENCHMARK(BM_ParallelRegion)->UseRealTime()->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

AGENTRL_TUNED_BENCHMARK_MAIN()
