// CheckpointManager: atomic, complete-or-absent checkpoint directories.
//
// A checkpoint is written into `step_<N>.tmp/`, every file is fsynced, the
// directory is renamed to `step_<N>/` and the `latest` pointer file is
// replaced atomically; then all but the newest `keep` checkpoints are
// deleted. A crash (even kill -9) at any moment leaves either the previous
// complete checkpoint or the new one: `.tmp` directories are never resumed
// from and are cleaned up by the next save.
//
// Layout of one checkpoint (written by the trainers):
//   model/              HF model directory (config.json, model.safetensors, tokenizer files);
//                       with model.lora the frozen base, only when model.path does not name it
//   adapter/            with model.lora: the adapters in PEFT's format (model/lora_peft.h)
//   ref_model/          the KL reference policy (KL on, without LoRA)
//   optimizer.pt        optimizer state (torch::save); with dist.shard_optimizer
//                       optimizer_rank<R>.pt per rank + optimizer_shards.json
//   trainer_state.json  iteration, stage, RNG streams, task cursor, counters
//   metrics.jsonl       metrics history up to this checkpoint
//   config.yaml         the resolved config of the run
//
// Thread-safety: one manager per run, used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agentrl/train/trainer_state.h"

namespace agentrl::train {

class CheckpointManager {
 public:
  CheckpointManager(std::string dir, int64_t keep);

  // Writes checkpoint `step` through `write(tmp_dir)`; returns its final path.
  std::string save(int64_t step, const std::function<void(const std::string& tmp_dir)>& write);
  // Newest complete checkpoint in dir, if any.
  std::optional<std::string> latest() const;
  // Complete checkpoints, oldest first.
  std::vector<std::string> list() const;
  const std::string& dir() const { return dir_; }
  // Where ranks other than 0 put their files of checkpoint `step` before
  // rank 0 saves it (a `.tmp` directory: never resumed from, removed by the
  // next save). Needs a file system shared by all ranks.
  std::string staging_dir(int64_t step) const;

  // Resolves `--resume auto|PATH`: auto = newest complete checkpoint of dir
  // (nullopt when there is none); PATH must be a complete checkpoint
  // (ConfigError otherwise, saying why).
  static std::optional<std::string> resolve(const std::string& dir, const std::string& resume);
  // Step number encoded in a checkpoint path ("…/step_000012" -> 12).
  static int64_t step_of(const std::string& path);

 private:
  std::string dir_;
  int64_t keep_;
};

// fsyncs every regular file under `dir` and the directories themselves.
void fsync_tree(const std::string& dir);

// trainer_state.json of a checkpoint directory, written (atomically) and read
// side by side: every field of TrainerState except the cursor's split and
// seed, which come from the config (`initial`, from initial_trainer_state).
// read_trainer_state throws FormatError naming the file and the missing or
// mistyped key.
void write_trainer_state(const TrainerState& state, const std::string& checkpoint_dir);
TrainerState read_trainer_state(const std::string& checkpoint_dir, TrainerState initial);

}  // namespace agentrl::train
