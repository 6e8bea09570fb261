// Read-only view of one run directory for `agentrl dashboard`: the metrics,
// the run summary, the dumped rollouts and what the estimator made of them,
// as the JSON documents of the dashboard's HTTP API (see server.h).
//
// A run may be written while it is read (the trainer appends to
// metrics.jsonl and adds rollout files): every read goes to the files again,
// a torn or malformed line is skipped and reported in the document's
// "problems" list, and nothing here throws for bad data in the run; only a
// request for something that does not exist (an iteration or episode the
// run has not got) throws NotFound. Nothing is ever written.
//
// Thread-safety: const methods may be called concurrently (the tokenizer is
// loaded once under a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace agentrl::text {
class Tokenizer;
}

namespace agentrl::dashboard {

struct NotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RunReader {
 public:
  // `dir` need not be a run: info() says what is wrong with it.
  RunReader(int id, std::string dir);

  // {"id", "name", "path", "is_run", "iterations", "last_modified", "problems"}
  nlohmann::json info() const;
  // {"keys", "rows": [{"step", "wall_time", "values"}], "problems"}
  nlohmann::json metrics() const;
  // {"name", "path", "config_yaml", "env", "estimator", "filters", "model",
  //  "checkpoints", "time_s", "iterations", "reproduce", "problems"}
  nlohmann::json summary() const;
  // {"iterations": [{"iteration", "files", "episodes", "has_advantages"}], "problems"}
  nlohmann::json rollouts() const;
  // {"iteration", "episodes": [episode summary], "problems"}; NotFound if
  // the run has no rollouts of `iteration`.
  nlohmann::json iteration(int64_t iteration) const;
  // {"episode", "group", "problems"}; NotFound for an unknown iteration or index.
  nlohmann::json episode(int64_t iteration, int64_t index) const;

 private:
  struct Batch;  // one iteration's episodes and advantages
  Batch load_batch(int64_t iteration) const;
  std::shared_ptr<const text::Tokenizer> tokenizer(nlohmann::json& problems) const;

  int id_;
  std::string dir_;
  mutable std::mutex tok_mu_;
  mutable bool tok_tried_ = false;
  mutable std::string tok_error_;
  mutable std::shared_ptr<const text::Tokenizer> tok_;
};

}  // namespace agentrl::dashboard
