// Trajectories -> TrainBatch tensors, and micro-batches by token budget.
//
// Full mode: one row per trajectory = concat over turns of (context tokens,
// generated tokens). Window mode: one row per turn = (its prompt, its
// generated tokens). loss_mask is 1 exactly on generated tokens of
// trajectories that are not loss_masked; behaviour log-probs / entropies sit
// at the positions of the tokens they belong to (see train_batch.h).
// Failed trajectories must not be passed in.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "agentrl/rollout/train_batch.h"
#include "agentrl/rollout/trajectory.h"

namespace agentrl::rollout {

// Builds the batch (advantages zero, old_logprobs = behaviour log-probs,
// ref_logprobs undefined). Rows longer than max_tokens are an error (the
// rollout's context limit prevents them).
TrainBatch build_train_batch(const std::vector<Trajectory>& trajectories, int64_t max_tokens = 1 << 30);

// The token sequence of row `turn` (window) or of the whole trajectory (full,
// turn = -1), exactly as the generator saw and produced it.
std::vector<int32_t> sequence_tokens(const Trajectory& t, int64_t turn = -1);

// Splits rows into micro-batches of at most `token_budget` padded tokens
// (rows sorted by length so padding is small; a row longer than the budget
// gets a micro-batch of its own). Deterministic.
std::vector<std::vector<int64_t>> plan_micro_batches(const TrainBatch& batch, int64_t token_budget);

// Rows `rows` of `batch`, trimmed to their longest real length.
TrainBatch select_rows(const TrainBatch& batch, const std::vector<int64_t>& rows);

}  // namespace agentrl::rollout
