// `agentrl index build --corpus FILE --out DIR`: BM25 index of a wiki-18
// JSONL corpus for the Deep Search env (streaming; logic in
// envs/deepsearch/retriever.h).
#include <chrono>
#include <iostream>

#include "agentrl/cli/command.h"
#include "agentrl/core/progress.h"
#include "agentrl/envs/deepsearch/retriever.h"

namespace agentrl::cli {
namespace {

CommandRegistrar reg(60, [](CLI::App& root) {
  CLI::App* index = group(root, "index", "Search indexes");
  auto* build = index->add_subcommand("build", "Build a BM25 index of a wiki-18 JSONL corpus ({\"id\", \"contents\"})");
  auto corpus = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  build->add_option("--corpus", *corpus, "wiki-18 format JSONL corpus")->required();
  build->add_option("--out", *out, "index directory to create")->required();
  build->add_flag("--overwrite", *overwrite, "replace an existing index in --out");
  build->callback([corpus, out, overwrite] {
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<ProgressBar> bar;
    auto progress = [&](int64_t passages, uint64_t bytes, uint64_t size) {
      // The passage count of a streamed corpus is unknown up front: the bar
      // tracks bytes (KiB) and the extra text reports passages.
      if (!bar) bar = std::make_unique<ProgressBar>(static_cast<int64_t>(size >> 10), "index build (KiB)");
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      bar->update(static_cast<int64_t>(bytes >> 10),
                  std::to_string(passages) + " passages, " + std::to_string(static_cast<int64_t>(passages / std::max(s, 1e-9))) +
                      " passages/s");
    };
    int64_t n = envs::deepsearch::build_corpus_index(*corpus, *out, *overwrite, progress);
    if (bar) bar->finish();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "indexed " << n << " passages into " << *out << " in " << s << " s ("
              << static_cast<int64_t>(n / std::max(s, 1e-9)) << " passages/s)\n";
  });
});

}  // namespace
}  // namespace agentrl::cli
