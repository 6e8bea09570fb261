// Model throughput: forward-only and forward+backward tokens/s (and achieved
// GFLOP/s) for a tiny config and the Qwen2.5-0.5B shape with random weights,
// next to the machine's measured matmul GFLOP/s.
//
//   ninja -C build model_bench && build/model_bench
//
// BM_TrainStep is the quickstart's PPO micro-batch (shape 2): forward +
// backward of B x T tokens of which a loss mask of ~15% (spans of 24 tokens,
// like a multi-turn episode's generated commands) enters the loss, through
// the full forward (arg only = 0) or the loss rows' last layer and logits
// only (only = 1, LogprobOptions::only). The process tunes glibc malloc as
// the agentrl binary does (core/malloc_tuning.h) unless
// AGENTRL_MALLOC_TUNING=0: scripts/bench/train_step.sh runs both.
//
// Shapes: arg 0 = tiny (hidden 256, 4 layers, 4/2 heads, inter 768, vocab
// 4096); arg 1 = Qwen2.5-0.5B (896, 24, 14/2, 4864, 151936).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>

#include "agentrl/model/logprobs.h"
#include "agentrl/model/transformer.h"
#include "bench_models.h"
#include "tuned_benchmark_main.h"

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

// Forward (and backward) over B x T tokens, loss = sum of chunked log-probs;
// a fourth arg of 1 turns per-layer gradient checkpointing on; `fused`: the
// loss's fused CPU kernels (LogprobOptions::fused) or the ATen ops.
void run_model(benchmark::State& state, bool backward, bool fused = true) {
  const int64_t which = state.range(0), B = state.range(1), T = state.range(2);
  const bool checkpointing = state.range(3) != 0;
  auto& m = model_for(which);
  m->set_gradient_checkpointing(checkpointing);
  auto ids = torch::randint(m->args().vocab_size, {B, T}, torch::kInt64);
  auto mask = torch::ones({B, T}, torch::kBool);
  auto pos = position_ids_from_mask(mask);
  LogprobOptions o;
  o.fused = fused;
  auto step = [&] {
    if (backward) {
      auto st = logprobs_and_entropy(m, ids, mask, pos, o);
      st.logprobs.sum().backward();
      m->zero_grad();
    } else {
      torch::NoGradGuard g;
      benchmark::DoNotOptimize(logprobs_and_entropy(m, ids, mask, pos, o).logprobs);
    }
  };
  // Untimed warm-up: the first step faults in its activations' memory (the
  // tuned heap keeps it for the next steps), which is not the step's cost.
  step();
  for (auto _ : state) step();
  const double flops = forward_flops_per_token(m->args(), T / 2) * B * T * (backward ? 3.0 : 1.0);
  state.counters["tokens/s"] = benchmark::Counter(double(B * T) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  m->set_gradient_checkpointing(false);
}
void BM_Forward(benchmark::State& s) { run_model(s, false); }
void BM_ForwardBackward(benchmark::State& s) { run_model(s, true); }
// Args {shape, B, T, checkpointing}. The GFLOP/s counter counts the
// recomputed forward of checkpointing as no work (3x the forward FLOPs).
BENCHMARK(BM_Forward)->UseRealTime()->Args({0, 4, 256, 0})->Args({1, 1, 256, 0})->Args({1, 1, 1024, 0})
    ->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ForwardBackward)->UseRealTime()->Args({0, 4, 256, 0})->Args({1, 1, 256, 0})->Args({1, 1, 256, 1})
    ->Args({1, 1, 1024, 0})->Args({1, 1, 1024, 1})->Unit(benchmark::kMillisecond)->Iterations(2);

// The loss's fused CPU kernels against its ATen ops, whole model: Args
// {shape, B, T, checkpointing, fused, backward}.
void BM_ModelLoss(benchmark::State& s) { run_model(s, s.range(5) != 0, s.range(4) != 0); }
BENCHMARK(BM_ModelLoss)
    ->UseRealTime()
    ->ArgNames({"shape", "B", "T", "ckpt", "fused", "bwd"})
    ->Args({1, 1, 1024, 0, 0, 0})->Args({1, 1, 1024, 0, 1, 0})
    ->Args({1, 1, 256, 0, 0, 1})->Args({1, 1, 256, 0, 1, 1})
    ->Args({1, 1, 1024, 0, 0, 1})->Args({1, 1, 1024, 0, 1, 1})
    ->Args({2, 4, 512, 0, 0, 1})->Args({2, 4, 512, 0, 1, 1})
    ->Unit(benchmark::kMillisecond)->Iterations(2);

