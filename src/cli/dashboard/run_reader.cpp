// RunReader: the run directory's files as the dashboard's JSON documents
// (see run_reader.h). Layout read (core/run_dir.h, train/collect.cpp):
//   config.yaml, metrics.jsonl, checkpoints/step_NNNNNN/trainer_state.json,
//   rollouts/iter_N[_rankR].jsonl (trajectories, algo/trajectory_io.h) and
//   rollouts/iter_N[_rankR].advantages.jsonl (what the estimator made of the
//   trained batch).
#include "run_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "agentrl/core/fs.h"
#include "agentrl/core/strings.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::dashboard {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// One JSON object per line. A last line without its newline is a record the
// writer has not finished (JsonlSink and write_file_atomic end every record
// with one): it is skipped and reported, like any line that is not an object.
std::vector<json> read_jsonl(const fs::path& path, json& problems) {
  std::vector<json> out;
  std::string text;
  try {
    text = read_file(path.string());
  } catch (const std::exception& e) {
    problems.push_back(path.filename().string() + ": cannot read: " + e.what());
    return out;
  }
  size_t start = 0;
  for (int64_t lineno = 1; start < text.size(); ++lineno) {
    size_t end = text.find('\n', start);
    const bool complete = end != std::string::npos;
    const std::string line = text.substr(start, complete ? end - start : std::string::npos);
    start = complete ? end + 1 : text.size();
    if (strings::is_blank(line)) continue;
    const std::string where = path.filename().string() + " line " + std::to_string(lineno);
    if (!complete) {
      problems.push_back(where + ": incomplete last line (the run may be writing it); skipped");
      break;
    }
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      problems.push_back(where + ": not a JSON object; skipped");
      continue;
    }
    out.push_back(std::move(j));
  }
  return out;
}

double mtime_seconds(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  // file_clock's epoch is the system clock's on Linux (libstdc++).
  return std::chrono::duration<double>(t.time_since_epoch()).count() -
         std::chrono::duration<double>(fs::file_time_type::clock::now().time_since_epoch()).count() +
         std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Rollout files of an iteration, rank order: iter_N.jsonl or iter_N_rankR.jsonl.
struct IterationFiles {
  std::map<int, fs::path> trajectories;  // rank -> file
  std::map<int, fs::path> advantages;
};

std::map<int64_t, IterationFiles> rollout_files(const fs::path& dir) {
  static const std::regex name(R"(iter_(\d+)(?:_rank(\d+))?(\.advantages)?\.jsonl)");
  std::map<int64_t, IterationFiles> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch m;
    const std::string file = it->path().filename().string();
    if (!it->is_regular_file() || !std::regex_match(file, m, name)) continue;
    auto& f = out[std::stoll(m[1].str())];
    const int rank = m[2].matched ? std::stoi(m[2].str()) : 0;
    (m[3].matched ? f.advantages : f.trajectories)[rank] = it->path();
  }
  return out;
}

template <class T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

int64_t count_flag(const json& turns, const char* key) {
  int64_t n = 0;
  if (turns.is_array())
    for (const auto& u : turns) n += get_or(u, key, false) ? 1 : 0;
  return n;
}

json mean_or_null(const json& values) {
  if (!values.is_array() || values.empty()) return nullptr;
  double sum = 0;
  for (const auto& v : values) sum += v.is_number() ? v.get<double>() : 0.0;
  return sum / static_cast<double>(values.size());
}

}  // namespace

struct RunReader::Batch {
  std::vector<json> episodes;
  std::map<std::string, json> advantages;  // episode_id -> record
  bool has_advantages = false;
  json problems = json::array();
};

RunReader::RunReader(int id, std::string dir) : id_(id), dir_(std::move(dir)) {}

json RunReader::info() const {
  json j = {{"id", id_}, {"path", dir_}, {"problems", json::array()}};
  j["name"] = fs::path(dir_).filename().string();
  const fs::path metrics = fs::path(dir_) / "metrics.jsonl", config = fs::path(dir_) / "config.yaml";
  j["is_run"] = fs::is_regular_file(metrics) || fs::is_regular_file(config);
  if (!fs::is_directory(dir_)) {
    j["problems"].push_back(dir_ + " is not a directory");
    j["is_run"] = false;
  } else if (!j["is_run"].get<bool>()) {
    j["problems"].push_back(dir_ + " is not a run directory (no metrics.jsonl or config.yaml)");
  }
  j["last_modified"] = mtime_seconds(metrics);
  j["iterations"] = static_cast<int64_t>(rollout_files(fs::path(dir_) / "rollouts").size());
  return j;
}

