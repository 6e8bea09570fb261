#define USE_C10D_GLOO 1
#include "agentrl/dist/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#if defined(AGENTRL_WITH_CUDA)
#define USE_C10D_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "agentrl/core/error.h"

namespace agentrl::dist {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != 0) ? v : nullptr;
}

int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (end == v || *end != 0 || x < 0 || x > 1 << 20)
    throw ConfigError(std::string("environment variable ") + name + "='" + v + "' is not a non-negative integer");
  return static_cast<int>(x);
}

}  // namespace

Rendezvous rendezvous_from_env() {
  Rendezvous r;
  if (env("WORLD_SIZE") || env("RANK")) {
    r.source = "torchrun";
    r.rank = env_int("RANK", 0);
    r.world_size = env_int("WORLD_SIZE", 1);
    r.local_rank = env_int("LOCAL_RANK", 0);
  } else if (env("SLURM_PROCID") && env("SLURM_NTASKS")) {
    r.source = "slurm";
    r.rank = env_int("SLURM_PROCID", 0);
    r.world_size = env_int("SLURM_NTASKS", 1);
    r.local_rank = env_int("SLURM_LOCALID", 0);
  } else if (env("OMPI_COMM_WORLD_RANK")) {
    r.source = "mpi";
    r.rank = env_int("OMPI_COMM_WORLD_RANK", 0);
    r.world_size = env_int("OMPI_COMM_WORLD_SIZE", 1);
    r.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
  }
  if (r.world_size < 1) throw ConfigError("WORLD_SIZE must be at least 1");
  if (r.rank >= r.world_size)
    throw ConfigError("rank " + std::to_string(r.rank) + " is not below the world size " +
                      std::to_string(r.world_size) + " (" + r.source + " variables)");
  if (const char* a = env("MASTER_ADDR")) r.master_addr = a;
  else if (r.world_size > 1 && r.source != "torchrun")
    throw ConfigError("MASTER_ADDR is not set for a " + std::to_string(r.world_size) + "-process " + r.source +
                      " job (export the address of the rank-0 host)");
  r.master_port = env_int("MASTER_PORT", r.master_port);
  if (r.master_port < 1 || r.master_port > 65535)
    throw ConfigError("MASTER_PORT " + std::to_string(r.master_port) + " is not a valid port");
  return r;
}

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<C10dBackend> pg;
  torch::Device device = torch::kCPU;

  // NCCL accepts only CUDA tensors and Gloo is fed host tensors here: a
  // tensor on another device is a bug of the caller, reported by name.
  void check(const torch::Tensor& t, const char* op) const {
    if (t.device() != device)
      throw Error(std::string("collective ") + op + " was given a tensor on " + t.device().str() +
                  ", but this process group reduces tensors on " + device.str() +
                  " (host values go through all_reduce_host / all_gather_host)");
  }
};

ProcessGroup::ProcessGroup(const Rendezvous& rv, torch::Device device, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()), rank_(rv.rank), world_(rv.world_size) {
  impl_->device = device;
  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(rv.master_port);
  so.isServer = rv.rank == 0;
  so.numWorkers = rv.world_size;
  so.waitWorkers = true;
  so.timeout = timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(rv.master_addr, so);
  } catch (const std::exception& e) {
    throw IoError("rendezvous with " + rv.master_addr + ":" + std::to_string(rv.master_port) + " failed (rank " +
                  std::to_string(rv.rank) + " of " + std::to_string(rv.world_size) + "): " + e.what());
  }
  if (device.is_cuda()) {
#if defined(AGENTRL_WITH_CUDA)
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout;
    impl_->pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, rv.rank, rv.world_size, opts);
    backend_name_ = "nccl";
#else
    throw ConfigError("device is CUDA but this agentrl build has no CUDA LibTorch (NCCL unavailable)");
#endif
  } else {
    auto opts = c10d::ProcessGroupGloo::Options::create();
    opts->timeout = timeout;
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    if (rv.master_addr != "127.0.0.1" && rv.master_addr != "localhost") {
      opts->devices.clear();
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    impl_->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rv.rank, rv.world_size, opts);
    backend_name_ = "gloo";
  }
}

