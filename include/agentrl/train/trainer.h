// Trainer: the RL loop of `agentrl train`.
//
// Per iteration: sample B tasks (seeded cursor over the train split) -> G
// episodes each -> filters (re-sampling groups dropped by dynamic sampling)
// -> advantage estimator -> pi_old (and pi_ref) -> PPO update -> metrics ->
// periodic evaluation and checkpoint. Before RL, a fresh run can train a
// tokenizer, initialise a policy and run the SFT warm start (sft.enabled).
//
// Resume (`--resume auto|PATH`) restores parameters, optimizer, iteration,
// task cursor and every RNG stream; in deterministic mode the resumed run is
// bit-identical to an uninterrupted one. SIGTERM/SIGINT finish the current
// iteration, write a checkpoint and return normally; during SFT they stop it
// at the next step and return without a checkpoint (no state to resume).
//
// Thread-safety: one Trainer per process, driven by one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "agentrl/dist/process_group.h"
#include "agentrl/train/experiment_config.h"

namespace agentrl::train {

struct TrainOptions {
  std::string resume;  // "" | "auto" | checkpoint path
  // Stop after this many iterations of this process (testing preemption); < 0 = off.
  int64_t stop_after_iterations = -1;
  // Builds the process group of a multi-process run (world size > 1 from the
  // launcher's variables); unset = c10d over a TCPStore rendezvous (Gloo on
  // CPU, NCCL on CUDA). Tests pass groups over fake backends.
  std::function<std::unique_ptr<dist::ProcessGroup>(const dist::Rendezvous&, torch::Device,
                                                    std::chrono::milliseconds)>
      make_process_group;
};

struct TrainSummary {
  int64_t iterations_done = 0;
  bool interrupted = false;  // stopped by a signal (checkpoint written)
  std::string run_dir;
  std::string last_checkpoint;
  double final_eval_success = -1.0;  // -1 when no final evaluation ran
};

class Trainer {
 public:
  Trainer(ExperimentConfig cfg, TrainOptions options);
  ~Trainer();
  TrainSummary run();

  // Set by SIGTERM/SIGINT handlers (installed by `agentrl train`).
  static std::atomic<bool>& stop_requested();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Installs SIGTERM/SIGINT handlers that set Trainer::stop_requested().
void install_stop_signal_handlers();

}  // namespace agentrl::train
