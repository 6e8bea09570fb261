#include "agentrl/rollout/demos.h"

#include "agentrl/core/rng.h"

namespace agentrl::rollout {

std::vector<Trajectory> expert_trajectories(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                                            uint64_t seed, std::shared_ptr<const AgentContext> ctx) {
  auto tasks = suite.tasks().ordered(split, seed);
  const auto policy = expert_policy(ctx->prompt);
  std::vector<Trajectory> out;
  for (size_t i = 0; i < tasks.size() && static_cast<int64_t>(out.size()) < episodes; ++i) {
    EpisodeSpec spec;
    spec.task = tasks[i];
    spec.env_seed = mix_seed(seed, i);
    spec.sample_seed = spec.env_seed;
    spec.group_id = static_cast<int64_t>(i);
    spec.episode_id = "demo-" + std::to_string(i);
    EpisodeRunner runner(suite.make_env(), spec, ctx);
    Trajectory t = run_scripted_episode(runner, policy);
    if (t.success) out.push_back(std::move(t));
  }
  return out;
}

std::vector<nlohmann::json> trajectory_to_conversations(const Trajectory& t, const PromptConfig& prompt) {
  auto system = [&](nlohmann::json& msgs) {
    if (!prompt.system.empty()) msgs.push_back({{"role", "system"}, {"content", prompt.system}});
  };
  std::vector<nlohmann::json> out;
  if (t.context_mode == ContextMode::kFull) {
    nlohmann::json msgs = nlohmann::json::array();
    system(msgs);
    for (const auto& turn : t.turns) {
      msgs.push_back({{"role", "user"}, {"content", turn.user_message}});
      msgs.push_back({{"role", "assistant"}, {"content", turn.response}});
    }
    out.push_back({{"messages", msgs}});
  } else {
    for (const auto& turn : t.turns) {
      nlohmann::json msgs = nlohmann::json::array();
      system(msgs);
      msgs.push_back({{"role", "user"}, {"content", turn.user_message}});
      msgs.push_back({{"role", "assistant"}, {"content", turn.response}});
      out.push_back({{"messages", msgs}});
    }
  }
  return out;
}

}  // namespace agentrl::rollout