ProcessGroup::ProcessGroup(c10::intrusive_ptr<C10dBackend> backend, int rank, int world_size, torch::Device device,
                           std::string backend_name)
    : impl_(std::make_unique<Impl>()), rank_(rank), world_(world_size), backend_name_(std::move(backend_name)) {
  impl_->pg = std::move(backend);
  impl_->device = device;
}

ProcessGroup::~ProcessGroup() = default;

torch::Device ProcessGroup::device() const { return impl_->device; }

static c10d::ReduceOp to_c10d(ProcessGroup::Op op) {
  switch (op) {
    case ProcessGroup::Op::kSum: return c10d::ReduceOp::SUM;
    case ProcessGroup::Op::kMin: return c10d::ReduceOp::MIN;
    case ProcessGroup::Op::kMax: return c10d::ReduceOp::MAX;
  }
  return c10d::ReduceOp::SUM;
}

void ProcessGroup::all_reduce(torch::Tensor& t, Op op) {
  if (world_ == 1) return;
  impl_->check(t, "all_reduce");
  std::vector<torch::Tensor> v{t};
  c10d::AllreduceOptions o;
  o.reduceOp = to_c10d(op);
  impl_->pg->allreduce(v, o)->wait();
}

void ProcessGroup::broadcast(torch::Tensor& t, int root) {
  if (world_ == 1) return;
  impl_->check(t, "broadcast");
  std::vector<torch::Tensor> v{t};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  impl_->pg->broadcast(v, o)->wait();
}

void ProcessGroup::reduce(torch::Tensor& t, int root, Op op) {
  if (world_ == 1) return;
  impl_->check(t, "reduce");
  std::vector<torch::Tensor> v{t};
  c10d::ReduceOptions o;
  o.rootRank = root;
  o.reduceOp = to_c10d(op);
  impl_->pg->reduce(v, o)->wait();
}

std::vector<torch::Tensor> ProcessGroup::all_gather(const torch::Tensor& t) {
  if (world_ == 1) return {t.clone()};
  impl_->check(t, "all_gather");
  std::vector<std::vector<torch::Tensor>> out(1);
  for (int i = 0; i < world_; ++i) out[0].push_back(torch::empty_like(t));
  std::vector<torch::Tensor> in{t};
  impl_->pg->allgather(out, in)->wait();
  return out[0];
}

void ProcessGroup::barrier() {
  if (world_ == 1) return;
  c10d::BarrierOptions o;
  // NCCL's barrier is an all-reduce on a device it guesses from the rank
  // unless told: name this rank's GPU.
  if (impl_->device.is_cuda() && impl_->device.has_index()) o.device_ids = {impl_->device.index()};
  impl_->pg->barrier(o)->wait();
}

void ProcessGroup::all_reduce_host(std::vector<double>& values, Op op) {
  if (values.empty() || world_ == 1) return;
  auto t = torch::tensor(values, torch::kFloat64).to(impl_->device);
  all_reduce(t, op);
  auto host = t.to(torch::kCPU);
  auto a = host.accessor<double, 1>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = a[static_cast<int64_t>(i)];
}

std::vector<int64_t> ProcessGroup::all_gather_host(int64_t value) {
  if (world_ == 1) return {value};
  auto t = torch::tensor({value}, torch::kInt64).to(impl_->device);
  auto all = torch::cat(all_gather(t)).to(torch::kCPU);
  return std::vector<int64_t>(all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel());
}

void C10dCollective::reduce(std::vector<double>& values, ProcessGroup::Op op) { pg_.all_reduce_host(values, op); }
void C10dCollective::all_reduce_sum(std::vector<double>& v) { reduce(v, ProcessGroup::Op::kSum); }
void C10dCollective::all_reduce_min(std::vector<double>& v) { reduce(v, ProcessGroup::Op::kMin); }
void C10dCollective::all_reduce_max(std::vector<double>& v) { reduce(v, ProcessGroup::Op::kMax); }

