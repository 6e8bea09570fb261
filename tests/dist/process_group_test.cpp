// ProcessGroup over a fake c10d backend: the tensors every collective hands
// the backend are on the group's device (NCCL takes CUDA tensors only), host
// values travel through that device, and a tensor on another device is
// refused by name before it reaches the backend.
#include <gtest/gtest.h>

#include "agentrl/core/error.h"
#include "agentrl/dist/process_group.h"
#include "agentrl/dist/zero_optimizer.h"
#include "dist/fake_backend.h"

namespace agentrl::dist {
namespace {

using testing::MirrorBackend;

struct Fixture {
  c10::intrusive_ptr<MirrorBackend> backend;
  std::unique_ptr<ProcessGroup> pg;
  explicit Fixture(torch::Device d) : backend(c10::make_intrusive<MirrorBackend>(d)) {
    pg = std::make_unique<ProcessGroup>(backend, 0, 2, d, "mirror");
  }
};

TEST(ProcessGroupDevices, HostStatisticsTravelThroughTheGroupsDevice) {
  Fixture f(torch::kCPU);
  C10dCollective coll(*f.pg);
  std::vector<double> v{1.5, -2.0};
  coll.all_reduce_sum(v);
  EXPECT_EQ(v, (std::vector<double>{3.0, -4.0}));
  EXPECT_EQ(f.pg->all_gather_host(7), (std::vector<int64_t>{7, 7}));
  ASSERT_EQ(f.backend->calls.size(), 2u);
  for (const auto& c : f.backend->calls) EXPECT_EQ(c.device, f.pg->device());
}

TEST(ProcessGroupDevices, ATensorOnAnotherDeviceIsRefusedBeforeTheBackend) {
  Fixture f(torch::Device(torch::kMeta));  // stands for "cuda:0": any device that is not the host
  auto host = torch::ones({3});
  for (auto op : {0, 1, 2, 3}) {
    try {
      if (op == 0) f.pg->all_reduce(host);
      if (op == 1) f.pg->broadcast(host, 0);
      if (op == 2) f.pg->reduce(host, 0);
      if (op == 3) f.pg->all_gather(host);
      FAIL() << "op " << op << " accepted a host tensor";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("on cpu"), std::string::npos) << msg;
      EXPECT_NE(msg.find("tensors on meta"), std::string::npos) << msg;
    }
  }
  EXPECT_TRUE(f.backend->calls.empty());
}

TEST(ProcessGroupDevices, GradientSynchronizerAndShardedAdamWReduceOnTheGroupsDevice) {
  Fixture f(torch::kCPU);
  torch::nn::Linear lin(4, 3);
  for (auto& p : lin->parameters()) p.mutable_grad() = torch::ones_like(p);
  GradientSynchronizer sync(*f.pg, lin->parameters(), 16);
  sync.all_reduce(/*average=*/false);
  for (auto& p : lin->parameters()) EXPECT_TRUE(torch::equal(p.grad(), torch::full_like(p, 2.0)));
  ShardedAdamW opt(*f.pg, lin->parameters(), torch::optim::AdamWOptions(1e-3));
  opt.reduce_gradients();
  opt.step();
  EXPECT_FALSE(f.backend->calls.empty());
  for (const auto& c : f.backend->calls) EXPECT_EQ(c.device, f.pg->device());
}

TEST(ParameterHash, AnyBitOfAnyParameterChangesIt) {
  torch::manual_seed(0);
  torch::nn::Linear lin(8, 8);
  lin->to(torch::kBFloat16);
  const uint64_t h = parameter_hash(*lin);
  EXPECT_EQ(parameter_hash(*lin), h);
  torch::NoGradGuard g;
  auto bits = lin->weight.view(torch::kInt16);
  bits[5][3].bitwise_xor_(1);  // the lowest mantissa bit of one weight
  EXPECT_NE(parameter_hash(*lin), h);
  bits[5][3].bitwise_xor_(1);
  EXPECT_EQ(parameter_hash(*lin), h);
}

}  // namespace
}  // namespace agentrl::dist
