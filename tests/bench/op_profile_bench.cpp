// Where a training step's time goes, by op kind: one forward + backward of the
// log-prob loss (as the PPO update computes it) under LibTorch's legacy
// autograd profiler, each op's self time (its time minus the ops it called)
// summed by kind: GEMM (mm/bmm/addmm), softmax, element-wise, copies and
// indexing, reductions, autograd bookkeeping, other.
//
//   ninja -C build op_profile_bench
//   build/op_profile_bench [--shape quickstart|tiny|0.5b] [--batch B] [--tokens T]
//       [--loss-fraction F] [--full] [--checkpointing] [--iterations N]
//
// --loss-fraction: the share of tokens in the loss (default 0.15, spans of 24
// tokens); --full computes every position's log-prob (the forward before
// LogprobOptions::only); one warm-up step runs first. The process tunes
// malloc as the agentrl binary does (AGENTRL_MALLOC_TUNING=0 to compare).
// Not a Google Benchmark: a profile for docs/benchmarks.md, issue #20.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "agentrl/core/malloc_tuning.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/model/transformer.h"
#include "bench_models.h"

namespace {

using namespace agentrl;
namespace prof = torch::autograd::profiler;

struct Options {
  int64_t shape = 2, batch = 16, tokens = 600, iterations = 1;
  double loss_fraction = 0.15;
  bool full = false, checkpointing = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "op_profile_bench: %s\nusage: op_profile_bench [--shape quickstart|tiny|0.5b] [--batch B] "
               "[--tokens T] [--loss-fraction F] [--full] [--checkpointing] [--iterations N]\n", why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--shape") {
      const std::string s = value();
      o.shape = s == "tiny" ? 0 : s == "0.5b" ? 1 : s == "quickstart" ? 2 : -1;
      if (o.shape < 0) usage("unknown shape '" + s + "' (quickstart, tiny or 0.5b)");
    } else if (a == "--batch") {
      o.batch = std::atoll(value().c_str());
    } else if (a == "--tokens") {
      o.tokens = std::atoll(value().c_str());
    } else if (a == "--iterations") {
      o.iterations = std::atoll(value().c_str());
    } else if (a == "--loss-fraction") {
      o.loss_fraction = std::atof(value().c_str());
    } else if (a == "--full") {
      o.full = true;
    } else if (a == "--checkpointing") {
      o.checkpointing = true;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  if (o.batch < 1 || o.tokens < 2 || o.iterations < 1 || o.loss_fraction <= 0 || o.loss_fraction > 1)
    usage("--batch, --iterations >= 1, --tokens >= 2, 0 < --loss-fraction <= 1");
  return o;
}

std::string kind_of(const std::string& name) {
  auto is = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (name == n) return true;
    return false;
  };
  if (name.rfind("autograd::engine::evaluate_function", 0) == 0 || name.find("Backward") != std::string::npos ||
      name.rfind("torch::autograd", 0) == 0)
    return "autograd bookkeeping";
  if (is({"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::addbmm"})) return "GEMM (mm, bmm, addmm)";
  if (name.find("softmax") != std::string::npos) return "softmax (+ backward)";
  if (is({"aten::copy_", "aten::clone", "aten::contiguous", "aten::cat", "aten::index_select", "aten::gather",
          "aten::scatter_add_", "aten::index_copy", "aten::index_put_", "aten::embedding", "aten::embedding_backward",
          "aten::embedding_dense_backward", "aten::_to_copy", "aten::to", "aten::index", "aten::masked_select",
          "aten::nonzero", "aten::sort", "aten::expand", "aten::repeat"}))
    return "copies, indexing";
  if (is({"aten::sum", "aten::mean", "aten::max", "aten::amax", "aten::norm", "aten::cumsum"})) return "reductions";
  if (is({"aten::add", "aten::add_", "aten::mul", "aten::mul_", "aten::sub", "aten::div", "aten::div_", "aten::neg",
          "aten::pow", "aten::rsqrt", "aten::exp", "aten::silu", "aten::silu_backward", "aten::where",
          "aten::masked_fill", "aten::masked_fill_", "aten::fill_", "aten::zero_", "aten::zeros", "aten::zeros_like",
          "aten::ones_like", "aten::eq", "aten::lt", "aten::logical_and_", "aten::logical_and", "aten::logical_not",
          "aten::logical_or_", "aten::sqrt", "aten::log", "aten::cos", "aten::sin", "aten::threshold_backward"}))
    return "element-wise";
  return "other (views, allocation, dispatch)";
}