GradientSynchronizer::GradientSynchronizer(ProcessGroup& pg, std::vector<torch::Tensor> params, int64_t bucket_bytes)
    : pg_(pg), params_(std::move(params)) {
  int64_t cur = 0;
  buckets_.emplace_back();
  for (size_t i = 0; i < params_.size(); ++i) {
    const int64_t bytes = params_[i].numel() * params_[i].element_size();
    if (cur > 0 && cur + bytes > bucket_bytes) {
      buckets_.emplace_back();
      cur = 0;
    }
    buckets_.back().push_back(i);
    cur += bytes;
  }
}

void GradientSynchronizer::all_reduce(bool average) {
  if (pg_.world_size() == 1) return;
  torch::NoGradGuard g;
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> grads;
    for (size_t i : bucket) {
      auto& p = params_[i];
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad().reshape({-1}));
    }
    auto flat = torch::cat(grads);
    pg_.all_reduce(flat, ProcessGroup::Op::kSum);
    if (average) flat.div_(pg_.world_size());
    int64_t off = 0;
    for (size_t i : bucket) {
      auto& p = params_[i];
      const int64_t n = p.numel();
      p.mutable_grad().copy_(flat.slice(0, off, off + n).view_as(p));
      off += n;
    }
  }
}

void broadcast_parameters(ProcessGroup& pg, torch::nn::Module& module, int root) {
  torch::NoGradGuard g;
  for (auto& p : module.parameters()) {
    auto t = p.detach();
    pg.broadcast(t, root);
  }
}

namespace {

// Wrapping 64-bit multiply-add constants of a SplitMix64-style mixer.
constexpr int64_t kMulWord = static_cast<int64_t>(0x9E3779B97F4A7C15ULL);
constexpr int64_t kMulPos = static_cast<int64_t>(0xC2B2AE3D27D4EB4FULL);
constexpr int64_t kMulMix = static_cast<int64_t>(0xBF58476D1CE4E5B9ULL);

// Sum over the elements of mix(bits, position), as a 0-d int64 tensor on the
// parameter's device. Integer sums wrap and are exact, so the result does not
// depend on the order of the reduction. Chunked to bound the temporaries.
torch::Tensor device_digest(const torch::Tensor& param) {
  auto flat = param.detach().contiguous().reshape({-1});
  const auto size = flat.element_size();
  const auto word = size == 2 ? torch::kInt16 : size == 4 ? torch::kInt32 : size == 8 ? torch::kInt64 : torch::kUInt8;
  auto bits = flat.view(word);
  const auto opts = torch::TensorOptions().device(bits.device()).dtype(torch::kInt64);
  auto total = torch::zeros({}, opts);
  constexpr int64_t kChunk = 1 << 24;
  for (int64_t begin = 0; begin < bits.numel(); begin += kChunk) {
    const int64_t end = std::min<int64_t>(bits.numel(), begin + kChunk);
    auto w = bits.slice(0, begin, end).to(torch::kInt64);
    auto x = w.mul(kMulWord).add(torch::arange(begin, end, opts).mul(kMulPos));
    x = x.bitwise_xor(x.__rshift__(31)).mul(kMulMix);
    total.add_(x.sum());
  }
  return total;
}

}  // namespace

uint64_t parameter_hash(torch::nn::Module& module) {
  // Per-parameter digests on the device, one copy to the host, then FNV-1a
  // over each name and digest.
  std::vector<std::string> names;
  std::vector<torch::Tensor> digests;
  torch::NoGradGuard no_grad;
  for (const auto& p : module.named_parameters()) {
    names.push_back(p.key());
    digests.push_back(device_digest(p.value()));
  }
  if (names.empty()) return 0;
  const auto host = torch::stack(digests).to(torch::kCPU);
  const auto* values = host.data_ptr<int64_t>();
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < names.size(); ++i) {
    for (char c : names[i]) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    const auto d = static_cast<uint64_t>(values[i]);
    for (int b = 0; b < 8; ++b) h = (h ^ ((d >> (8 * b)) & 0xFF)) * 1099511628211ULL;
  }
  return h;
}

bool parameters_in_sync(ProcessGroup& pg, torch::nn::Module& module) {
  const auto h = static_cast<int64_t>(parameter_hash(module));
  for (int64_t x : pg.all_gather_host(h))
    if (x != h) return false;
  return true;
}

}  // namespace agentrl::dist
