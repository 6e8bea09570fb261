// Multi-process specifications of the data-parallel building blocks: ranks
// are processes forked from the test and joined by a Gloo group on loopback.
// ZeRO-1 (ShardedAdamW) against plain AdamW on the summed gradients, and
// EMPG's batch-global normalisation against the single-process computation.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "agentrl/algo/advantage.h"
#include "agentrl/algo/empg.h"
#include "agentrl/dist/process_group.h"
#include "agentrl/dist/zero_optimizer.h"
#include "agentrl/train/optim.h"
#include "algo/algo_test_util.h"

namespace fs = std::filesystem;

namespace agentrl {
namespace {

using RankBody = std::function<std::vector<double>(dist::ProcessGroup&)>;

// Runs body(pg) in `world` forked processes joined on 127.0.0.1:`port` and
// returns what each rank returned (rank order). A rank that throws, or a
// group that takes longer than 60 s, fails the test.
std::vector<std::vector<double>> run_ranks(int world, int port, const RankBody& body) {
  const fs::path dir = fs::temp_directory_path() / ("agentrl_ranks_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(port));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 1;
      try {
        torch::set_num_threads(1);
        dist::Rendezvous rv;
        rv.rank = r;
        rv.world_size = world;
        rv.master_port = port;
        std::vector<double> out;
        {
          dist::ProcessGroup pg(rv, torch::kCPU, std::chrono::seconds(30));
          out = body(pg);
        }
        std::ofstream f(dir / ("rank" + std::to_string(r)));
        f.precision(17);
        for (double x : out) f << x << "\n";
        f.close();
        code = f ? 0 : 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (size_t done = 0; done < pids.size();) {
    done = 0;
    for (auto& pid : pids) {
      if (pid < 0) {
        ++done;
        continue;
      }
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "a rank failed (status " << st << ")";
        pid = -1;
        ++done;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "ranks did not finish within 60 s";
      for (pid_t pid : pids)
        if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<std::vector<double>> out(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    std::ifstream f(dir / ("rank" + std::to_string(r)));
    for (double x; f >> x;) out[static_cast<size_t>(r)].push_back(x);
  }
  fs::remove_all(dir);
  return out;
}

// ---- ZeRO-1 ------------------------------------------------------------------

constexpr int kSteps = 3;
constexpr double kMaxNorm = 0.5;  // below the gradient norms: clipping is active

torch::nn::Sequential make_net() {
  torch::manual_seed(0);
  return torch::nn::Sequential(torch::nn::Linear(4, 8), torch::nn::Tanh(), torch::nn::Linear(8, 3));
}

torch::optim::AdamWOptions adamw_options() { return torch::optim::AdamWOptions(0.05).weight_decay(0.01); }

// The loss rank `rank` contributes at `step`: its own inputs.
torch::Tensor rank_loss(torch::nn::Sequential& net, int step, int rank) {
  torch::manual_seed(100 + 10 * step + rank);
  auto x = torch::randn({5, 4});
  return net->forward(x).pow(2).sum();
}

std::vector<double> flat_parameters(torch::nn::Sequential& net) {
  std::vector<double> out;
  for (const auto& p : net->parameters()) {
    auto t = p.detach().reshape({-1}).to(torch::kFloat64);
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t[i].item<double>());
  }
  return out;
}

// Data-parallel steps [first, kSteps) with ZeRO-1; returns the global norms.
std::vector<double> sharded_steps(dist::ProcessGroup& pg, torch::nn::Sequential& net, dist::ShardedAdamW& opt,
                                  int first) {
  const auto sum_over_ranks = [&pg](double x) {
    auto t = torch::tensor({x}, torch::kFloat64);
    pg.all_reduce(t);
    return t.item<double>();
  };
  std::vector<double> norms;
  for (int step = first; step < kSteps; ++step) {
    net->zero_grad();
    rank_loss(net, step, pg.rank()).backward();
    opt.reduce_gradients();
    norms.push_back(train::clip_grad_norm(opt.owned_parameters(), kMaxNorm, sum_over_ranks));
    opt.step();
  }
  return norms;
}

// Layout of a rank's result: kSteps gradient norms, the number of tensors
// this rank's optimizer holds, then every parameter.
std::vector<double> sharded_training(dist::ProcessGroup& pg) {
  auto net = make_net();
  dist::ShardedAdamW opt(pg, net->parameters(), adamw_options());
  auto out = sharded_steps(pg, net, opt, 0);
  out.push_back(static_cast<double>(opt.owned_parameters().size()));
  auto params = flat_parameters(net);
  out.insert(out.end(), params.begin(), params.end());
  return out;
}

// One process, plain AdamW, the gradient of both ranks' losses.
std::vector<double> unsharded_training(dist::ProcessGroup&) {
  auto net = make_net();
  torch::optim::AdamW opt(net->parameters(), adamw_options());
  std::vector<double> out;
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    (rank_loss(net, step, 0) + rank_loss(net, step, 1)).backward();
    out.push_back(train::clip_grad_norm(*net, kMaxNorm));
    opt.step();
  }
  out.push_back(static_cast<double>(net->parameters().size()));
  auto params = flat_parameters(net);
  out.insert(out.end(), params.begin(), params.end());
  return out;
}

TEST(ZeroOptimizer, TwoRankShardedAdamWEqualsAdamWOnTheSummedGradients) {
  const auto sharded = run_ranks(2, 29651, sharded_training);
  const auto single = run_ranks(1, 29652, unsharded_training);
  ASSERT_EQ(sharded[0].size(), single[0].size());
  ASSERT_EQ(sharded[1].size(), single[0].size());
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_GT(single[0][step], kMaxNorm) << "clipping must be active at step " << step;
    EXPECT_NEAR(sharded[0][step], single[0][step], 1e-9 * single[0][step]) << "global norm, step " << step;
    EXPECT_EQ(sharded[0][step], sharded[1][step]) << "ranks disagree on the global norm";
  }
  // Each rank holds AdamW state for its share only; the shares cover all.
  const double owned0 = sharded[0][kSteps], owned1 = sharded[1][kSteps], total = single[0][kSteps];
  EXPECT_GT(owned0, 0);
  EXPECT_GT(owned1, 0);
  EXPECT_EQ(owned0 + owned1, total);
  // Identical parameters on both ranks; equal to the unsharded optimizer up to
  // float32 rounding of the gradient sums (tolerance 1e-6 absolute).
  for (size_t i = kSteps + 1; i < single[0].size(); ++i) {
    EXPECT_EQ(sharded[0][i], sharded[1][i]) << "parameter element " << i;
    EXPECT_NEAR(sharded[0][i], single[0][i], 1e-6) << "parameter element " << i;
  }
}

// Step 0 with plain AdamW (as one process would), its state saved as a
// checkpoint's optimizer.pt, then steps 1.. sharded after loading it.
std::vector<double> sharded_training_from_unsharded_state(dist::ProcessGroup& pg, const std::string& dir) {
  auto net = make_net();
  {
    torch::optim::AdamW plain(net->parameters(), adamw_options());
    plain.zero_grad();
    (rank_loss(net, 0, 0) + rank_loss(net, 0, 1)).backward();
    train::clip_grad_norm(*net, kMaxNorm);
    plain.step();
    if (pg.rank() == 0) torch::save(plain, dir + "/optimizer.pt");
    pg.barrier();
  }
  dist::ShardedAdamW opt(pg, net->parameters(), adamw_options());
  train::load_optimizer_state(opt, dir);
  sharded_steps(pg, net, opt, 1);
  return flat_parameters(net);
}

TEST(ZeroOptimizer, UnshardedOptimizerStateLoadsIntoEachRanksShare) {
  const auto dir = fs::temp_directory_path() / ("agentrl_zero_state_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto resumed = run_ranks(2, 29654, [&](dist::ProcessGroup& pg) {
    return sharded_training_from_unsharded_state(pg, dir.string());
  });
  const auto single = run_ranks(1, 29655, unsharded_training);
  fs::remove_all(dir);
  ASSERT_EQ(resumed[0].size() + kSteps + 1, single[0].size());
  ASSERT_EQ(resumed[1].size(), resumed[0].size());
  // Fresh moments at step 1 would move the parameters elsewhere (AdamW's
  // first step is ~lr * sign(g)); the loaded ones continue the run exactly.
  for (size_t i = 0; i < resumed[0].size(); ++i) {
    EXPECT_EQ(resumed[0][i], resumed[1][i]) << "parameter element " << i;
    EXPECT_NEAR(resumed[0][i], single[0][i + kSteps + 1], 1e-6) << "parameter element " << i;
  }
}

// ---- EMPG across processes ------------------------------------------------------

using algo::testing::make_episode;

// Rank 0 rolls out groups 0 and 1 (low entropies), rank 1 groups 2 and 3
// (high entropies): each shard's own min/max and mean of g differ from the
// batch's, so only a batch-global computation matches one process.
std::vector<std::vector<rollout::Trajectory>> shards() {
  return {{make_episode(0, 0, 1.0, {{0.1f, 0.3f}, {0.2f}}), make_episode(0, 1, 0.0, {{0.5f}, {0.4f, 0.2f}}),
           make_episode(1, 0, 0.0, {{0.3f}}), make_episode(1, 1, 1.0, {{0.6f}, {0.1f}, {0.2f}})},
          {make_episode(2, 0, 1.0, {{2.0f, 3.5f}, {4.0f}}), make_episode(2, 1, 1.0, {{3.0f}}),
           make_episode(3, 0, 0.0, {{2.5f}, {3.9f}}), make_episode(3, 1, 1.0, {{2.2f, 2.8f}})}};
}

algo::AlgorithmConfig empg_config() {
  algo::AlgorithmConfig cfg;
  cfg.adv_estimator = "empg";
  cfg.options<algo::EmpgConfig>("empg").final_std_norm = true;
  return cfg;
}

std::vector<double> flatten(const algo::AdvantageResult& r) {
  std::vector<double> out;
  for (const auto& traj : r.turn_advantages) out.insert(out.end(), traj.begin(), traj.end());
  return out;
}

TEST(DistributedEmpg, BatchGlobalNormalisationOverTwoProcessesEqualsOneProcess) {
  const auto est = algo::make_estimator(empg_config());
  const auto parts = shards();
  auto per_rank = run_ranks(2, 29653, [&](dist::ProcessGroup& pg) {
    dist::C10dCollective c(pg);
    return flatten(est->compute(parts[static_cast<size_t>(pg.rank())], c));
  });
  std::vector<rollout::Trajectory> all = parts[0];
  all.insert(all.end(), parts[1].begin(), parts[1].end());
  LocalCollective local;
  const auto single = flatten(est->compute(all, local));
  std::vector<double> joined = per_rank[0];
  joined.insert(joined.end(), per_rank[1].begin(), per_rank[1].end());
  ASSERT_EQ(joined.size(), single.size());
  for (size_t i = 0; i < single.size(); ++i) EXPECT_NEAR(joined[i], single[i], 1e-6) << "step " << i;
  // The batch is one where normalising a shard on its own gives other
  // advantages (so the equality above needs the cross-process reductions).
  const auto shard_alone = flatten(est->compute(parts[0], local));
  double max_diff = 0;
  for (size_t i = 0; i < shard_alone.size(); ++i) max_diff = std::max(max_diff, std::abs(shard_alone[i] - single[i]));
  EXPECT_GT(max_diff, 1e-3);
}

}  // namespace
}  // namespace agentrl
