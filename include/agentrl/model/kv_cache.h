// KvCache: pre-allocated key/value memory for incremental decoding.
//
// The cache is a fixed number of slots, each holding up to `capacity` tokens
// of one sequence for every layer: keys(l) and values(l) are
// [num_slots, num_kv_heads, capacity, head_dim] tensors allocated once, so
// decoding never allocates KV memory and a budget of num_slots * capacity
// tokens is never exceeded (the engine queues requests when no slot is free).
// A sequence's keys are a contiguous view keys(l)[slot, :, 0:len], which lets
// attention run on it without any gather/copy (see attention.h).
//
// Slots are handed out by allocate()/release(); copy_prefix() forks a cached
// prefix into another slot (prefix sharing of the G samples of a group).
//
// Users: TransformerLM::forward_cached and rollout::GenerationEngine.
// Thread-safety: none; the engine's loop thread owns its cache.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "agentrl/model/model_args.h"

namespace agentrl::model {

class KvCache {
 public:
  // Allocates 2 * layers * num_slots * kv_heads * capacity * head_dim
  // elements of `dtype` on `device`. Throws ConfigError when num_slots or
  // capacity < 1.
  KvCache(const ModelArgs& args, int64_t num_slots, int64_t capacity, torch::Dtype dtype, torch::Device device);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  int64_t num_slots() const { return num_slots_; }
  int64_t capacity() const { return capacity_; }
  int64_t num_layers() const { return static_cast<int64_t>(keys_.size()); }
  int64_t bytes() const;

  torch::Tensor& keys(int64_t layer) { return keys_.at(layer); }
  torch::Tensor& values(int64_t layer) { return values_.at(layer); }

  // Lowest free slot, or nullopt when all are in use.
  std::optional<int64_t> allocate();
  // Returns a slot to the free pool (its contents become garbage).
  void release(int64_t slot);
  int64_t free_slots() const;
  bool in_use(int64_t slot) const { return used_.at(slot); }

  // Copies the first `length` cached tokens of src into dst, all layers.
  void copy_prefix(int64_t src, int64_t dst, int64_t length);

 private:
  int64_t num_slots_, capacity_;
  std::vector<torch::Tensor> keys_, values_;
  std::vector<bool> used_;
};

// Bytes one cached token takes: K and V of every layer, in `dtype`.
int64_t kv_bytes_per_token(const ModelArgs& args, torch::Dtype dtype);

// Memory of `device` free for new allocations, in bytes: on CUDA,
// cudaMemGetInfo after the caching allocator has released its unused blocks;
// on the CPU, MemAvailable of /proc/meminfo. IoError when it cannot be read.
int64_t free_device_memory(torch::Device device);

// The KV budget in tokens that `fraction` of `free_bytes` holds, in whole
// sequences of max_seq_len (vLLM's gpu_memory_utilization, applied to the
// memory left after the policy, its fp32 masters and AdamW state and the
// reference are allocated). ConfigError naming the numbers when not even one
// sequence fits.
int64_t kv_budget_from_memory(int64_t free_bytes, double fraction, int64_t bytes_per_token, int64_t max_seq_len);

}  // namespace agentrl::model
