// TrainerState: everything of an RL run that changes from iteration to
// iteration and that a checkpoint must restore for a bit-exact resume — the
// iteration, the SFT stage flag, the task cursor, the trainer's RNG stream
// and the update counters (LR schedule position, non-finite streak, the
// adaptive KL coefficient). Written and read by write_trainer_state /
// read_trainer_state (checkpoint.h) as trainer_state.json.
//
// Thread-safety: plain values, owned by the trainer thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/core/rng.h"
#include "agentrl/envs/env.h"

namespace agentrl::train {

// Seeded cursor over a split: epoch e visits the tasks in the order
// tasks.ordered(split, mix(seed, e)); (epoch, position) is the whole state.
struct TaskCursor {
  std::string split;
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t position = 0;
  std::vector<envs::Task> next(const envs::TaskSource& tasks, int64_t n);
};

struct UpdateCounters {
  int64_t optimizer_steps = 0;      // successful AdamW steps so far (drives the LR schedule)
  int64_t consecutive_skips = 0;    // non-finite steps in a row
  double kl_coef = -1;              // adaptive KL coefficient (< 0 = fixed)
};

struct TrainerState {
  int64_t iteration = 0;  // RL iterations completed
  bool sft_done = false;  // the SFT warm start has run
  TaskCursor cursor;
  Rng rng{0};             // mini-batch shuffling of the PPO update
  UpdateCounters counters;
};

// The state of a fresh run: the cursor at the start of `train_split`, the
// RNG stream and cursor seeded from runtime.seed.
TrainerState initial_trainer_state(int64_t runtime_seed, const std::string& train_split);

}  // namespace agentrl::train
