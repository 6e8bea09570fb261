#include "agentrl/rollout/demos.h"

#include <algorithm>
#include <cctype>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/thread_pool.h"

namespace agentrl::rollout {

std::optional<std::string> mistaken_command(const std::string& command, Rng& rng) {
  // Numbers = maximal digit runs that are whole words.
  std::vector<std::pair<size_t, size_t>> numbers;  // [begin, end)
  for (size_t i = 0; i < command.size();) {
    if (!std::isdigit(static_cast<unsigned char>(command[i]))) { ++i; continue; }
    size_t j = i;
    while (j < command.size() && std::isdigit(static_cast<unsigned char>(command[j]))) ++j;
    const bool word_start = i == 0 || command[i - 1] == ' ';
    const bool word_end = j == command.size() || command[j] == ' ';
    if (word_start && word_end && j - i <= 9) numbers.emplace_back(i, j);
    i = j;
  }
  if (numbers.empty()) return std::nullopt;
  const auto [b, e] = numbers[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(numbers.size()) - 1))];
  const int64_t n = std::stoll(command.substr(b, e - b));
  const int64_t top = std::max<int64_t>(3, n + 1);
  // Uniform over 1..top without n.
  int64_t m = rng.uniform_int(1, n >= 1 ? top - 1 : top);
  if (n >= 1 && m >= n) ++m;
  return command.substr(0, b) + std::to_string(m) + command.substr(e);
}

std::vector<Trajectory> expert_trajectories(const envs::EnvSuite& suite, const std::string& split, int64_t episodes,
                                            uint64_t seed, std::shared_ptr<const AgentContext> ctx,
                                            double mistake_rate) {
  if (!(mistake_rate >= 0.0 && mistake_rate < 1.0))
    throw ConfigError("demo mistake rate must be in [0, 1), got " + std::to_string(mistake_rate));
  auto tasks = suite.tasks().ordered(split, seed);
  auto render = [&ctx](const std::string& action) { return expert_response_text(ctx->prompt, action); };
  // Episode i depends only on (seed, i): the same demonstrations whatever the
  // number of threads.
  auto run_one = [&](size_t i) -> std::optional<Trajectory> {
    EpisodeSpec spec;
    spec.task = tasks[i];
    spec.env_seed = mix_seed(seed, i);
    spec.sample_seed = spec.env_seed;
    spec.group_id = static_cast<int64_t>(i);
    spec.episode_id = "demo-" + std::to_string(i);
    EpisodeRunner runner(suite.make_env(), spec, ctx);
    Rng rng(mix_seed(spec.env_seed, 0x3157A4E));
    std::vector<bool> mistake;  // per turn, in the order the policy is asked
    auto policy = [&](envs::Env& env) -> std::optional<std::string> {
      auto action = env.expert_action();
      if (!action) return std::nullopt;
      // Never two mistakes in a row: every mistake is followed by the recovery.
      const bool after_mistake = !mistake.empty() && mistake.back();
      if (mistake_rate > 0.0 && !after_mistake && rng.uniform() < mistake_rate) {
        if (auto wrong = mistaken_command(*action, rng)) {
          mistake.push_back(true);
          return render(*wrong);
        }
      }
      mistake.push_back(false);
      return render(*action);
    };
    Trajectory t = run_scripted_episode(runner, policy);
    if (!t.success) return std::nullopt;
    for (size_t k = 0; k < t.turns.size() && k < mistake.size(); ++k) t.turns[k].demo_mistake = mistake[k];
    return t;
  };
  std::vector<Trajectory> out;
  const auto wanted = static_cast<size_t>(std::max<int64_t>(episodes, 0));
  parallel_in_order(tasks.size(), [&] { return wanted - out.size(); }, run_one, [&](std::optional<Trajectory> t) {
    if (t) out.push_back(std::move(*t));
  });
  return out;
}

std::vector<nlohmann::json> trajectory_to_conversations(const Trajectory& t, const PromptConfig& prompt) {
  auto system = [&](nlohmann::json& msgs) {
    if (!prompt.system.empty()) msgs.push_back({{"role", "system"}, {"content", prompt.system}});
  };
  if (t.context_mode == ContextMode::kInline)
    // A chat conversation cannot say which part of the one assistant message
    // is tool output: SFT on it would train on the tool's text.
    throw UsageError("rollout.context_mode inline: an episode is one assistant message with tool output spliced "
                     "in, which chat conversations cannot mask; SFT on inline demos runs inside `agentrl train` "
                     "(sft.data empty) instead");
  std::vector<nlohmann::json> out;
  if (t.context_mode == ContextMode::kFull) {
    nlohmann::json msgs = nlohmann::json::array();
    system(msgs);
    for (const auto& turn : t.turns) {
      msgs.push_back({{"role", "user"}, {"content", turn.user_message}});
      nlohmann::json a = {{"role", "assistant"}, {"content", turn.response}};
      if (turn.demo_mistake) a["weight"] = 0;
      msgs.push_back(std::move(a));
    }
    out.push_back({{"messages", msgs}});
  } else {
    for (const auto& turn : t.turns) {
      if (turn.demo_mistake) continue;
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