struct Totals {
  std::map<std::string, double> by_kind, by_op;
  double total = 0;
};

// Self time per op from the push/pop events of every thread.
Totals self_times(const prof::thread_event_lists& lists) {
  Totals t;
  for (const auto& events : lists) {
    struct Open {
      std::string name;
      double start, children;
    };
    std::vector<Open> stack;
    for (const auto& e : events) {
      const std::string kind = e.kindStr();
      if (kind == "push") {
        stack.push_back({e.name(), e.cpuUs(), 0.0});
      } else if (kind == "pop" && !stack.empty()) {
        Open o = stack.back();
        stack.pop_back();
        const double dur = e.cpuUs() - o.start, self = dur - o.children;
        t.by_kind[kind_of(o.name)] += self;
        t.by_op[o.name] += self;
        t.total += self;
        if (!stack.empty()) stack.back().children += dur;
      }
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  tune_malloc_for_tensor_reuse();
  const Options o = parse(argc, argv);
  auto& m = bench::model_for(o.shape);
  m->set_gradient_checkpointing(o.checkpointing);
  m->train();
  const int64_t B = o.batch, T = o.tokens;
  auto ids = torch::randint(m->args().vocab_size, {B, T}, torch::kInt64);
  auto mask = torch::ones({B, T}, torch::kBool);
  auto pos = model::position_ids_from_mask(mask);
  const int64_t span = 24, period = std::max<int64_t>(span, static_cast<int64_t>(span / o.loss_fraction));
  auto loss_mask = (torch::arange(T) % period >= period - span).unsqueeze(0).expand({B, T}).contiguous();
  model::LogprobOptions lo;
  lo.want_prob_sq = true;
  if (!o.full) lo.only = loss_mask;
  const auto weight = loss_mask.to(torch::kFloat32);
  auto step = [&] {
    auto st = model::logprobs_and_entropy(m, ids, mask, pos, lo);
    (st.logprobs * weight).sum().backward();
    m->zero_grad();
  };
  step();  // warm-up: first-touch of the memory, lazy initialisation
  prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < o.iterations; ++i) step();
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const Totals t = self_times(prof::disableProfilerLegacy());
  const double n = static_cast<double>(o.iterations);
  std::printf("shape %s, B %lld x T %lld, %s, %s, %lld iteration(s): %.1f ms per step (wall, profiled)\n\n",
              o.shape == 0 ? "tiny" : o.shape == 1 ? "0.5b" : "quickstart", static_cast<long long>(B),
              static_cast<long long>(T), o.full ? "all positions" : "loss rows only",
              o.checkpointing ? "checkpointing" : "no checkpointing", static_cast<long long>(o.iterations), wall / n);
  std::printf("| op kind | self ms per step | share |\n|---|---|---|\n");
  std::vector<std::pair<double, std::string>> kinds;
  for (const auto& [k, v] : t.by_kind) kinds.push_back({v, k});
  std::sort(kinds.rbegin(), kinds.rend());
  for (const auto& [v, k] : kinds) std::printf("| %s | %.1f | %.0f%% |\n", k.c_str(), v / 1e3 / n, 100 * v / t.total);
  std::printf("\n| op (top 12 by self time) | self ms per step |\n|---|---|\n");
  std::vector<std::pair<double, std::string>> ops;
  for (const auto& [k, v] : t.by_op) ops.push_back({v, k});
  std::sort(ops.rbegin(), ops.rend());
  for (size_t i = 0; i < ops.size() && i < 12; ++i) std::printf("| %s | %.1f |\n", ops[i].second.c_str(), ops[i].first / 1e3 / n);
  return 0;
}
