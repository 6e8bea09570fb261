// The device of one rank of a (possibly multi-process) run: one rank per GPU.
//
// A multi-process job (torchrun / `agentrl launch`, Slurm, mpirun) runs one
// process per GPU. Each rank takes the GPU of its LOCAL_RANK among the CUDA
// devices visible to it; when exactly one device is visible (a scheduler that
// sets CUDA_VISIBLE_DEVICES per task, as Slurm's --gpus-per-task does), that
// device is every rank's cuda:0. The configured `model.device` is what the
// user wrote (cpu, cuda, cuda:N, auto); checkpoints keep that text, and the
// per-rank choice is made anew at every start, so a resumed multi-GPU run is
// not a config change.
//
// Thread-safety: rank_device_name is pure; bind_rank_device sets the calling
// thread's current CUDA device (call it on the trainer thread before any CUDA
// work).
#pragma once

#include <torch/torch.h>

#include <string>

namespace agentrl::dist {

// The device name ("cpu", "cuda:K") rank `local_rank` of `world_size`
// processes uses when the config says `configured` and `visible_cuda` CUDA
// devices are visible to the process:
//   cpu                       -> cpu
//   auto                      -> as cuda when visible_cuda > 0, else cpu
//   cuda, cuda:N (world > 1)  -> cuda:local_rank, or cuda:0 when one device is visible
//   cuda:N (one process)      -> cuda:N
// Throws ConfigError for an unknown name, CUDA without visible devices, or an
// ordinal that is not below visible_cuda (naming LOCAL_RANK when it chose it).
std::string rank_device_name(const std::string& configured, int world_size, int local_rank, int visible_cuda);

// rank_device_name with this process's visible CUDA devices, then makes that
// device current (c10::cuda::set_device) so that NCCL and every allocation
// without an explicit index use it.
torch::Device bind_rank_device(const std::string& configured, int world_size, int local_rank);

}  // namespace agentrl::dist
