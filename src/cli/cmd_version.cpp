// `agentrl version`: agentrl and LibTorch versions, CUDA, BLAS, threads.
#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <unistd.h>

#include <iostream>
#include <regex>

#include "agentrl/cli/command.h"
#include "agentrl/model/attention.h"

namespace agentrl::cli {
namespace {

std::string blas_in_use() {
  // at::show_config() reports the BLAS LibTorch was built against; the
  // library actually loaded is what the dynamic linker resolved, which on
  // Debian is chosen by update-alternatives (libblas.so.3).
  std::string cfg = at::show_config();
  std::smatch m;
  std::string built = "unknown";
  if (std::regex_search(cfg, m, std::regex("BLAS_INFO=([^,\\n]+)"))) built = m[1];
  std::string loaded = "unknown";
  char buf[4096];
  ssize_t n = readlink("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    loaded = buf;
  }
  return built + " (libblas.so.3 -> " + loaded + ")";
}

CommandRegistrar reg(0, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("version", "Print agentrl and LibTorch versions, CUDA, BLAS and threads");
  cmd->callback([] {
    std::cout << "agentrl " << AGENTRL_VERSION << "\n"
              << "libtorch " << TORCH_VERSION << "\n"
              << "cuda available: " << (torch::cuda::is_available() ? "yes" : "no");
    if (torch::cuda::is_available()) std::cout << " (" << torch::cuda::device_count() << " devices)";
    std::cout << "\n"
              << "blas: " << blas_in_use() << "\n"
              << "threads: " << at::get_num_threads() << "\n"
              << "attention kernels: eager" << (model::sdpa_available() ? ", sdpa" : "") << " (model.attention auto: "
              << model::attention_kernel_name(model::resolve_attention_kernel("auto")) << ")\n";
  });
});

}  // namespace
}  // namespace agentrl::cli
