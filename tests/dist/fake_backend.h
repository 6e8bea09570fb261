// A fake c10d backend for tests: rank 0 of a pretend two-rank group whose
// other rank mirrors this one (holds the same tensors). A sum doubles, min,
// max and broadcast keep the values, all-gather repeats them, barrier returns.
// It records every tensor it is handed and rejects (TORCH_CHECK) any that is
// not on `device`, as NCCL rejects host tensors.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/torch.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

#include <string>
#include <vector>

#include "agentrl/dist/process_group.h"

namespace agentrl::dist::testing {

class DoneWork : public c10d::Work {
 public:
  bool isCompleted() override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
};

class MirrorBackend : public C10dBackend {
 public:
  struct Call {
    std::string op;
    torch::Device device;
    torch::Dtype dtype;
    int64_t numel = 0;
  };
  explicit MirrorBackend(torch::Device device) : C10dBackend(0, 2), device_(device) {}
  const std::string getBackendName() const override { return "mirror"; }
  std::vector<Call> calls;

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& ts, const c10d::AllreduceOptions& o) override {
    accept("allreduce", ts);
    if (o.reduceOp == c10d::ReduceOp::SUM)
      for (auto& t : ts) t.mul_(2);
    return c10::make_intrusive<DoneWork>();
  }
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& ts, const c10d::ReduceOptions& o) override {
    accept("reduce", ts);
    if (o.reduceOp == c10d::ReduceOp::SUM)
      for (auto& t : ts) t.mul_(2);
    return c10::make_intrusive<DoneWork>();
  }
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& ts, const c10d::BroadcastOptions&) override {
    accept("broadcast", ts);
    return c10::make_intrusive<DoneWork>();
  }
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in,
                                           const c10d::AllgatherOptions&) override {
    accept("allgather", in);
    for (auto& o : out[0]) o.copy_(in[0]);
    return c10::make_intrusive<DoneWork>();
  }
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions&) override {
    calls.push_back({"barrier", device_, torch::kFloat32});
    return c10::make_intrusive<DoneWork>();
  }

 private:
  void accept(const char* op, const std::vector<at::Tensor>& ts) {
    for (const auto& t : ts) {
      TORCH_CHECK(t.device() == device_, "mirror backend: ", op, " of a tensor on ", t.device(), ", expected ",
                  device_);
      calls.push_back({op, t.device(), t.scalar_type(), t.numel()});
    }
  }
  torch::Device device_;
};

}  // namespace agentrl::dist::testing
