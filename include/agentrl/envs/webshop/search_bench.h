// WebShop benchmarks: BM25 index build time and search latency (p50 / p99)
// on built-in catalogs of a given size, and env throughput (steps/s, reset
// time) with a random shopper. Used by `agentrl env bench-search webshop`
// (src/cli/cmd_webshop.cpp); numbers go to docs/parts/webshop-benchmarks.md.
//
// Catalogs are streamed from CatalogGenerator into the index, so a 1M
// product index is built without holding the catalog in memory.
//
// Thread-safety: each call is independent; single-threaded timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/envs/webshop/webshop_env.h"

namespace agentrl::envs::webshop {

struct SearchBenchResult {
  size_t products = 0;
  double build_seconds = 0;  // 0 when an existing index was reused
  bool reused = false;
  size_t queries = 0;
  double p50_ms = 0, p99_ms = 0, mean_ms = 0;  // wall clock
  // Thread CPU time per query: excludes time the thread was descheduled,
  // which dominates wall-clock tails on a loaded machine.
  double cpu_p50_ms = 0, cpu_p99_ms = 0;
  double mean_hits = 0;
};

// Builds (or reuses, if `dir` already holds it) the index of the first
// `products` built-in products (seed `seed`) in `dir`, then times `queries`
// top-50 searches whose texts are goal-style queries for random products.
SearchBenchResult bench_search(size_t products, const std::string& dir, size_t queries, uint64_t seed);

struct EnvBenchResult {
  int64_t episodes = 0;
  int64_t steps = 0;
  double steps_per_second = 0;
  double reset_ms = 0;  // mean
};

// Random shopper on `split`: at each step picks uniformly among the
// admissible actions, with "search[<query>]" replaced by a goal-style query
// for a random product; episodes end at Buy Now or max_steps.
EnvBenchResult bench_env(const WebshopSuite& suite, const std::string& split, int64_t min_steps, uint64_t seed);

std::string format_search_bench(const SearchBenchResult& r);
std::string format_env_bench(const EnvBenchResult& r);

}  // namespace agentrl::envs::webshop
