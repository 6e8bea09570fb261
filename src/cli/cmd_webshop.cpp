// `agentrl env bench-search webshop`: WebShop search latency (p50/p99) and
// index build time on built-in catalogs of several sizes, plus env
// throughput with a random shopper. Logic in envs/webshop/search_bench.h.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/cli/command.h"
#include "agentrl/core/config.h"
#include "agentrl/core/error.h"
#include "agentrl/envs/webshop/search_bench.h"

namespace agentrl::cli {
namespace {

struct BenchArgs {
  std::string name;
  std::vector<int64_t> sizes = {1000, 100000, 1000000};
  int64_t queries = 1000;
  std::string dir;
  int64_t seed = 42;
  int64_t env_steps = 20000;
  std::vector<std::string> sets;
};

std::string default_bench_dir() {
  if (const char* d = std::getenv("AGENTRL_CACHE_DIR"); d && *d) return std::string(d) + "/webshop-bench";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/agentrl/webshop-bench";
  return "/tmp/agentrl-webshop-bench";
}

CommandRegistrar reg(41, [](CLI::App& root) {
  CLI::App* env = group(root, "env", "Environments: play, benchmark, demonstrations");
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = env->add_subcommand(
      "bench-search", "WebShop: BM25 index build time and search p50/p99 at several catalog sizes, env steps/s");
  cmd->add_option("name", a->name, "environment (webshop)")->required()->check(CLI::IsMember({"webshop"}));
  cmd->add_option("--sizes", a->sizes, "catalog sizes (built-in products)")->delimiter(',');
  cmd->add_option("--queries", a->queries, "timed queries per size");
  cmd->add_option("--dir", a->dir, "where the benchmark indexes are kept (reused across runs)");
  cmd->add_option("--seed", a->seed, "catalog seed");
  cmd->add_option("--env-steps", a->env_steps, "random-shopper env steps to time (0 = skip)");
  cmd->add_option("--set", a->sets, "webshop config override key=value for the env benchmark");
  cmd->callback([a] {
    const std::string base = a->dir.empty() ? default_bench_dir() : a->dir;
    for (int64_t n : a->sizes) {
      if (n <= 0) throw UsageError("--sizes: catalog sizes must be positive, got " + std::to_string(n));
      auto r = envs::webshop::bench_search(static_cast<size_t>(n), base + "/n" + std::to_string(n),
                                           static_cast<size_t>(a->queries), static_cast<uint64_t>(a->seed));
      std::cout << "search " << envs::webshop::format_search_bench(r) << std::endl;
    }
    if (a->env_steps > 0) {
      envs::webshop::WebshopConfig c;
      c.index_dir = base + "/env-default";
      config::apply_overrides([&](config::Visitor& v) { v.section("webshop", c, "webshop"); }, a->sets);
      envs::webshop::WebshopSuite suite(c);
      auto r = envs::webshop::bench_env(suite, "train", a->env_steps, static_cast<uint64_t>(a->seed));
      std::cout << "env " << envs::webshop::format_env_bench(r) << std::endl;
    }
  });
});

}  // namespace
}  // namespace agentrl::cli
