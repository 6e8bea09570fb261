#include "agentrl/dist/device_binding.h"

#include <cstdlib>

#if defined(AGENTRL_WITH_CUDA)
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "agentrl/core/error.h"

namespace agentrl::dist {
namespace {

// N of "cuda:N", or -1 for "cuda"; ConfigError for anything else.
int cuda_ordinal(const std::string& name) {
  if (name == "cuda") return -1;
  const std::string digits = name.substr(5);
  char* end = nullptr;
  const long n = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != 0 || n < 0 || n > 1024)
    throw ConfigError("model.device: '" + name + "' is not a device (expected cpu, cuda, cuda:N or auto)");
  return static_cast<int>(n);
}

std::string checked(int ordinal, int visible, const std::string& why) {
  if (ordinal >= visible)
    throw ConfigError("model.device: " + why + " needs cuda:" + std::to_string(ordinal) + ", but " +
                      std::to_string(visible) + " CUDA device" + (visible == 1 ? " is" : "s are") +
                      " visible to this process (CUDA_VISIBLE_DEVICES, or fewer GPUs than processes per node)");
  return "cuda:" + std::to_string(ordinal);
}

}  // namespace

std::string rank_device_name(const std::string& configured, int world_size, int local_rank, int visible_cuda) {
  if (configured == "cpu") return "cpu";
  if (configured == "auto" && visible_cuda == 0) return "cpu";
  const bool cuda = configured == "auto" || configured == "cuda" || configured.rfind("cuda:", 0) == 0;
  if (!cuda) throw ConfigError("model.device: unknown device '" + configured + "' (expected cpu, cuda, cuda:N or auto)");
  const int ordinal = configured == "auto" ? -1 : cuda_ordinal(configured);
  if (visible_cuda == 0)
    throw ConfigError("model.device: '" + configured + "' requested but no CUDA device is visible (CPU-only "
                      "LibTorch build, no GPU, or CUDA_VISIBLE_DEVICES is empty)");
  if (world_size > 1) {
    // One rank per GPU: an explicit ordinal in a multi-process config is the
    // single-process habit; every rank still takes its own device.
    if (visible_cuda == 1) return "cuda:0";
    return checked(local_rank, visible_cuda, "LOCAL_RANK " + std::to_string(local_rank));
  }
  return checked(ordinal < 0 ? 0 : ordinal, visible_cuda, "'" + configured + "'");
}

torch::Device bind_rank_device(const std::string& configured, int world_size, int local_rank) {
  const int visible = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  const torch::Device device(rank_device_name(configured, world_size, local_rank, visible));
#if defined(AGENTRL_WITH_CUDA)
  if (device.is_cuda()) c10::cuda::set_device(device.index());
#endif
  return device;
}

}  // namespace agentrl::dist
