// Benchmarks of core utilities on the training loop's hot-ish paths:
// config loading (once per run, but also per `config show`), metrics sinks
// (once per step), atomic writes (per checkpoint / config), CRC-32C.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>

#include "agentrl/core/config.h"
#include "agentrl/core/crc32c.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/metrics.h"

namespace {
using namespace agentrl;

struct Sub {
  double lr = 1e-6;
  int64_t steps = 10;
  std::string mode = "a";
  std::vector<double> xs = {1, 2, 3};
  void visit(config::Visitor& v) {
    v.field("lr", lr, "lr", config::Range::open_closed(0, 1));
    v.field("steps", steps, "steps", config::Range::at_least(1));
    v.field("mode", mode, "mode", {"a", "b", "c"});
    v.field("xs", xs, "xs");
  }
};
// 20 sections x 4 fields: the size of a real experiment config.
struct Big {
  Sub s[20];
  void visit(config::Visitor& v) {
    static const char* names[20] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
                                    "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19"};
    for (int i = 0; i < 20; ++i) v.section(names[i], s[i], "section");
  }
};

std::string scratch() {
  std::string t = (std::filesystem::temp_directory_path() / "agentrl_bench_XXXXXX").string();
  return ::mkdtemp(t.data());
}

void BM_ConfigLoadString(benchmark::State& st) {
  Big b;
  const std::string text = config::to_yaml(b);
  for (auto _ : st) {
    Big x;
    config::load_config_string([&](config::Visitor& v) { x.visit(v); }, text, "bench.yaml", {"s3.lr=0.5"});
    benchmark::DoNotOptimize(x.s[3].lr);
  }
}
BENCHMARK(BM_ConfigLoadString);

void BM_ConfigToYaml(benchmark::State& st) {
  Big b;
  for (auto _ : st) benchmark::DoNotOptimize(config::to_yaml(b));
}
BENCHMARK(BM_ConfigToYaml);

Scalars step_scalars() {
  Scalars s;
  for (int i = 0; i < 40; ++i) s["metric/" + std::to_string(i)] = i * 0.25;
  return s;
}

void BM_JsonlSinkWriteFsync(benchmark::State& st) {
  const std::string dir = scratch();
  JsonlSink sink(dir + "/m.jsonl");
  const Scalars s = step_scalars();
  int64_t step = 0;
  for (auto _ : st) sink.write(step++, 0, s);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_JsonlSinkWriteFsync);

void BM_TensorBoardSinkWrite(benchmark::State& st) {
  const std::string dir = scratch();
  TensorBoardSink sink(dir);
  const Scalars s = step_scalars();
  int64_t step = 0;
  for (auto _ : st) sink.write(step++, 0, s);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TensorBoardSinkWrite);

void BM_WriteFileAtomic(benchmark::State& st) {
  const std::string dir = scratch();
  const std::string bytes(static_cast<size_t>(st.range(0)), 'x');
  for (auto _ : st) write_file_atomic(dir + "/f.bin", bytes);
  st.SetBytesProcessed(st.iterations() * st.range(0));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_WriteFileAtomic)->Arg(4 << 10)->Arg(16 << 20);

void BM_Crc32c(benchmark::State& st) {
  const std::string bytes(1 << 20, 'x');
  for (auto _ : st) benchmark::DoNotOptimize(crc32c(bytes.data(), bytes.size()));
  st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_Crc32c);

}  // namespace

BENCHMARK_MAIN();
