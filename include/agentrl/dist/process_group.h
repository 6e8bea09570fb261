// Process groups for data-parallel training, on PyTorch's c10d.
//
// rendezvous_from_env() reads the rank layout from the standard launcher
// variables: torchrun / `agentrl launch` (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT), Slurm (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, with MASTER_ADDR/MASTER_PORT from the sbatch script) and
// Open MPI's mpirun (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK). ProcessGroup
// joins a TCPStore rendezvous and creates ProcessGroupNCCL on CUDA (when the
// LibTorch build has it) or ProcessGroupGloo on CPU.
//
// C10dCollective adapts a ProcessGroup to agentrl::Collective (batch-global
// statistics of the estimators). GradientSynchronizer sums gradients across
// ranks in flat buckets. parameters_in_sync() compares a hash of every
// parameter across ranks.
//
// Devices: NCCL reduces CUDA tensors only, Gloo host tensors. Every tensor
// handed to a collective must be on the group's device() (an Error names the
// operation and both devices otherwise); host values (statistics, flags,
// hashes) travel through all_reduce_host / all_gather_host, which place them
// on that device and copy the result back.
//
// LibTorch 1.x derives the c10d backends from c10d::ProcessGroup, 2.x from
// c10d::Backend; C10dBackend names whichever this build has.
//
// Thread-safety: collectives must be issued in the same order on every rank,
// from one thread per rank.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/core/collective.h"

namespace c10d {
class ProcessGroup;
class Backend;
}  // namespace c10d

namespace agentrl::dist {

#if TORCH_VERSION_MAJOR >= 2
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

struct Rendezvous {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "none";  // torchrun | slurm | mpi | none
};

// Throws ConfigError when variables are inconsistent (rank >= world size,
// non-numeric values, missing MASTER_ADDR for a multi-process job).
Rendezvous rendezvous_from_env();

class ProcessGroup {
 public:
  // Joins the group (rank 0 hosts the TCPStore). Blocks until all ranks
  // joined or `timeout` elapsed (IoError naming the master address).
  // `timeout` bounds the rendezvous and every collective (dist.timeout_s).
  ProcessGroup(const Rendezvous& rv, torch::Device device,
               std::chrono::milliseconds timeout = std::chrono::minutes(30));
  // A group over an existing c10d backend of `world_size` ranks whose
  // tensors live on `device` (tests use it with fake backends).
  ProcessGroup(c10::intrusive_ptr<C10dBackend> backend, int rank, int world_size, torch::Device device,
               std::string backend_name);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_; }
  const std::string& backend_name() const { return backend_name_; }
  // The device of the tensors this group's backend reduces.
  torch::Device device() const;

  enum class Op { kSum, kMin, kMax };
  void all_reduce(torch::Tensor& t, Op op = Op::kSum);
  void broadcast(torch::Tensor& t, int root = 0);
  // Sums (min, max) `t` over ranks into rank `root`'s tensor; on the other
  // ranks `t` is left unspecified (Gloo may use it as scratch space).
  void reduce(torch::Tensor& t, int root, Op op = Op::kSum);
  std::vector<torch::Tensor> all_gather(const torch::Tensor& t);
  void barrier();
  // Host values through a float64 tensor on device(): one transfer each way.
  void all_reduce_host(std::vector<double>& values, Op op = Op::kSum);
  // Every rank's `value`, in rank order (an int64 tensor on device()).
  std::vector<int64_t> all_gather_host(int64_t value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_ = 1;
  std::string backend_name_;
};

class C10dCollective final : public Collective {
 public:
  explicit C10dCollective(ProcessGroup& pg) : pg_(pg) {}
  int rank() const override { return pg_.rank(); }
  int world_size() const override { return pg_.world_size(); }
  void all_reduce_sum(std::vector<double>& values) override;
  void all_reduce_min(std::vector<double>& values) override;
  void all_reduce_max(std::vector<double>& values) override;

 private:
  void reduce(std::vector<double>& values, ProcessGroup::Op op);
  ProcessGroup& pg_;
};

// Sums (or averages) the gradients of `params` across ranks, packing them
// into flat buckets of about `bucket_bytes` so few collectives are issued.
class GradientSynchronizer {
 public:
  GradientSynchronizer(ProcessGroup& pg, std::vector<torch::Tensor> params, int64_t bucket_bytes = 25 << 20);
  void all_reduce(bool average);

 private:
  ProcessGroup& pg_;
  std::vector<torch::Tensor> params_;
  std::vector<std::vector<size_t>> buckets_;
};

// Copies rank `root`'s parameters to every rank.
void broadcast_parameters(ProcessGroup& pg, torch::nn::Module& module, int root = 0);
// 64-bit hash of all parameter bytes (order of named_parameters()),
// computed on the parameters' device: one int64 per parameter comes back.
// Any change of any bit changes the hash with high probability.
uint64_t parameter_hash(torch::nn::Module& module);
// True when every rank has the same parameter_hash.
bool parameters_in_sync(ProcessGroup& pg, torch::nn::Module& module);

}  // namespace agentrl::dist
