#include "agentrl/model/kv_cache.h"

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

}  // namespace agentrl::model
