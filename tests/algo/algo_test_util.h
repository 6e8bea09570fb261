// Builders for crafted trajectories and a fake multi-rank collective, shared
// by the algo tests.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agentrl/core/collective.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::algo::testing {

// A turn with one generated token per entropy value.
inline rollout::Turn make_turn(std::vector<float> entropies, const std::string& obs = "", double reward = 0.0) {
  rollout::Turn t;
  t.generated_tokens.assign(entropies.size(), 7);
  t.logprobs.assign(entropies.size(), -1.0f);
  t.entropies = std::move(entropies);
  t.observation_before = obs;
  t.reward = reward;
  return t;
}

// A trajectory whose turns each generate `tokens_per_turn[k]` tokens of entropy 1.
inline rollout::Trajectory make_traj(int64_t group, int64_t sample, double reward, std::vector<int> tokens_per_turn = {1}) {
  rollout::Trajectory t;
  t.group_id = group;
  t.sample_index = sample;
  t.reward = reward;
  t.episode_id = std::to_string(group) + "-" + std::to_string(sample);
  for (int n : tokens_per_turn) t.turns.push_back(make_turn(std::vector<float>(static_cast<size_t>(n), 1.0f)));
  return t;
}

// A trajectory whose turn k generates one token per entry of entropies[k].
inline rollout::Trajectory make_episode(int64_t group, int64_t sample, double reward,
                                        std::vector<std::vector<float>> entropies) {
  rollout::Trajectory t;
  t.group_id = group;
  t.sample_index = sample;
  t.reward = reward;
  t.episode_id = std::to_string(group) + "-" + std::to_string(sample);
  for (auto& e : entropies) t.turns.push_back(make_turn(e));
  return t;
}

// In-process collective for `world` ranks that run on separate threads: each
// reduction blocks until every rank has contributed, like a real all-reduce.
class ThreadCollectiveGroup {
 public:
  explicit ThreadCollectiveGroup(int world) : world_(world) {}

  class Rank final : public Collective {
   public:
    Rank(ThreadCollectiveGroup& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int world_size() const override { return g_.world_; }
    void all_reduce_sum(std::vector<double>& v) override { g_.reduce(v, [](double a, double b) { return a + b; }); }
    void all_reduce_min(std::vector<double>& v) override { g_.reduce(v, [](double a, double b) { return a < b ? a : b; }); }
    void all_reduce_max(std::vector<double>& v) override { g_.reduce(v, [](double a, double b) { return a > b ? a : b; }); }

   private:
    ThreadCollectiveGroup& g_;
    int rank_;
  };

  // Runs body(rank, collective) on `world` threads and joins them.
  void run(const std::function<void(int, Collective&)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < world_; ++r) {
      threads.emplace_back([this, r, &body] {
        Rank c(*this, r);
        body(r, c);
      });
    }
    for (auto& t : threads) t.join();
  }

 private:
  void reduce(std::vector<double>& v, const std::function<double(double, double)>& op) {
    std::unique_lock<std::mutex> lock(m_);
    if (arrived_ == 0) acc_ = v;
    else for (size_t i = 0; i < v.size(); ++i) acc_[i] = op(acc_[i], v[i]);
    const int64_t gen = generation_;
    if (++arrived_ == world_) {
      result_ = acc_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
    v = result_;
  }

  int world_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  std::vector<double> acc_, result_;
};

}  // namespace agentrl::algo::testing
