#include "agentrl/train/sft.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/train/master_weights.h"
#include "agentrl/train/optim.h"

namespace agentrl::train {

std::vector<SftSequence> sft_sequences_from_jsonl(const std::string& path, const text::ChatTemplate& chat,
                                                  int64_t max_tokens) {
  std::ifstream in(path);
  if (!in) throw ConfigError("sft.data: cannot open '" + path + "'");
  std::vector<SftSequence> out;
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (strings::is_blank(line)) continue;
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      throw FormatError(where + "invalid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("messages") || !j["messages"].is_array())
      throw FormatError(where + "expected an object with a \"messages\" array");
    std::vector<text::ChatMessage> msgs;
    std::vector<bool> trained;  // per assistant message ("weight": 0 = context only)
    for (const auto& m : j["messages"]) {
      if (!m.is_object() || !m.contains("role") || !m.contains("content") || !m["role"].is_string() ||
          !m["content"].is_string())
        throw FormatError(where + "every message needs string \"role\" and \"content\"");
      const std::string role = m["role"];
      if (role != "system" && role != "user" && role != "assistant" && role != "tool")
        throw FormatError(where + "unknown role '" + role + "' (expected system, user, assistant or tool)");
      if (m.contains("weight")) {
        const auto& w = m["weight"];
        if (role != "assistant")
          throw FormatError(where + "\"weight\" is only for assistant messages (a " + role + " message has one)");
        if (!w.is_number() || (w.get<double>() != 0.0 && w.get<double>() != 1.0))
          throw FormatError(where + "assistant \"weight\" must be 0 or 1, got " + w.dump());
      }
      if (role == "assistant") trained.push_back(m.value("weight", 1.0) != 0.0);
      msgs.push_back({role, m["content"]});
    }
    auto r = chat.render(msgs, false);
    SftSequence s;
    s.ids = r.ids;
    s.loss_mask.assign(s.ids.size(), 0.f);
    if (r.assistant_spans.size() != trained.size())
      throw Error(where + "the chat template reported " + std::to_string(r.assistant_spans.size()) +
                  " assistant spans for " + std::to_string(trained.size()) + " assistant messages");
    for (size_t a = 0; a < r.assistant_spans.size(); ++a) {
      if (!trained[a]) continue;
      const auto& span = r.assistant_spans[a];
      for (size_t k = span.begin; k < span.end && k < s.ids.size(); ++k) s.loss_mask[k] = 1.f;
    }
    if (static_cast<int64_t>(s.ids.size()) > max_tokens) {
      s.ids.resize(static_cast<size_t>(max_tokens));
      s.loss_mask.resize(static_cast<size_t>(max_tokens));
    }
    if (!s.loss_mask.empty()) s.loss_mask[0] = 0.f;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// Weights the env's text in one batch row (see the header). A one-sequence
// episode (inline, full): the tokens outside every turn (turn_index -1)
// after the first generated one. A window-mode row (one turn): its prompt,
// the tokens before the first generated one (column 0 has no predecessor).
void weight_observations(const rollout::Trajectory& t, const torch::Tensor& turn_index, float weight, SftSequence& s) {
  auto turn = turn_index.contiguous();
  const int64_t* k = turn.data_ptr<int64_t>();
  const bool window = !rollout::one_sequence_per_episode(t.context_mode);
  bool generated = false;
  for (size_t i = 0; i < s.loss_mask.size(); ++i) {
    if (k[i] >= 0)
      generated = true;
    else if (window ? (!generated && i > 0) : generated)
      s.loss_mask[i] = weight;
  }
}

}  // namespace

std::vector<SftSequence> sft_sequences_from_trajectories(const std::vector<rollout::Trajectory>& trajectories,
                                                         int64_t max_tokens, float observation_weight) {
  if (!(observation_weight >= 0.f && observation_weight <= 1.f))
    throw UsageError("sft.observation_loss_weight must be in [0, 1], got " + std::to_string(observation_weight));
  auto batch = rollout::build_train_batch(trajectories);
  std::vector<SftSequence> out;
  auto lengths = batch.attention_mask.sum(1);
  for (int64_t n = 0; n < batch.rows(); ++n) {
    const int64_t len = std::min<int64_t>(lengths[n].item<int64_t>(), max_tokens);
    SftSequence s;
    auto ids = batch.input_ids[n].slice(0, 0, len);
    auto mask = batch.loss_mask[n].slice(0, 0, len).contiguous();
    s.ids.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + len);
    s.loss_mask.assign(mask.data_ptr<float>(), mask.data_ptr<float>() + len);
    if (observation_weight > 0.f)
      weight_observations(trajectories[static_cast<size_t>(batch.trajectory_of_row[static_cast<size_t>(n)])],
                          batch.turn_index[n].slice(0, 0, len), observation_weight, s);
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

rollout::TrainBatch pad(const std::vector<SftSequence>& data, const std::vector<size_t>& rows) {
  int64_t T = 1;
  for (size_t r : rows) T = std::max<int64_t>(T, static_cast<int64_t>(data[r].ids.size()));
  const auto N = static_cast<int64_t>(rows.size());
  rollout::TrainBatch b;
  b.input_ids = torch::zeros({N, T}, torch::kInt64);
  b.attention_mask = torch::zeros({N, T}, torch::kBool);
  b.position_ids = torch::zeros({N, T}, torch::kInt64);
  b.loss_mask = torch::zeros({N, T}, torch::kFloat32);
  auto ids = b.input_ids.accessor<int64_t, 2>();
  auto am = b.attention_mask.accessor<bool, 2>();
  auto pos = b.position_ids.accessor<int64_t, 2>();
  auto lm = b.loss_mask.accessor<float, 2>();
  for (int64_t n = 0; n < N; ++n) {
    const auto& s = data[rows[static_cast<size_t>(n)]];
    for (size_t t = 0; t < s.ids.size(); ++t) {
      ids[n][t] = s.ids[t];
      am[n][t] = true;
      pos[n][t] = static_cast<int64_t>(t);
      lm[n][t] = s.loss_mask[t];
    }
  }
  return b;
}

}  // namespace

SftReport run_sft(model::TransformerLM& model, const std::vector<SftSequence>& data, const SftConfig& cfg,
                  int64_t logprob_chunk_tokens, Rng& rng, const StepCallback& on_step,
                  const std::function<bool()>& stop) {
  if (data.empty()) throw Error("SFT: no training sequences");
  // fp32 masters and moments when the model is bf16/fp16 (see master_weights.h);
  // the masters' precision beyond the model's dtype ends with SFT.
  MasterWeights masters(*model);
  auto optimizer = make_adamw(masters.params(), cfg.optim);
  const auto device = model->device();
  // Batches: sequences sorted by length, greedily packed up to batch_tokens
  // padded tokens; the batch order is shuffled every epoch.
  std::vector<size_t> by_len(data.size());
  std::iota(by_len.begin(), by_len.end(), 0);
  std::stable_sort(by_len.begin(), by_len.end(),
                   [&](size_t a, size_t b) { return data[a].ids.size() > data[b].ids.size(); });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> cur;
  size_t cur_max = 0;
  for (size_t i : by_len) {
    size_t m = std::max(cur_max, data[i].ids.size());
    if (!cur.empty() && static_cast<int64_t>(m * (cur.size() + 1)) > cfg.batch_tokens) {
      batches.push_back(cur);
      cur.clear();
      m = data[i].ids.size();
    }
    cur.push_back(i);
    cur_max = m;
  }
  if (!cur.empty()) batches.push_back(cur);

  const int64_t total_steps = cfg.epochs * static_cast<int64_t>(batches.size());
  SftReport report;
  model->train();
  for (int64_t epoch = 0; epoch < cfg.epochs && !report.interrupted; ++epoch) {
    std::vector<size_t> order(batches.size());
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i) - 1))]);
    double loss_sum = 0.0, token_sum = 0.0;
    for (size_t bi : order) {
      if (stop && stop()) {
        report.interrupted = true;
        break;
      }
      auto b = pad(data, batches[bi]);
      const double tokens = b.loss_mask.sum().item<double>();
      if (tokens == 0) continue;
      model::LogprobOptions o;
      o.chunk_tokens = logprob_chunk_tokens;
      o.only = b.loss_mask;  // the loss reads no other position
      auto stats = model::logprobs_and_entropy(model, b.input_ids.to(device), b.attention_mask.to(device),
                                               b.position_ids.to(device), o);
      // Token-mean negative log-likelihood over assistant tokens.
      auto mask = b.loss_mask.to(device);
      auto loss = -(stats.logprobs.to(torch::kFloat32) * mask).sum() / tokens;
      masters.zero_grad();
      loss.backward();
      masters.accumulate_gradients();
      const double grad_norm = clip_grad_norm(masters.params(), 1.0, [](double x) { return x; });
      const double l = loss.item<double>();
      if (!std::isfinite(l) || !std::isfinite(grad_norm)) {
        masters.zero_grad();
        continue;
      }
      set_lr(*optimizer, lr_at(cfg.optim, report.steps, total_steps));
      optimizer->step();
      masters.copy_to_model();
      ++report.steps;
      loss_sum += l * tokens;
      token_sum += tokens;
      if (on_step) on_step(report.steps, {{"sft/loss", l}, {"sft/grad_norm", grad_norm}, {"sft/epoch", double(epoch)}});
    }
    const double mean = token_sum > 0 ? loss_sum / token_sum : 0.0;
    if (epoch == 0) report.first_epoch_loss = mean;
    report.last_epoch_loss = mean;
  }
  model->eval();
  return report;
}

}  // namespace agentrl::train
