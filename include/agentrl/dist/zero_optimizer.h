// ZeRO-1 optimizer-state sharding for AdamW (Rajbhandari et al., 2020,
// "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
// stage 1: partitioned optimizer states).
//
// The parameters are split into `world` contiguous ranges of about equal
// element count (whole tensors, in the order given); rank r keeps AdamW
// moments only for range r, so optimizer memory per rank is ~1/world of the
// unsharded optimizer's. One data-parallel step is:
//   1. reduce_gradients(): each gradient bucket is summed onto the rank that
//      owns it (a c10d reduce per bucket — a reduce-scatter with uneven,
//      parameter-aligned shards; ProcessGroupGloo in LibTorch 1.13 has no
//      reduce_scatter). Other ranks' copies of that gradient are then stale.
//   2. The caller clips with the global norm: the squared norms of each
//      rank's owned gradients (owned_parameters()), summed over ranks.
//   3. step(): AdamW on the owned parameters, then every range is broadcast
//      from its owner, so all ranks end with identical parameters.
// AdamW is element-wise, so the result equals the unsharded optimizer's up to
// the floating-point order of the gradient sums.
//
// Thread-safety: like ProcessGroup, one thread per rank, and every rank
// calls reduce_gradients() and step() in the same order.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "agentrl/dist/process_group.h"

namespace agentrl::dist {

// Owner rank of every parameter: contiguous, non-decreasing ranges balanced by
// element count (a parameter goes to the rank its midpoint falls in). A rank
// may own nothing when a single tensor is larger than 1/world of the total.
std::vector<int> partition_parameters(const std::vector<torch::Tensor>& params, int world);

class ShardedAdamW final : public torch::optim::AdamW {
 public:
  // `params` must be the same tensors, in the same order, on every rank. The
  // AdamW base holds only this rank's parameters (its param_groups(), state
  // and save/load cover those alone). `pg` must outlive the optimizer.
  ShardedAdamW(ProcessGroup& pg, const std::vector<torch::Tensor>& params, torch::optim::AdamWOptions options,
               int64_t bucket_bytes = 25 << 20);

  // Sums every parameter's gradient over ranks onto its owner (undefined
  // gradients count as zero).
  void reduce_gradients();
  // AdamW step of the owned parameters, then each parameter broadcast from
  // its owner. Collective: all ranks must call it.
  torch::Tensor step(LossClosure closure = nullptr) override;

  const std::vector<torch::Tensor>& owned_parameters() const { return param_groups().front().params(); }
  const std::vector<torch::Tensor>& all_parameters() const { return all_; }
  const std::vector<int>& owners() const { return owners_; }
  int rank() const { return pg_.rank(); }
  int world_size() const { return pg_.world_size(); }
  ProcessGroup& process_group() const { return pg_; }

 private:
  ShardedAdamW(ProcessGroup& pg, const std::vector<torch::Tensor>& params, std::vector<int> owners,
               torch::optim::AdamWOptions options, int64_t bucket_bytes);

  struct Bucket {
    int owner = 0;
    std::vector<size_t> params;  // indices into all_
  };
  ProcessGroup& pg_;
  std::vector<torch::Tensor> all_;
  std::vector<int> owners_;
  std::vector<Bucket> buckets_;
};

}  // namespace agentrl::dist
