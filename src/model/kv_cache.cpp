#include "agentrl/model/kv_cache.h"

#include <fstream>
#include <sstream>

#if defined(AGENTRL_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

#include "agentrl/core/error.h"
#include "agentrl/model/transformer.h"

namespace agentrl::model {

KvCache::KvCache(const ModelArgs& args, int64_t num_slots, int64_t capacity, torch::Dtype dtype,
                 torch::Device device)
    : num_slots_(num_slots), capacity_(capacity) {
  if (num_slots < 1 || capacity < 1)
    throw ConfigError("KV cache needs >= 1 slot of >= 1 token (got " + std::to_string(num_slots) + " slots of " +
                      std::to_string(capacity) + " tokens): raise engine.kv_budget_tokens or lower engine.max_seq_len");
  auto opts = torch::TensorOptions().dtype(dtype).device(device);
  const int64_t hd = effective_head_dim(args);
  for (int64_t l = 0; l < args.num_hidden_layers; ++l) {
    keys_.push_back(torch::zeros({num_slots, args.num_key_value_heads, capacity, hd}, opts));
    values_.push_back(torch::zeros({num_slots, args.num_key_value_heads, capacity, hd}, opts));
  }
  used_.assign(static_cast<size_t>(num_slots), false);
}

int64_t KvCache::bytes() const {
  int64_t b = 0;
  for (const auto& t : keys_) b += t.numel() * static_cast<int64_t>(t.element_size());
  return 2 * b;
}

std::optional<int64_t> KvCache::allocate() {
  for (int64_t s = 0; s < num_slots_; ++s) {
    if (!used_[s]) {
      used_[s] = true;
      return s;
    }
  }
  return std::nullopt;
}

void KvCache::release(int64_t slot) { used_.at(slot) = false; }

int64_t KvCache::free_slots() const {
  int64_t n = 0;
  for (bool u : used_) n += u ? 0 : 1;
  return n;
}

void KvCache::copy_prefix(int64_t src, int64_t dst, int64_t length) {
  torch::NoGradGuard no_grad;
  if (length <= 0 || src == dst) return;
  for (size_t l = 0; l < keys_.size(); ++l) {
    keys_[l][dst].narrow(1, 0, length).copy_(keys_[l][src].narrow(1, 0, length));
    values_[l][dst].narrow(1, 0, length).copy_(values_[l][src].narrow(1, 0, length));
  }
}

int64_t kv_bytes_per_token(const ModelArgs& args, torch::Dtype dtype) {
  return 2 * args.num_hidden_layers * args.num_key_value_heads * effective_head_dim(args) *
         static_cast<int64_t>(c10::elementSize(dtype));
}

int64_t free_device_memory(torch::Device device) {
  if (device.is_cuda()) {
#if defined(AGENTRL_WITH_CUDA)
    c10::cuda::CUDAGuard guard(device);
    c10::cuda::CUDACachingAllocator::emptyCache();
    size_t free = 0, total = 0;
    const auto err = cudaMemGetInfo(&free, &total);
    if (err != cudaSuccess)
      throw IoError(std::string("cudaMemGetInfo on ") + device.str() + " failed: " + cudaGetErrorString(err));
    return static_cast<int64_t>(free);
#else
    throw ConfigError("free_device_memory: " + device.str() + " needs a CUDA build of agentrl");
#endif
  }
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string key;
    int64_t kib = 0;
    if (in >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  throw IoError("cannot read MemAvailable from /proc/meminfo (set engine.kv_budget_tokens instead)");
}

int64_t kv_budget_from_memory(int64_t free_bytes, double fraction, int64_t bytes_per_token, int64_t max_seq_len) {
  const double usable = fraction * static_cast<double>(free_bytes);
  const int64_t slots = static_cast<int64_t>(usable / static_cast<double>(bytes_per_token * max_seq_len));
  if (slots < 1)
    throw ConfigError("engine.kv_memory_fraction " + std::to_string(fraction) + " of the " +
                      std::to_string(free_bytes >> 20) + " MiB left free after the model and optimizer holds " +
                      std::to_string(static_cast<int64_t>(usable) >> 20) + " MiB, less than one sequence of " +
                      "engine.max_seq_len " + std::to_string(max_seq_len) + " tokens (" +
                      std::to_string((bytes_per_token * max_seq_len) >> 20) + " MiB of KV cache): lower "
                      "engine.max_seq_len, raise the fraction, shard the optimizer (dist.shard_optimizer) or use "
                      "more GPUs");
  return slots * max_seq_len;
}

}  // namespace agentrl::model
