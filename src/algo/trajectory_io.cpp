// JSONL trajectory records (schema in trajectory_io.h), parsed with
// nlohmann::json.
#include "agentrl/algo/trajectory_io.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/jsonl.h"
#include "agentrl/core/strings.h"

namespace agentrl::algo {
namespace {

using nlohmann::json;

struct Where {
  const std::string& file;
  int64_t line;
  std::string prefix(const std::string& key) const {
    return file + ":" + std::to_string(line) + ": key '" + key + "': ";
  }
};

const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json& require(const json& obj, const char* key, const Where& w) {
  const json* v = find(obj, key);
  if (v == nullptr) throw FormatError(w.prefix(key) + "missing (required)");
  return *v;
}

int64_t as_int(const json& v, const std::string& key, const Where& w) {
  if (!v.is_number_integer()) throw FormatError(w.prefix(key) + "expected an integer, got " + v.dump());
  return v.get<int64_t>();
}
double as_number(const json& v, const std::string& key, const Where& w) {
  if (!v.is_number()) throw FormatError(w.prefix(key) + "expected a number, got " + v.dump());
  return v.get<double>();
}
bool as_bool(const json& v, const std::string& key, const Where& w) {
  if (!v.is_boolean()) throw FormatError(w.prefix(key) + "expected true or false, got " + v.dump());
  return v.get<bool>();
}
std::string as_string(const json& v, const std::string& key, const Where& w) {
  if (!v.is_string()) throw FormatError(w.prefix(key) + "expected a string, got " + v.dump());
  return v.get<std::string>();
}

template <class T>
std::vector<T> as_list(const json& v, const std::string& key, const Where& w) {
  if (!v.is_array()) throw FormatError(w.prefix(key) + "expected a list, got " + v.dump());
  std::vector<T> out;
  out.reserve(v.size());
  for (const auto& e : v) {
    if (std::is_integral<T>::value ? !e.is_number_integer() : !e.is_number()) {
      throw FormatError(w.prefix(key) + "expected a list of numbers, got element " + e.dump());
    }
    out.push_back(e.get<T>());
  }
  return out;
}

std::string opt_string(const json& o, const char* k, const Where& w) {
  const json* v = find(o, k);
  return v ? as_string(*v, k, w) : std::string();
}
bool opt_bool(const json& o, const char* k, const Where& w) {
  const json* v = find(o, k);
  return v ? as_bool(*v, k, w) : false;
}

rollout::Turn parse_turn(const json& o, size_t index, const Where& w) {
  const std::string p = "turns[" + std::to_string(index) + "].";
  if (!o.is_object()) throw FormatError(w.prefix("turns[" + std::to_string(index) + "]") + "expected an object");
  rollout::Turn t;
  auto s = [&](const char* k) {
    const json* v = find(o, k);
    return v ? as_string(*v, p + k, w) : std::string();
  };
  auto b = [&](const char* k) {
    const json* v = find(o, k);
    return v ? as_bool(*v, p + k, w) : false;
  };
  t.response = s("response");
  t.action = s("action");
  t.observation_before = s("observation_before");
  t.tool_output = s("tool_output");
  t.finish_reason = s("finish_reason");
  t.invalid_action = b("invalid_action");
  t.void_turn = b("void_turn");
  t.truncated = b("truncated");
  if (const json* v = find(o, "reward")) t.reward = as_number(*v, p + "reward", w);
  if (const json* v = find(o, "context_tokens")) t.context_tokens = as_list<int32_t>(*v, p + "context_tokens", w);
  if (const json* v = find(o, "entropies")) t.entropies = as_list<float>(*v, p + "entropies", w);
  if (const json* v = find(o, "logprobs")) t.logprobs = as_list<float>(*v, p + "logprobs", w);
  int64_t n = -1;
  if (const json* v = find(o, "generated_tokens")) {
    t.generated_tokens = as_list<int32_t>(*v, p + "generated_tokens", w);
    n = static_cast<int64_t>(t.generated_tokens.size());
  }
  if (const json* v = find(o, "n_generated")) {
    const int64_t declared = as_int(*v, p + "n_generated", w);
    if (declared < 0) throw FormatError(w.prefix(p + "n_generated") + "expected >= 0, got " + std::to_string(declared));
    if (n >= 0 && declared != n) {
      throw FormatError(w.prefix(p + "n_generated") + std::to_string(declared) + " but generated_tokens has " +
                        std::to_string(n) + " entries");
    }
    n = declared;
  }
  if (n < 0 && !t.entropies.empty()) n = static_cast<int64_t>(t.entropies.size());
  if (n < 0) throw FormatError(w.prefix(p + "n_generated") + "missing (required unless generated_tokens or entropies is given)");
  if (t.generated_tokens.empty()) t.generated_tokens.assign(static_cast<size_t>(n), 0);
  if (t.entropies.empty() && n > 0) {
    if (const json* v = find(o, "mean_entropy")) {
      t.entropies.assign(static_cast<size_t>(n), static_cast<float>(as_number(*v, p + "mean_entropy", w)));
    }
  }
  if (!t.entropies.empty() && static_cast<int64_t>(t.entropies.size()) != n) {
    throw FormatError(w.prefix(p + "entropies") + std::to_string(t.entropies.size()) + " entries for " +
                      std::to_string(n) + " generated tokens");
  }
  if (!t.logprobs.empty() && static_cast<int64_t>(t.logprobs.size()) != n) {
    throw FormatError(w.prefix(p + "logprobs") + std::to_string(t.logprobs.size()) + " entries for " +
                      std::to_string(n) + " generated tokens");
  }
  return t;
}

}  // namespace

rollout::Trajectory parse_trajectory_json(const std::string& json_text, const std::string& file, int64_t line) {
  Where w{file, line};
  json o;
  try {
    o = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw FormatError(file + ":" + std::to_string(line) + ": not valid JSON: " + e.what());
  }
  if (!o.is_object()) throw FormatError(file + ":" + std::to_string(line) + ": expected a JSON object per line");
  rollout::Trajectory t;
  t.group_id = as_int(require(o, "group_id", w), "group_id", w);
  t.sample_index = as_int(require(o, "sample_index", w), "sample_index", w);
  t.reward = as_number(require(o, "reward", w), "reward", w);
  t.score = t.reward;
  if (const json* v = find(o, "score")) t.score = as_number(*v, "score", w);
  t.episode_id = opt_string(o, "episode_id", w);
  if (t.episode_id.empty()) t.episode_id = std::to_string(t.group_id) + "-" + std::to_string(t.sample_index);
  t.task_id = opt_string(o, "task_id", w);
  t.task_type = opt_string(o, "task_type", w);
  t.success = opt_bool(o, "success", w);
  t.truncated = opt_bool(o, "truncated", w);
  t.loss_masked = opt_bool(o, "loss_masked", w);
  t.failed = opt_bool(o, "failed", w);
  t.error = opt_string(o, "error", w);
  const std::string mode = opt_string(o, "context_mode", w);
  if (mode == "window") t.context_mode = rollout::ContextMode::kWindow;
  else if (mode == "inline") t.context_mode = rollout::ContextMode::kInline;
  else if (mode.empty() || mode == "full") t.context_mode = rollout::ContextMode::kFull;
  else throw FormatError(w.prefix("context_mode") + "expected \"full\", \"window\" or \"inline\", got \"" + mode + "\"");
  const json& turns = require(o, "turns", w);
  if (!turns.is_array()) throw FormatError(w.prefix("turns") + "expected a list, got " + turns.dump());
  for (size_t i = 0; i < turns.size(); ++i) t.turns.push_back(parse_turn(turns[i], i, w));
  return t;
}

std::vector<rollout::Trajectory> read_trajectories_jsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot open trajectory file '" + path + "'");
  std::vector<rollout::Trajectory> out;
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (strings::is_blank(line)) continue;
    out.push_back(parse_trajectory_json(line, path, n));
  }
  if (in.bad()) throw IoError("error reading trajectory file '" + path + "'");
  return out;
}