json RunReader::metrics() const {
  json out = {{"problems", json::array()}};
  const fs::path path = fs::path(dir_) / "metrics.jsonl";
  std::vector<json> rows;
  if (fs::exists(path))
    rows = read_jsonl(path, out["problems"]);
  else
    out["problems"].push_back("no metrics.jsonl in " + dir_ + " (yet)");
  std::set<std::string> keys;
  out["rows"] = json::array();
  for (const auto& r : rows) {
    json values = json::object();
    for (const auto& [k, v] : r.items()) {
      if (k == "step" || k == "wall_time") continue;
      if (!v.is_number() && !v.is_null()) continue;
      values[k] = v;
      keys.insert(k);
    }
    out["rows"].push_back({{"step", get_or<int64_t>(r, "step", -1)},
                           {"wall_time", get_or<double>(r, "wall_time", 0.0)},
                           {"values", std::move(values)}});
  }
  out["keys"] = std::vector<std::string>(keys.begin(), keys.end());
  return out;
}

namespace {

std::string yaml_string(const YAML::Node& root, std::initializer_list<const char*> path) {
  YAML::Node n;
  n.reset(root);  // reset, not `=`: assigning a yaml-cpp node writes into the tree it refers to
  for (const char* k : path) {
    if (!n.IsMap() || !n[k]) return "";
    n.reset(n[k]);
  }
  return n.IsScalar() ? n.as<std::string>() : "";
}

json checkpoint_list(const fs::path& dir) {
  json out = json::array();
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // Complete checkpoints only (train/checkpoint.cpp: a step_ directory
    // whose trainer_state.json exists; .tmp ones are being written).
    if (it->is_directory() && strings::starts_with(name, "step_") && name.find(".tmp") == std::string::npos &&
        fs::exists(it->path() / "trainer_state.json"))
      found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  for (const auto& p : found) {
    uintmax_t bytes = 0;
    for (fs::recursive_directory_iterator f(p, ec), end; !ec && f != end; f.increment(ec))
      if (f->is_regular_file(ec)) bytes += f->file_size(ec);
    const std::string name = p.filename().string();
    out.push_back({{"name", name}, {"iteration", std::stoll(name.substr(5))}, {"bytes", bytes}});
  }
  return out;
}

}  // namespace

json RunReader::summary() const {
  json out = {{"name", fs::path(dir_).filename().string()}, {"path", dir_}, {"problems", json::array()}};
  const fs::path config = fs::path(dir_) / "config.yaml";
  std::string yaml;
  try {
    yaml = read_file(config.string());
  } catch (const std::exception& e) {
    out["problems"].push_back("config.yaml: cannot read: " + std::string(e.what()));
  }
  out["config_yaml"] = yaml;
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    out["problems"].push_back("config.yaml: not YAML: " + std::string(e.what()));
  }
  out["env"] = yaml_string(root, {"env", "name"});
  out["estimator"] = yaml_string(root, {"algorithm", "adv_estimator"});
  json filters = json::array();
  if (root.IsMap() && root["algorithm"] && root["algorithm"]["filters"] && root["algorithm"]["filters"].IsSequence())
    for (const auto& f : root["algorithm"]["filters"]) filters.push_back(f.as<std::string>());
  out["filters"] = filters;
  const std::string model = yaml_string(root, {"model", "path"});
  out["model"] = model.empty() ? "from scratch (model.init)" : model;
  out["checkpoints"] = checkpoint_list(fs::path(dir_) / "checkpoints");
  json m = metrics();
  for (const auto& p : m["problems"]) out["problems"].push_back(p);
  std::map<std::string, double> time;
  int64_t iterations = 0;
  for (const auto& row : m["rows"]) {
    iterations = std::max(iterations, row["step"].get<int64_t>());
    for (const char* k : {"rollout", "old_logprob", "update", "other", "iteration"}) {
      const auto v = row["values"].find(std::string("time/") + k + "_s");
      if (v != row["values"].end() && v->is_number()) time[k] += v->get<double>();
    }
  }
  out["time_s"] = {{"rollout", time["rollout"]}, {"old_logprob", time["old_logprob"]}, {"update", time["update"]},
                   {"other", time["other"]}, {"total", time["iteration"]}};
  out["iterations"] = iterations;
  out["reproduce"] = "agentrl train " + config.string();
  return out;
}

