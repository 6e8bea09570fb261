#include "agentrl/rollout/batch_builder.h"

#include <algorithm>
#include <numeric>

#include "agentrl/core/error.h"

namespace agentrl::rollout {
namespace {

struct Row {
  std::vector<int32_t> ids;
  std::vector<float> loss, logprob, entropy;
  std::vector<int64_t> turn;
  TrainBatch::AllowedTokens allowed;  // column -> the ids the engine sampled among
  int64_t traj = 0;
  int64_t turn_of_row = -1;
};

void append_turn(Row& row, const Turn& turn, int64_t turn_idx, bool trainable) {
  for (int32_t id : turn.context_tokens) {
    row.ids.push_back(id);
    row.loss.push_back(0.f);
    row.logprob.push_back(0.f);
    row.entropy.push_back(0.f);
    row.turn.push_back(-1);
  }
  if (!turn.allowed_tokens.empty() && turn.allowed_tokens.size() != turn.generated_tokens.size())
    throw std::logic_error("build_train_batch: a turn has " + std::to_string(turn.allowed_tokens.size()) +
                           " allowed-token sets for " + std::to_string(turn.generated_tokens.size()) + " tokens");
  for (size_t k = 0; k < turn.generated_tokens.size(); ++k) {
    if (!turn.allowed_tokens.empty() && !turn.allowed_tokens[k].empty()) {
      const auto& ids = turn.allowed_tokens[k];
      // The trainer's log-prob of a token outside its set would be ~-1e30.
      if (!std::binary_search(ids.begin(), ids.end(), turn.generated_tokens[k]))
        throw std::logic_error("build_train_batch: generated token " + std::to_string(turn.generated_tokens[k]) +
                               " is not among the tokens its step allowed");
      row.allowed[static_cast<int64_t>(row.ids.size())] = ids;
    }
    row.ids.push_back(turn.generated_tokens[k]);
    row.loss.push_back(trainable && !turn.demo_mistake ? 1.f : 0.f);
    row.logprob.push_back(k < turn.logprobs.size() ? turn.logprobs[k] : 0.f);
    row.entropy.push_back(k < turn.entropies.size() ? turn.entropies[k] : 0.f);
    row.turn.push_back(turn_idx);
  }
}

}  // namespace

std::vector<int32_t> sequence_tokens(const Trajectory& t, int64_t turn) {
  std::vector<int32_t> out;
  auto add = [&](const Turn& tr) {
    out.insert(out.end(), tr.context_tokens.begin(), tr.context_tokens.end());
    out.insert(out.end(), tr.generated_tokens.begin(), tr.generated_tokens.end());
  };
  if (turn >= 0) {
    add(t.turns.at(static_cast<size_t>(turn)));
  } else {
    for (const auto& tr : t.turns) add(tr);
  }
  return out;
}

TrainBatch build_train_batch(const std::vector<Trajectory>& trajectories, int64_t max_tokens) {
  std::vector<Row> rows;
  for (size_t i = 0; i < trajectories.size(); ++i) {
    const Trajectory& t = trajectories[i];
    if (t.failed) throw std::logic_error("build_train_batch: failed trajectory " + t.episode_id);
    const bool trainable = !t.loss_masked;
    if (one_sequence_per_episode(t.context_mode)) {
      Row row;
      row.traj = static_cast<int64_t>(i);
      for (size_t k = 0; k < t.turns.size(); ++k) append_turn(row, t.turns[k], static_cast<int64_t>(k), trainable);
      rows.push_back(std::move(row));
    } else {
      for (size_t k = 0; k < t.turns.size(); ++k) {
        Row row;
        row.traj = static_cast<int64_t>(i);
        row.turn_of_row = static_cast<int64_t>(k);
        append_turn(row, t.turns[k], static_cast<int64_t>(k), trainable);
        rows.push_back(std::move(row));
      }
    }
  }
  int64_t T = 1;
  for (auto& r : rows) {
    if (static_cast<int64_t>(r.ids.size()) > max_tokens)
      throw Error("trajectory row of " + std::to_string(r.ids.size()) + " tokens exceeds the limit of " +
                  std::to_string(max_tokens));
    // Column 0 has no predecessor: it can never carry loss (see train_batch.h).
    if (!r.loss.empty()) r.loss[0] = 0.f;
    T = std::max<int64_t>(T, static_cast<int64_t>(r.ids.size()));
  }
  const int64_t N = static_cast<int64_t>(rows.size());
  TrainBatch b;
  const bool constrained =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.allowed.empty(); });
  b.input_ids = torch::zeros({N, T}, torch::kInt64);
  b.attention_mask = torch::zeros({N, T}, torch::kBool);
  b.position_ids = torch::zeros({N, T}, torch::kInt64);
  b.loss_mask = torch::zeros({N, T}, torch::kFloat32);
  b.behaviour_logprobs = torch::zeros({N, T}, torch::kFloat32);
  b.rollout_entropies = torch::zeros({N, T}, torch::kFloat32);
  b.advantages = torch::zeros({N, T}, torch::kFloat32);
  b.turn_index = torch::full({N, T}, -1, torch::kInt64);
  auto ids = b.input_ids.accessor<int64_t, 2>();
  auto am = b.attention_mask.accessor<bool, 2>();
  auto pos = b.position_ids.accessor<int64_t, 2>();
  auto lm = b.loss_mask.accessor<float, 2>();
  auto lp = b.behaviour_logprobs.accessor<float, 2>();
  auto en = b.rollout_entropies.accessor<float, 2>();
  auto ti = b.turn_index.accessor<int64_t, 2>();
  for (int64_t n = 0; n < N; ++n) {
    const Row& r = rows[static_cast<size_t>(n)];
    for (size_t t = 0; t < r.ids.size(); ++t) {
      ids[n][t] = r.ids[t];
      am[n][t] = true;
      pos[n][t] = static_cast<int64_t>(t);
      lm[n][t] = r.loss[t];
      lp[n][t] = r.logprob[t];
      en[n][t] = r.entropy[t];
      ti[n][t] = r.turn[t];
    }
    b.trajectory_of_row.push_back(r.traj);
    b.turn_of_row.push_back(r.turn_of_row);
    if (constrained) b.allowed_tokens.push_back(r.allowed);
  }
  b.old_logprobs = b.behaviour_logprobs.clone();
  return b;
}

