#include "agentrl/train/trainer_state.h"

#include "agentrl/core/error.h"

namespace agentrl::train {

TrainerState initial_trainer_state(int64_t runtime_seed, const std::string& train_split) {
  TrainerState st;
  st.rng = Rng(mix_seed(static_cast<uint64_t>(runtime_seed), 0x7A11));
  st.cursor.split = train_split;
  st.cursor.seed = mix_seed(static_cast<uint64_t>(runtime_seed), 0xC0C5);
  return st;
}

std::vector<envs::Task> TaskCursor::next(const envs::TaskSource& tasks, int64_t n) {
  std::vector<envs::Task> out;
  while (static_cast<int64_t>(out.size()) < n) {
    auto order = tasks.ordered(split, mix_seed(seed, static_cast<uint64_t>(epoch)));
    if (order.empty()) throw ConfigError("env split '" + split + "' has no tasks");
    while (position < static_cast<int64_t>(order.size()) && static_cast<int64_t>(out.size()) < n)
      out.push_back(order[static_cast<size_t>(position++)]);
    if (position >= static_cast<int64_t>(order.size())) {
      ++epoch;
      position = 0;
    }
  }
  return out;
}

}  // namespace agentrl::train
