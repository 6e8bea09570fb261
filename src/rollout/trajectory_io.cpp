#include "agentrl/rollout/trajectory_io.h"

#include <cstdio>
#include <sstream>

#include "agentrl/core/fs.h"

namespace agentrl::rollout {

nlohmann::json trajectory_to_json(const Trajectory& t, bool with_token_stats) {
  nlohmann::json j;
  j["episode_id"] = t.episode_id;
  j["group_id"] = t.group_id;
  j["sample_index"] = t.sample_index;
  j["task_id"] = t.task_id;
  j["task_type"] = t.task_type;
  j["context_mode"] = t.context_mode == ContextMode::kFull ? "full" : "window";
  j["reward"] = t.reward;
  j["score"] = t.score;
  j["success"] = t.success;
  j["truncated"] = t.truncated;
  j["failed"] = t.failed;
  j["error"] = t.error;
  j["loss_masked"] = t.loss_masked;
  j["metrics"] = t.metrics;
  auto turns = nlohmann::json::array();
  for (const auto& tr : t.turns) {
    nlohmann::json u;
    u["observation_before"] = tr.observation_before;
    u["response"] = tr.response;
    u["action"] = tr.action;
    u["tool_output"] = tr.tool_output;
    u["reward"] = tr.reward;
    u["invalid_action"] = tr.invalid_action;
    u["void_turn"] = tr.void_turn;
    u["truncated"] = tr.truncated;
    u["finish_reason"] = tr.finish_reason;
    u["n_context"] = tr.context_tokens.size();
    u["n_generated"] = tr.generated_tokens.size();
    double mean = 0.0;
    for (float e : tr.entropies) mean += e;
    u["mean_entropy"] = tr.entropies.empty() ? 0.0 : mean / static_cast<double>(tr.entropies.size());
    if (with_token_stats) {
      u["entropies"] = tr.entropies;
      u["logprobs"] = tr.logprobs;
    }
    turns.push_back(std::move(u));
  }
  j["turns"] = std::move(turns);
  return j;
}

void write_trajectories_jsonl(const std::string& path, const std::vector<Trajectory>& trajectories) {
  std::string data;
  for (const auto& t : trajectories) data += trajectory_to_json(t).dump() + "\n";
  write_file_atomic(path, data);
}

std::string format_trajectory(const nlohmann::json& r) {
  std::ostringstream o;
  o << "episode " << r.value("episode_id", "?") << "  task " << r.value("task_id", "?") << " ("
    << r.value("task_type", "") << ")  reward " << r.value("reward", 0.0) << "  success "
    << (r.value("success", false) ? "yes" : "no");
  if (r.value("failed", false)) o << "  FAILED: " << r.value("error", "");
  o << "\n";
  int k = 0;
  for (const auto& u : r.value("turns", nlohmann::json::array())) {
    ++k;
    o << "\n--- turn " << k << " ---\n";
    o << "[observation] " << u.value("observation_before", "") << "\n";
    o << "[response]    " << u.value("response", "") << "\n";
    o << "[action]      " << u.value("action", "");
    if (u.value("invalid_action", false)) o << "   (invalid)";
    if (u.value("void_turn", false)) o << "   (void turn)";
    o << "\n[reward]      " << u.value("reward", 0.0) << "   tokens " << u.value("n_generated", 0)
      << "   mean entropy " << u.value("mean_entropy", 0.0) << "   finish " << u.value("finish_reason", "") << "\n";
  }
  return o.str();
}

}  // namespace agentrl::rollout