json RunReader::rollouts() const {
  json out = {{"iterations", json::array()}, {"problems", json::array()}};
  const fs::path dir = fs::path(dir_) / "rollouts";
  if (!fs::is_directory(dir)) {
    out["problems"].push_back("no rollouts/ directory (rollout.dump_trajectories off, or not written yet)");
    return out;
  }
  for (const auto& [it, files] : rollout_files(dir)) {
    json names = json::array();
    int64_t episodes = 0;
    for (const auto& [rank, path] : files.trajectories) {
      names.push_back(path.filename().string());
      // Counting newlines is enough for the list (the iteration view parses).
      std::string text;
      try {
        text = read_file(path.string());
      } catch (const std::exception&) {
      }
      episodes += std::count(text.begin(), text.end(), '\n');
    }
    out["iterations"].push_back(
        {{"iteration", it}, {"files", names}, {"episodes", episodes}, {"has_advantages", !files.advantages.empty()}});
  }
  return out;
}

RunReader::Batch RunReader::load_batch(int64_t iteration) const {
  auto all = rollout_files(fs::path(dir_) / "rollouts");
  auto it = all.find(iteration);
  if (it == all.end() || it->second.trajectories.empty())
    throw NotFound("run '" + dir_ + "' has no rollouts of iteration " + std::to_string(iteration));
  Batch b;
  for (const auto& [rank, path] : it->second.trajectories)
    for (auto& j : read_jsonl(path, b.problems)) b.episodes.push_back(std::move(j));
  b.has_advantages = !it->second.advantages.empty();
  for (const auto& [rank, path] : it->second.advantages)
    for (auto& j : read_jsonl(path, b.problems)) {
      // The key first: in `map[key(j)] = std::move(j)` C++17 evaluates the
      // right side (moving j away) before the left.
      std::string id = get_or<std::string>(j, "episode_id", "");
      b.advantages[id] = std::move(j);
    }
  return b;
}

namespace {

// The list row of one episode.
json episode_row(const json& e, int64_t index, const json* adv, bool has_advantages) {
  const json turns = e.contains("turns") ? e["turns"] : json::array();
  json row = {{"index", index},
              {"episode_id", get_or<std::string>(e, "episode_id", "")},
              {"group_id", get_or<int64_t>(e, "group_id", -1)},
              {"sample_index", get_or<int64_t>(e, "sample_index", -1)},
              {"task_id", get_or<std::string>(e, "task_id", "")},
              {"task_type", get_or<std::string>(e, "task_type", "")},
              {"reward", get_or<double>(e, "reward", 0.0)},
              {"score", get_or<double>(e, "score", 0.0)},
              {"success", get_or(e, "success", false)},
              {"turns", turns.is_array() ? turns.size() : 0},
              {"loss_masked", get_or(e, "loss_masked", false)},
              {"truncated", get_or(e, "truncated", false)},
              {"failed", get_or(e, "failed", false)},
              {"void_turns", count_flag(turns, "void_turn")},
              {"invalid_turns", count_flag(turns, "invalid_action")}};
  // Without an advantages file nothing is known of the batch: null.
  row["in_batch"] = has_advantages ? json(adv != nullptr) : json(nullptr);
  row["advantage_mean"] = adv != nullptr ? mean_or_null((*adv)["turn_advantages"]) : json(nullptr);
  return row;
}

}  // namespace

json RunReader::iteration(int64_t iteration) const {
  Batch b = load_batch(iteration);
  json out = {{"iteration", iteration}, {"episodes", json::array()}, {"problems", b.problems}};
  for (size_t i = 0; i < b.episodes.size(); ++i) {
    auto a = b.advantages.find(get_or<std::string>(b.episodes[i], "episode_id", ""));
    out["episodes"].push_back(episode_row(b.episodes[i], static_cast<int64_t>(i),
                                          a == b.advantages.end() ? nullptr : &a->second, b.has_advantages));
  }
  return out;
}

std::shared_ptr<const text::Tokenizer> RunReader::tokenizer(json& problems) const {
  std::lock_guard<std::mutex> lock(tok_mu_);
  if (!tok_tried_) {
    tok_tried_ = true;
    // The run's own tokenizer (trained for it), else the one its config names.
    std::string dir = (fs::path(dir_) / "tokenizer").string();
    if (!fs::is_directory(dir)) {
      YAML::Node root;
      try {
        root = YAML::LoadFile((fs::path(dir_) / "config.yaml").string());
      } catch (const std::exception&) {
      }
      dir = yaml_string(root, {"tokenizer", "path"});
      if (dir.empty()) dir = yaml_string(root, {"model", "path"});
    }
    try {
      if (dir.empty()) throw std::runtime_error("the run has no tokenizer/ and its config names none");
      tok_ = text::load_tokenizer(dir);
    } catch (const std::exception& e) {
      tok_error_ = std::string("token texts unavailable: cannot load the run's tokenizer: ") + e.what();
    }
  }
  if (!tok_ && !tok_error_.empty()) problems.push_back(tok_error_);
  return tok_;
}