// The loss head alone (chunked_token_stats over T rows of hidden size H and a
// [V, H] lm head, forward + backward), fused kernels against ATen ops: Args
// {V, H, T, fused, entropy_grad}. V 151936 / H 896 is the 0.5B head.
void BM_LossHead(benchmark::State& state) {
  const int64_t V = state.range(0), H = state.range(1), T = state.range(2);
  LogprobOptions o;
  o.fused = state.range(3) != 0;
  o.entropy_grad = state.range(4) != 0;
  torch::manual_seed(1);
  auto hidden = torch::randn({T, H}).requires_grad_(true);
  auto weight = (torch::randn({V, H}) * 0.05).requires_grad_(true);
  auto targets = torch::randint(V, {T}, torch::kInt64);
  auto step = [&] {
    auto st = chunked_token_stats(hidden, weight, targets, o);
    auto loss = st.logprobs.sum();
    if (o.entropy_grad) loss = loss + 0.01 * st.entropy.sum();
    loss.backward();
    hidden.mutable_grad().reset();
    weight.mutable_grad().reset();
  };
  step();
  for (auto _ : state) step();
  state.counters["rows/s"] = benchmark::Counter(double(T) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LossHead)
    ->UseRealTime()
    ->ArgNames({"V", "H", "T", "fused", "ent"})
    ->Args({151936, 896, 1024, 0, 0})->Args({151936, 896, 1024, 1, 0})
    ->Args({151936, 896, 1024, 0, 1})->Args({151936, 896, 1024, 1, 1})
    ->Args({1000, 128, 4096, 0, 0})->Args({1000, 128, 4096, 1, 0})
    ->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The attention kernels side by side (attention.h), forward + backward:
// Args {shape, B, T, kernel} with kernel 0 = eager, 1 = sdpa (skipped on a
// LibTorch without it), 2 = fused (agentrl's CPU kernel). Shape 2 at 1 x
// 2048 is a long-context CPU recipe's SFT step (WebShop), at 5 x 420 Deep
// Search's.
void BM_ForwardBackwardKernel(benchmark::State& state) {
  const auto kernel = state.range(3) == 1   ? AttentionKernel::kSdpa
                      : state.range(3) == 2 ? AttentionKernel::kFused
                                            : AttentionKernel::kEager;
  if (kernel == AttentionKernel::kSdpa && !sdpa_available()) {
    state.SkipWithError("sdpa needs LibTorch >= 2.1");
    for (auto _ : state) {
    }
    return;
  }
  auto& m = model_for(state.range(0));
  const auto before = m->attention_kernel();
  m->set_attention_kernel(kernel);
  const int64_t B = state.range(1), T = state.range(2);
  auto ids = torch::randint(m->args().vocab_size, {B, T}, torch::kInt64);
  auto mask = torch::ones({B, T}, torch::kBool);
  auto pos = position_ids_from_mask(mask);
  auto step = [&] {
    logprobs_and_entropy(m, ids, mask, pos).logprobs.sum().backward();
    m->zero_grad();
  };
  step();  // untimed: faults in the activations' memory
  for (auto _ : state) step();
  state.counters["tokens/s"] = benchmark::Counter(double(B * T) * state.iterations(), benchmark::Counter::kIsRate);
  m->set_attention_kernel(before);
}
BENCHMARK(BM_ForwardBackwardKernel)
    ->UseRealTime()
    ->ArgNames({"shape", "B", "T", "kernel"})
    ->Args({2, 1, 2048, 0})->Args({2, 1, 2048, 1})->Args({2, 1, 2048, 2})
    ->Args({2, 5, 420, 0})->Args({2, 5, 420, 1})->Args({2, 5, 420, 2})
    ->Args({0, 2, 1024, 0})->Args({0, 2, 1024, 1})->Args({0, 2, 1024, 2})
    ->Args({1, 1, 1024, 0})->Args({1, 1, 1024, 1})->Args({1, 1, 1024, 2})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

// Attention alone, causal over T tokens of one sequence: q [1, 4, T, 32],
// k/v [1, 2, T, 32] (the CPU recipes' heads), forward (bwd = 0) or forward +
// backward (bwd = 1, loss = sum of the output). Args {T, kernel, bwd} with
// kernel 0 = eager, 2 = fused. GFLOP/s counts the causal half of q k^T and
// P v (2 products forward; the backward's 5 with the recomputed scores as
// 2.5x the forward's work, FlashAttention-2's count).
void BM_AttentionKernel(benchmark::State& state) {
  const int64_t T = state.range(0), D = 32, Hq = 4, Hkv = 2;
  const auto kernel = state.range(1) == 2 ? AttentionKernel::kFused : AttentionKernel::kEager;
  const bool backward = state.range(2) != 0;
  torch::manual_seed(0);
  auto q = torch::randn({1, Hq, T, D}), k = torch::randn({1, Hkv, T, D}), v = torch::randn({1, Hkv, T, D});
  auto allowed = torch::ones({T, T}, torch::kBool).tril().unsqueeze(0);
  if (backward) q.requires_grad_(true), k.requires_grad_(true), v.requires_grad_(true);
  auto step = [&] {
    if (!backward) {
      torch::NoGradGuard g;
      benchmark::DoNotOptimize(grouped_attention(q, k, v, allowed, 256, kernel));
      return;
    }
    grouped_attention(q, k, v, allowed, 256, kernel).sum().backward();
    q.mutable_grad().reset(), k.mutable_grad().reset(), v.mutable_grad().reset();
  };
  step();
  for (auto _ : state) step();
  const double forward_flops = 2.0 * 2.0 * Hq * (T * (T + 1) / 2.0) * D;
  state.counters["GFLOP/s"] = benchmark::Counter(forward_flops * (backward ? 3.5 : 1.0) * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AttentionKernel)
    ->UseRealTime()
    ->ArgNames({"T", "kernel", "bwd"})
    ->Args({2048, 0, 0})->Args({2048, 2, 0})->Args({2048, 0, 1})->Args({2048, 2, 1})
    ->Args({420, 0, 1})->Args({420, 2, 1})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

// The quickstart's update micro-batch: loss over ~15% of the tokens.
void BM_TrainStep(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1);
  const bool only = state.range(2) != 0;
  auto& m = model_for(2);
  auto ids = torch::randint(m->args().vocab_size, {B, T}, torch::kInt64);
  auto mask = torch::ones({B, T}, torch::kBool);
  auto pos = position_ids_from_mask(mask);
  auto loss_mask = (torch::arange(T) % 160 >= 136).unsqueeze(0).expand({B, T}).contiguous();  // 24 of 160
  LogprobOptions o;
  o.want_prob_sq = true;  // as the update does (logit-update norm)
  if (only) o.only = loss_mask;
  const auto weight = loss_mask.to(torch::kFloat32);
  for (auto _ : state) {
    auto st = logprobs_and_entropy(m, ids, mask, pos, o);
    (st.logprobs * weight).sum().backward();
    m->zero_grad();
  }
  state.counters["tokens/s"] = benchmark::Counter(double(B * T) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["malloc_tuned"] = std::getenv("AGENTRL_MALLOC_TUNING") == nullptr ||
                                   std::string(std::getenv("AGENTRL_MALLOC_TUNING")) != "0";
}
BENCHMARK(BM_TrainStep)
    ->UseRealTime()
    ->ArgNames({"B", "T", "only"})
    ->Args({16, 600, 0})->Args({16, 600, 1})
    ->Args({8, 1200, 0})->Args({8, 1200, 1})
    ->Args({4, 2000, 0})->Args({4, 2000, 1})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);

}  // namespace

AGENTRL_TUNED_BENCHMARK_MAIN()
