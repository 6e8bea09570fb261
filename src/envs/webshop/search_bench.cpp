// WebShop benchmarks; see search_bench.h.
#include "agentrl/envs/webshop/search_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "agentrl/core/rng.h"

namespace agentrl::envs::webshop {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1000.0 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What a shopper would type for goal g: the instruction without its option
// and price clauses (the oracle expert's first query).
std::string goal_query(const Goal& g) {
  std::string q = g.instruction_text;
  for (const char* cut : {" with ", ", and price lower than"}) {
    size_t pos = q.find(cut);
    if (pos != std::string::npos) q = q.substr(0, pos);
  }
  return q;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest-rank percentile.
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}
}  // namespace

SearchBenchResult bench_search(size_t products, const std::string& dir, size_t queries, uint64_t seed) {
  SearchBenchResult r;
  r.products = products;
  CatalogGenerator gen(seed);
  const std::string fingerprint = "bench seed=" + std::to_string(seed) + " n=" + std::to_string(products);
  const fs::path fp = fs::path(dir) / "agentrl_webshop_source";
  bool have = false;
  if (search::Bm25Index::exists(dir) && fs::exists(fp)) {
    std::ifstream in(fp);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    have = s == fingerprint;
  }
  if (!have) {
    auto t0 = Clock::now();
    {
      search::Bm25IndexWriter w(dir, /*overwrite=*/true, 50000);
      for (size_t i = 0; i < products; ++i) {
        Product p = gen.product(i);
        w.add({p.asin, index_text(p), ""});
      }
      w.commit();
    }
    r.build_seconds = seconds_since(t0);
    std::ofstream(fp) << fingerprint;
  } else {
    r.reused = true;
  }
  auto index = search::Bm25Index::open(dir);
  Rng rng(mix_seed(seed, 0xBE7C4ULL));
  std::vector<std::string> texts;
  for (size_t q = 0; q < queries; ++q) {
    Product p = gen.product(static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(products) - 1)));
    texts.push_back(goal_query(gen.goal(p, p.pricing[0], q)));
  }
  for (size_t q = 0; q < std::min<size_t>(20, texts.size()); ++q) index->search(texts[q], 50);  // warm-up
  std::vector<double> ms, cpu;
  double hits = 0;
  for (const auto& t : texts) {
    auto t0 = Clock::now();
    const double c0 = thread_cpu_ms();
    auto h = index->search(t, 50);
    cpu.push_back(thread_cpu_ms() - c0);
    ms.push_back(seconds_since(t0) * 1000.0);
    hits += static_cast<double>(h.size());
  }
  r.queries = texts.size();
  r.p50_ms = percentile(ms, 50);
  r.p99_ms = percentile(ms, 99);
  r.cpu_p50_ms = percentile(cpu, 50);
  r.cpu_p99_ms = percentile(cpu, 99);
  double sum = 0;
  for (double x : ms) sum += x;
  r.mean_ms = ms.empty() ? 0 : sum / static_cast<double>(ms.size());
  r.mean_hits = texts.empty() ? 0 : hits / static_cast<double>(texts.size());
  return r;
}

EnvBenchResult bench_env(const WebshopSuite& suite, const std::string& split, int64_t min_steps, uint64_t seed) {
  EnvBenchResult r;
  Rng rng(seed);
  const auto& data = suite.data();
  auto env = suite.make_env();
  const size_t n = suite.tasks().size(split);
  double reset_s = 0, step_s = 0;
  for (size_t t = 0; r.steps < min_steps; ++t) {
    Task task = suite.tasks().get(split, t % n);
    auto t0 = Clock::now();
    env->reset(task, seed + t);
    reset_s += seconds_since(t0);
    ++r.episodes;
    for (int s = 0; s < env->max_steps(); ++s) {
      auto t1 = Clock::now();
      auto acts = env->admissible_actions();
      if (acts.empty()) break;
      std::string a = acts[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(acts.size()) - 1))];
      if (a == "search[<query>]") {
        const Goal& g = data.goals[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(data.goals.size()) - 1))];
        a = "search[" + goal_query(g) + "]";
      }
      auto res = env->step(a);
      step_s += seconds_since(t1);
      ++r.steps;
      if (res.done) break;
    }
  }
  r.steps_per_second = step_s > 0 ? static_cast<double>(r.steps) / step_s : 0;
  r.reset_ms = r.episodes ? reset_s * 1000.0 / static_cast<double>(r.episodes) : 0;
  return r;
}

std::string format_search_bench(const SearchBenchResult& r) {
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "products=%zu build_s=%s queries=%zu p50_ms=%.3f p99_ms=%.3f mean_ms=%.3f cpu_p50_ms=%.3f "
                "cpu_p99_ms=%.3f mean_hits=%.1f",
                r.products, r.reused ? "reused" : std::to_string(r.build_seconds).c_str(), r.queries, r.p50_ms,
                r.p99_ms, r.mean_ms, r.cpu_p50_ms, r.cpu_p99_ms, r.mean_hits);
  return buf;
}

std::string format_env_bench(const EnvBenchResult& r) {
  char buf[192];
  std::snprintf(buf, sizeof buf, "episodes=%lld steps=%lld steps_per_s=%.0f reset_ms=%.4f",
                static_cast<long long>(r.episodes), static_cast<long long>(r.steps), r.steps_per_second, r.reset_ms);
  return buf;
}

}  // namespace agentrl::envs::webshop