namespace {

json turn_record(const rollout::Turn& u, bool with_token_ids) {
  json j;
  j["observation_before"] = u.observation_before;
  j["response"] = u.response;
  j["action"] = u.action;
  j["tool_output"] = u.tool_output;
  j["finish_reason"] = u.finish_reason;
  j["reward"] = u.reward;
  j["invalid_action"] = u.invalid_action;
  j["void_turn"] = u.void_turn;
  j["truncated"] = u.truncated;
  j["n_context"] = u.context_tokens.size();
  j["n_generated"] = u.generated_tokens.size();
  // Generated ids are as many as the log-probs: the dashboard decodes them
  // to colour each token. The context is much larger: only on request.
  j["generated_tokens"] = u.generated_tokens;
  if (with_token_ids) j["context_tokens"] = u.context_tokens;
  if (!u.entropies.empty()) {
    double sum = 0;
    for (float e : u.entropies) sum += e;
    j["mean_entropy"] = sum / static_cast<double>(u.entropies.size());
    j["entropies"] = u.entropies;
  }
  if (!u.logprobs.empty()) j["logprobs"] = u.logprobs;
  return j;
}

}  // namespace

std::string trajectory_to_json(const rollout::Trajectory& t, bool with_token_ids) {
  json o;
  o["episode_id"] = t.episode_id;
  o["group_id"] = t.group_id;
  o["sample_index"] = t.sample_index;
  o["task_id"] = t.task_id;
  o["task_type"] = t.task_type;
  o["context_mode"] = rollout::context_mode_name(t.context_mode);
  o["reward"] = t.reward;
  o["score"] = t.score;
  o["success"] = t.success;
  o["truncated"] = t.truncated;
  o["failed"] = t.failed;
  o["error"] = t.error;
  o["loss_masked"] = t.loss_masked;
  o["metrics"] = t.metrics;
  o["turns"] = json::array();
  for (const auto& u : t.turns) o["turns"].push_back(turn_record(u, with_token_ids));
  return json_text(o);
}

void write_trajectories_jsonl(const std::string& path, const std::vector<rollout::Trajectory>& trajectories) {
  std::string data;
  for (const auto& t : trajectories) data += trajectory_to_json(t, /*with_token_ids=*/false) + "\n";
  write_file_atomic(path, data);
}

void write_advantages_jsonl(const std::string& path, const std::vector<rollout::Trajectory>& batch,
                            const AdvantageResult& result) {
  std::string data;
  for (size_t i = 0; i < batch.size(); ++i) {
    json j;
    j["episode_id"] = batch[i].episode_id;
    j["turn_advantages"] = i < result.turn_advantages.size() ? json(result.turn_advantages[i]) : json::array();
    j["turn_details"] = i < result.turn_details.size() ? json(result.turn_details[i]) : json::array();
    data += json_text(j) + "\n";
  }
  write_file_atomic(path, data);
}

}  // namespace agentrl::algo
