// The layer rules of the design, checked on the source tree: each layer
// (src/<layer>/ and include/agentrl/<layer>/) includes only the agentrl
// layers below it, and core, text and envs never include LibTorch.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"core", {"core", "proto"}},  // proto: core's generated TensorBoard messages
    {"text", {"text", "core"}},
    {"envs", {"envs", "core"}},
    {"model", {"model", "core"}},
    {"rollout", {"rollout", "model", "text", "envs", "core"}},
    {"algo", {"algo", "rollout", "core"}},  // rollout: its trajectory and batch types only (checked below)
    {"dist", {"dist", "core"}},
    {"train", {"train", "dist", "algo", "rollout", "model", "envs", "text", "core"}},
};
const std::set<std::string> kTorchFree = {"core", "text", "envs"};
const std::set<std::string> kRolloutTypesForAlgo = {"trajectory.h", "train_batch.h"};

std::vector<fs::path> sources_of(const std::string& layer) {
  std::vector<fs::path> out;
  for (const auto& root : {fs::path(AGENTRL_SOURCE_DIR) / "src" / layer,
                           fs::path(AGENTRL_SOURCE_DIR) / "include" / "agentrl" / layer}) {
    if (!fs::exists(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cpp")) out.push_back(e.path());
    }
  }
  return out;
}

TEST(Layering, EachLayerIncludesOnlyTheLayersBelowIt) {
  const std::regex agentrl_include(R"re(^\s*#\s*include\s*"agentrl/([a-z_]+)/([^"]+)")re");
  int files = 0;
  for (const auto& [layer, allowed] : kMayInclude) {
    for (const auto& path : sources_of(layer)) {
      ++files;
      std::ifstream in(path);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, agentrl_include)) continue;
        const std::string target = m[1], header = m[2];
        EXPECT_TRUE(allowed.count(target)) << path.string() << ":" << n << ": " << layer << " includes " << target;
        if (layer == "algo" && target == "rollout")
          EXPECT_TRUE(kRolloutTypesForAlgo.count(header)) << path.string() << ":" << n << ": algo includes rollout/"
                                                          << header;
      }
    }
  }
  EXPECT_GT(files, 100) << "the source tree was not found under " << AGENTRL_SOURCE_DIR;
}

TEST(Layering, CoreTextAndEnvsNeverIncludeLibTorch) {
  const std::regex torch_include(R"re(^\s*#\s*include\s*<(torch|ATen|c10|caffe2)/)re");
  for (const auto& layer : kTorchFree) {
    for (const auto& path : sources_of(layer)) {
      std::ifstream in(path);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        EXPECT_FALSE(std::regex_search(line, torch_include)) << path.string() << ":" << n << ": " << line;
    }
  }
}

}  // namespace