namespace {

// Generated tokens with their text piece, log-prob and entropy ([] when the
// run did not record token ids).
json token_list(const json& u, const text::Tokenizer* tok) {
  json out = json::array();
  const json ids = u.value("generated_tokens", json::array());
  const json lps = u.value("logprobs", json::array()), hs = u.value("entropies", json::array());
  if (!ids.is_array()) return out;
  for (size_t k = 0; k < ids.size(); ++k) {
    const int64_t id = ids[k].is_number_integer() ? ids[k].get<int64_t>() : -1;
    std::string piece = "#" + std::to_string(id);
    if (tok != nullptr && id >= 0 && id < tok->vocab_size()) {
      try {
        piece = tok->token_bytes(static_cast<text::TokenId>(id));
      } catch (const std::exception&) {
      }
    }
    out.push_back({{"t", piece},
                   {"lp", lps.is_array() && k < lps.size() ? lps[k] : json(nullptr)},
                   {"h", hs.is_array() && k < hs.size() ? hs[k] : json(nullptr)}});
  }
  return out;
}

json turn_view(const json& u, size_t t, const json* adv, const text::Tokenizer* tok) {
  json v = json::object();
  for (const char* k : {"observation_before", "response", "action", "tool_output", "finish_reason"})
    v[k] = get_or<std::string>(u, k, "");
  for (const char* k : {"invalid_action", "void_turn", "truncated"}) v[k] = get_or(u, k, false);
  v["reward"] = get_or<double>(u, "reward", 0.0);
  v["n_context"] = get_or<int64_t>(u, "n_context", 0);
  v["n_generated"] = get_or<int64_t>(u, "n_generated", 0);
  v["tokens"] = token_list(u, tok);
  v["advantage"] = nullptr;
  v["details"] = json::object();
  if (adv != nullptr) {
    const json& a = (*adv)["turn_advantages"];
    if (a.is_array() && t < a.size()) v["advantage"] = a[t];
    const json& d = (*adv)["turn_details"];
    if (d.is_array() && t < d.size() && d[t].is_object()) v["details"] = d[t];
  }
  return v;
}

}  // namespace

json RunReader::episode(int64_t iteration, int64_t index) const {
  Batch b = load_batch(iteration);
  if (index < 0 || index >= static_cast<int64_t>(b.episodes.size()))
    throw NotFound("iteration " + std::to_string(iteration) + " has " + std::to_string(b.episodes.size()) +
                   " episodes; no episode " + std::to_string(index));
  json problems = b.problems;
  const json& e = b.episodes[static_cast<size_t>(index)];
  auto find_adv = [&](const json& ep) -> const json* {
    auto a = b.advantages.find(get_or<std::string>(ep, "episode_id", ""));
    return a == b.advantages.end() ? nullptr : &a->second;
  };
  const json* adv = find_adv(e);
  json view = episode_row(e, index, adv, b.has_advantages);
  view["error"] = get_or<std::string>(e, "error", "");
  view["context_mode"] = get_or<std::string>(e, "context_mode", "");
  view["metrics"] = e.value("metrics", json::object());
  view["turns"] = json::array();
  const json turns = e.value("turns", json::array());
  std::shared_ptr<const text::Tokenizer> tok;
  bool any_ids = false;
  for (const auto& u : turns) any_ids |= u.is_object() && u.contains("generated_tokens");
  if (any_ids) tok = tokenizer(problems);
  for (size_t t = 0; turns.is_array() && t < turns.size(); ++t)
    if (turns[t].is_object()) view["turns"].push_back(turn_view(turns[t], t, adv, tok.get()));
  json group = json::array();
  const int64_t gid = get_or<int64_t>(e, "group_id", -1);
  for (size_t i = 0; i < b.episodes.size(); ++i)
    if (get_or<int64_t>(b.episodes[i], "group_id", -2) == gid)
      group.push_back(episode_row(b.episodes[i], static_cast<int64_t>(i), find_adv(b.episodes[i]), b.has_advantages));
  return {{"episode", view}, {"group", group}, {"problems", problems}};
}

}  // namespace agentrl::dashboard
