#include "agentrl/dist/zero_optimizer.h"

#include <algorithm>

namespace agentrl::dist {
namespace {

std::vector<torch::Tensor> owned_by(const std::vector<torch::Tensor>& params, const std::vector<int>& owners,
                                    int rank) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < params.size(); ++i)
    if (owners[i] == rank) out.push_back(params[i]);
  return out;
}

torch::Tensor flatten(const std::vector<torch::Tensor>& parts) {
  std::vector<torch::Tensor> flat;
  flat.reserve(parts.size());
  for (const auto& t : parts) flat.push_back(t.reshape({-1}));
  return torch::cat(flat);
}

}  // namespace

std::vector<int> partition_parameters(const std::vector<torch::Tensor>& params, int world) {
  int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  std::vector<int> owners;
  owners.reserve(params.size());
  int64_t before = 0;
  for (const auto& p : params) {
    // Midpoint rule: rank k owns the parameters whose middle element lies in
    // [k * total / world, (k + 1) * total / world).
    const double mid = static_cast<double>(before) + 0.5 * static_cast<double>(p.numel());
    const int owner = total == 0 ? 0 : static_cast<int>(mid * world / static_cast<double>(total));
    owners.push_back(std::min(world - 1, owner));
    before += p.numel();
  }
  return owners;
}

ShardedAdamW::ShardedAdamW(ProcessGroup& pg, const std::vector<torch::Tensor>& params,
                           torch::optim::AdamWOptions options, int64_t bucket_bytes)
    : ShardedAdamW(pg, params, partition_parameters(params, pg.world_size()), options, bucket_bytes) {}

ShardedAdamW::ShardedAdamW(ProcessGroup& pg, const std::vector<torch::Tensor>& params, std::vector<int> owners,
                           torch::optim::AdamWOptions options, int64_t bucket_bytes)
    : torch::optim::AdamW(owned_by(params, owners, pg.rank()), options),
      pg_(pg),
      all_(params),
      owners_(std::move(owners)) {
  // Buckets hold parameters of one owner and one dtype, at most about
  // bucket_bytes each (a single larger tensor is a bucket of its own).
  int64_t bytes = 0;
  for (size_t i = 0; i < all_.size(); ++i) {
    const int64_t b = all_[i].numel() * all_[i].element_size();
    const bool same = !buckets_.empty() && buckets_.back().owner == owners_[i] &&
                      all_[buckets_.back().params.front()].scalar_type() == all_[i].scalar_type();
    if (!same || bytes + b > bucket_bytes) {
      buckets_.push_back({owners_[i], {}});
      bytes = 0;
    }
    buckets_.back().params.push_back(i);
    bytes += b;
  }
}

void ShardedAdamW::reduce_gradients() {
  if (pg_.world_size() == 1) return;
  torch::NoGradGuard no_grad;
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> grads;
    for (size_t i : bucket.params) {
      auto& p = all_[i];
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad());
    }
    auto flat = flatten(grads);
    pg_.reduce(flat, bucket.owner, ProcessGroup::Op::kSum);
    if (bucket.owner != pg_.rank()) continue;
    int64_t off = 0;
    for (size_t i : bucket.params) {
      auto& p = all_[i];
      p.mutable_grad().copy_(flat.slice(0, off, off + p.numel()).view_as(p));
      off += p.numel();
    }
  }
}

torch::Tensor ShardedAdamW::step(LossClosure closure) {
  auto loss = torch::optim::AdamW::step(closure);
  if (pg_.world_size() == 1) return loss;
  torch::NoGradGuard no_grad;
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> values;
    for (size_t i : bucket.params) values.push_back(all_[i].detach());
    int64_t n = 0;
    for (const auto& v : values) n += v.numel();
    auto flat = bucket.owner == pg_.rank() ? flatten(values) : torch::empty({n}, values.front().options());
    pg_.broadcast(flat, bucket.owner);
    if (bucket.owner == pg_.rank()) continue;
    int64_t off = 0;
    for (auto& v : values) {
      v.copy_(flat.slice(0, off, off + v.numel()).view_as(v));
      off += v.numel();
    }
  }
  return loss;
}

}  // namespace agentrl::dist
