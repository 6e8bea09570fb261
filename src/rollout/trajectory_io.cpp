#include "agentrl/rollout/trajectory_io.h"

#include <cstdio>
#include <sstream>


namespace agentrl::rollout {

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
