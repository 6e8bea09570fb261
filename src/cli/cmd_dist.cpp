// `agentrl dist selftest` (collectives check, run under `agentrl launch`)
// and `agentrl bench allreduce` (Gloo/NCCL all-reduce bandwidth).
#include <chrono>
#include <iostream>

#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/dist/device_binding.h"
#include "agentrl/dist/process_group.h"

namespace agentrl::cli {
namespace {

void expect(bool ok, const std::string& what) {
  if (!ok) throw Error("dist selftest failed: " + what);
}

void selftest(const std::string& device_name) {
  auto rv = dist::rendezvous_from_env();
  const auto device = dist::bind_rank_device(device_name, rv.world_size, rv.local_rank);
  dist::ProcessGroup pg(rv, device, std::chrono::seconds(60));
  const int W = pg.world_size(), r = pg.rank();
  auto t = torch::tensor({double(r + 1)}, torch::kFloat64).to(device);
  pg.all_reduce(t);
  expect(t.item<double>() == W * (W + 1) / 2.0, "all_reduce sum");
  dist::C10dCollective coll(pg);
  std::vector<double> v{double(r), -double(r)};
  coll.all_reduce_max(v);
  expect(v[0] == W - 1 && v[1] == 0, "all_reduce max");
  torch::manual_seed(static_cast<uint64_t>(r));  // different init per rank
  torch::nn::Linear lin(4, 3);
  lin->to(device);
  dist::broadcast_parameters(pg, *lin, 0);
  expect(dist::parameters_in_sync(pg, *lin), "parameters in sync after broadcast");
  for (auto& p : lin->parameters()) p.mutable_grad() = torch::full_like(p, double(r + 1));
  dist::GradientSynchronizer sync(pg, lin->parameters(), 16);  // tiny buckets: several collectives
  sync.all_reduce(false);
  for (auto& p : lin->parameters())
    expect(torch::allclose(p.grad(), torch::full_like(p, W * (W + 1) / 2.0)), "gradient sum");
  if (r == W - 1) {
    torch::NoGradGuard g;
    lin->weight.add_(1e-3);
  }
  expect(!dist::parameters_in_sync(pg, *lin) || W == 1, "hash detects a diverged rank");
  pg.barrier();
  std::cout << "dist selftest ok: rank " << r << " of " << W << " (" << pg.backend_name() << " on "
            << device.str() << ", " << rv.source << ")" << std::endl;
}

void bench_allreduce(int64_t mb, int iters, const std::string& device_name) {
  auto rv = dist::rendezvous_from_env();
  const auto device = dist::bind_rank_device(device_name, rv.world_size, rv.local_rank);
  dist::ProcessGroup pg(rv, device, std::chrono::seconds(60));
  auto t = torch::ones({mb * (1 << 20) / 4}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  pg.all_reduce(t);  // warm-up
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) pg.all_reduce(t);
  if (device.is_cuda()) (void)t.sum().item<float>();  // NCCL work is asynchronous: wait for it
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  // Ring all-reduce moves 2 (W-1)/W of the buffer per rank ("bus bandwidth").
  const double W = pg.world_size();
  const double bus = 2.0 * (W - 1) / W * static_cast<double>(mb) / s;
  if (pg.rank() == 0)
    std::cout << "allreduce " << mb << " MiB x" << iters << " on " << pg.world_size() << " ranks (" << pg.backend_name()
              << "): " << s * 1e3 << " ms/op, algorithm bandwidth " << mb / s << " MiB/s, bus bandwidth " << bus
              << " MiB/s" << std::endl;
}

CommandRegistrar reg(51, [](CLI::App& root) {
  auto* grp = group(root, "dist", "Distributed training utilities");
  auto* st = grp->add_subcommand("selftest", "Check the collectives of this process group (run under agentrl launch)");
  auto st_device = std::make_shared<std::string>("cpu");
  st->add_option("--device", *st_device, "cpu (Gloo), or cuda / auto: one GPU per rank (NCCL)");
  st->callback([st_device] { selftest(*st_device); });
  auto* bench = group(root, "bench", "Benchmarks");
  auto* ar = bench->add_subcommand("allreduce", "All-reduce bandwidth of the process group (run under agentrl launch)");
  auto mb = std::make_shared<int64_t>(64);
  auto iters = std::make_shared<int>(10);
  ar->add_option("--mib", *mb, "buffer size in MiB");
  ar->add_option("--iters", *iters, "timed iterations");
  auto ar_device = std::make_shared<std::string>("cpu");
  ar->add_option("--device", *ar_device, "cpu (Gloo), or cuda / auto: one GPU per rank (NCCL)");
  ar->callback([mb, iters, ar_device] { bench_allreduce(*mb, *iters, *ar_device); });
});

}  // namespace
}  // namespace agentrl::cli
