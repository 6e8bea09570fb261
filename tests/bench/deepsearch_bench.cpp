// Deep Search retrieval benchmarks on a ~100k-passage generated corpus:
// index build throughput (passages/s), search queries/s and p50/p99 latency,
// local (BM25 in process) and over HTTP (`agentrl retriever serve`'s server
// on 127.0.0.1).
//
//   ./deepsearch_bench --benchmark_min_time=2
// The index is built once into /tmp/agentrl-deepsearch-bench.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>

#include "agentrl/envs/deepsearch/retriever.h"
#include "agentrl/envs/deepsearch/world.h"

namespace {

using namespace agentrl::envs::deepsearch;

const std::string kDir = "/tmp/agentrl-deepsearch-bench";

WorldOptions big_world() {
  WorldOptions o;
  o.people = 60000;
  o.cities = 1000;
  o.organisations = 10000;
  o.works = 29000;  // 100,000 passages
  o.questions = 2000;
  return o;
}

struct Fixture {
  World world;
  std::vector<std::string> queries;
  std::shared_ptr<LocalRetriever> local;
  std::unique_ptr<RetrievalServer> server;
  double build_seconds = 0;
};

Fixture& fixture() {
  static std::once_flag once;
  static Fixture f;
  std::call_once(once, [] {
    f.world = World::generate(big_world());
    for (auto& q : f.world.train) f.queries.push_back(hop_query(q.chain[0]));
    auto t0 = std::chrono::steady_clock::now();
    build_passage_index(f.world.passages, kDir, /*overwrite=*/true);
    f.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f.local = std::make_shared<LocalRetriever>(kDir, 0.9, 0.4);
    f.server = std::make_unique<RetrievalServer>(f.local, "127.0.0.1", 0);
  });
  return f;
}

void BM_IndexBuild(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) state.SetIterationTime(f.build_seconds);
  state.counters["passages"] = static_cast<double>(f.world.passages.size());
  state.counters["passages_per_s"] = f.world.passages.size() / f.build_seconds;
}
BENCHMARK(BM_IndexBuild)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

template <class Search>
void run_queries(benchmark::State& state, Search search) {
  Fixture& f = fixture();
  std::vector<double> lat;
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto hits = search(f.queries[i++ % f.queries.size()]);
    lat.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    benchmark::DoNotOptimize(hits);
  }
  std::sort(lat.begin(), lat.end());
  state.SetItemsProcessed(state.iterations());
  if (!lat.empty()) {
    // Per-thread percentiles, averaged over threads (not summed).
    state.counters["p50_ms"] = benchmark::Counter(lat[lat.size() / 2], benchmark::Counter::kAvgThreads);
    state.counters["p99_ms"] =
        benchmark::Counter(lat[std::min(lat.size() - 1, lat.size() * 99 / 100)], benchmark::Counter::kAvgThreads);
  }
}

void BM_SearchLocal(benchmark::State& state) {
  run_queries(state, [](const std::string& q) { return fixture().local->search(q, 3); });
}
BENCHMARK(BM_SearchLocal)->UseRealTime()->Unit(benchmark::kMicrosecond)->Threads(1)->Threads(4);

void BM_SearchHttp(benchmark::State& state) {
  HttpRetrieverOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(fixture().server->port());
  HttpRetriever remote(o);
  run_queries(state, [&](const std::string& q) { return remote.search(q, 3); });
}
BENCHMARK(BM_SearchHttp)->UseRealTime()->Unit(benchmark::kMicrosecond)->Threads(1)->Threads(4);

}  // namespace

BENCHMARK_MAIN();
