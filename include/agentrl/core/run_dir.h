// The directory of one training/eval run:
//
//   <root>/<name>/config.yaml      fully resolved config (reproduces the run)
//                 log.txt          the agentrl log of the run
//                 metrics.jsonl    one JSON object per step (JsonlSink)
//                 tb/              TensorBoard event files
//                 checkpoints/     CheckpointManager's files
//                 rollouts/        dumped trajectories
//
// create() makes the directories (idempotent, so a resumed run reuses them);
// the accessors only build paths.
//
// Thread-safety: a RunDir is an immutable value.
#pragma once

#include <string>

namespace agentrl {

class RunDir {
 public:
  // Creates <root>/<name> and its subdirectories. `name` must be a single
  // path component (no '/', not "." or ".."): ConfigError otherwise.
  // IoError when a directory cannot be created.
  static RunDir create(const std::string& root, const std::string& name);
  // An existing run directory (IoError if it does not exist).
  static RunDir open(const std::string& path);

  const std::string& path() const { return path_; }
  std::string config_yaml() const { return path_ + "/config.yaml"; }
  std::string log_txt() const { return path_ + "/log.txt"; }
  std::string metrics_jsonl() const { return path_ + "/metrics.jsonl"; }
  std::string tb_dir() const { return path_ + "/tb"; }
  std::string checkpoints_dir() const { return path_ + "/checkpoints"; }
  std::string rollouts_dir() const { return path_ + "/rollouts"; }

  // Writes config.yaml atomically (typically config::to_yaml(root)).
  void write_config(const std::string& yaml) const;

 private:
  explicit RunDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace agentrl
