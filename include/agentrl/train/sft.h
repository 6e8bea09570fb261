// Supervised fine-tuning: next-token loss on assistant tokens (and, as an
// option, a down-weighted loss on what the env returned).
//
// Data comes from JSONL chat conversations ({"messages": [{"role", "content"}, ...]},
// rendered with the policy's chat template; loss on the assistant spans it
// reports) or from expert trajectories of an env (loss on generated tokens,
// exactly the tokens RL would train on). The loss is the mask-weighted mean
// over tokens: sum(w * nll) / sum(w).
//
// Thread-safety: trainer thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agentrl/core/rng.h"
#include "agentrl/model/transformer.h"
#include "agentrl/rollout/trajectory.h"
#include "agentrl/text/chat_template.h"
#include "agentrl/train/experiment_config.h"

namespace agentrl::train {

struct SftSequence {
  std::vector<int32_t> ids;
  std::vector<float> loss_mask;  // loss weight per token: 1 on assistant output, 0 on context
};

// Reads chat JSONL; lines are validated (FormatError "FILE:LINE: ..." on a
// malformed line or a message without role/content). Conversations longer
// than max_tokens are truncated.
std::vector<SftSequence> sft_sequences_from_jsonl(const std::string& path, const text::ChatTemplate& chat,
                                                  int64_t max_tokens);
// observation_weight > 0 also trains, with that weight, on what the env
// returned: where an episode is one sequence (inline, full), the context
// tokens of every turn after its first (the observation and the chat markup
// around it); in window mode (a row per turn), every turn's prompt (task,
// history, observation, admissible commands, markup). An auxiliary
// world-modelling loss: the policy learns to predict tool output, and a
// search agent that sees a passage twice learns to copy names out of it. The
// first prompt of a one-sequence episode and the commands of mistaken
// demonstration turns stay at 0. UsageError for a weight outside [0, 1].
std::vector<SftSequence> sft_sequences_from_trajectories(const std::vector<rollout::Trajectory>& trajectories,
                                                         int64_t max_tokens, float observation_weight = 0.f);

struct SftReport {
  int64_t steps = 0;
  double first_epoch_loss = 0.0;  // mean token loss of the first epoch
  double last_epoch_loss = 0.0;   // mean token loss of the last epoch
  bool interrupted = false;       // `stop` said so before the last epoch ended
};

using StepCallback = std::function<void(int64_t step, const std::map<std::string, double>& scalars)>;

// Trains `model` with AdamW (cfg.optim) for cfg.epochs over `data` in
// batches of cfg.batch_tokens padded tokens. Batch order is shuffled per
// epoch with `rng`. `stop` is asked before every step: when it returns true
// training ends there (report.interrupted; the model holds a partly trained
// state).
SftReport run_sft(model::TransformerLM& model, const std::vector<SftSequence>& data, const SftConfig& cfg,
                  int64_t logprob_chunk_tokens, Rng& rng, const StepCallback& on_step = {},
                  const std::function<bool()>& stop = {});

}  // namespace agentrl::train