std::vector<std::vector<int64_t>> plan_micro_batches(const TrainBatch& batch, int64_t token_budget) {
  const int64_t N = batch.rows();
  auto lengths_t = batch.attention_mask.sum(1).to(torch::kInt64);
  auto lengths = lengths_t.accessor<int64_t, 1>();
  std::vector<int64_t> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> cur;
  int64_t cur_max = 0;
  for (int64_t r : order) {
    int64_t len = std::max<int64_t>(lengths[r], 1);
    int64_t new_max = std::max(cur_max, len);
    if (!cur.empty() && new_max * static_cast<int64_t>(cur.size() + 1) > token_budget) {
      out.push_back(std::move(cur));
      cur.clear();
      new_max = len;
    }
    cur.push_back(r);
    cur_max = new_max;
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

TrainBatch select_rows(const TrainBatch& b, const std::vector<int64_t>& rows) {
  auto idx = torch::tensor(rows, torch::kInt64);
  int64_t T = std::max<int64_t>(1, b.attention_mask.index_select(0, idx).sum(1).max().item<int64_t>());
  auto take = [&](const torch::Tensor& t) -> torch::Tensor {
    if (!t.defined()) return t;
    return t.index_select(0, idx).slice(1, 0, T).contiguous();
  };
  TrainBatch s;
  s.input_ids = take(b.input_ids);
  s.attention_mask = take(b.attention_mask);
  s.position_ids = take(b.position_ids);
  s.loss_mask = take(b.loss_mask);
  s.old_logprobs = take(b.old_logprobs);
  s.behaviour_logprobs = take(b.behaviour_logprobs);
  s.ref_logprobs = take(b.ref_logprobs);
  s.rollout_entropies = take(b.rollout_entropies);
  s.advantages = take(b.advantages);
  s.turn_index = take(b.turn_index);
  for (int64_t r : rows) {
    s.trajectory_of_row.push_back(b.trajectory_of_row[static_cast<size_t>(r)]);
    s.turn_of_row.push_back(b.turn_of_row[static_cast<size_t>(r)]);
    if (!b.allowed_tokens.empty()) {
      // Columns past the trimmed width hold no tokens of this row.
      TrainBatch::AllowedTokens kept;
      for (const auto& [t, ids] : b.allowed_tokens[static_cast<size_t>(r)])
        if (t < T) kept.emplace(t, ids);
      s.allowed_tokens.push_back(std::move(kept));
    }
  }
  return s;
}

}  // namespace agentrl::rollout
