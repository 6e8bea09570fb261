#include "agentrl/envs/deepsearch/deepsearch_env.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/deepsearch/batching_retriever.h"
#include "agentrl/envs/registry.h"
#include "agentrl/envs/search/bm25_index.h"

namespace agentrl::envs::deepsearch {

namespace fs = std::filesystem;

// Search-R1 (search_r1/llm_agent/generation.py), verbatim, as the issue asks.
const char* const kInvalidActionMessage =
    "\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. "
    "If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n";

std::string question_with_mark(const std::string& question) {
  std::string q = strings::trim(question);
  if (q.empty() || q.back() != '?') q += '?';
  return q;
}

std::string truncate_words(const std::string& text, size_t max_words) {
  size_t words = 0;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool space = std::isspace(static_cast<unsigned char>(text[i])) != 0;
    if (!space && !in_word && ++words > max_words) return text.substr(0, i) + "...";
    in_word = !space;
  }
  return text;
}

// ---- suite ----------------------------------------------------------------

std::string ensure_world_index(const World& world, const WorldOptions& o, const std::string& cache_dir) {
  std::string key = "world-s" + std::to_string(o.seed) + "-p" + std::to_string(o.people) + "-c" +
                    std::to_string(o.cities) + "-o" + std::to_string(o.organisations) + "-w" +
                    std::to_string(o.works);
  std::string dir = (fs::path(cache_dir) / key).string();
  if (search::Bm25Index::exists(dir)) return dir;
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) throw IoError("deepsearch.retriever.cache_dir: cannot create '" + cache_dir + "': " + ec.message());
  // Build beside the final place, then rename, so that concurrent processes
  // never open a half-built index.
  static std::atomic<int> counter{0};
  std::string tmp = dir + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  build_passage_index(world.passages, tmp, /*overwrite=*/true);
  fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    if (!search::Bm25Index::exists(dir)) throw IoError("deepsearch: cannot move the world index into '" + dir + "'");
  }
  return dir;
}

namespace {
std::shared_ptr<const Retriever> make_backend(const DeepSearchConfig& c, const World* world) {
  const auto& r = c.retriever;
  if (r.kind == "http") {
    HttpRetrieverOptions o;
    o.url = r.url;
    o.connect_timeout_s = r.connect_timeout_s;
    o.read_timeout_s = r.read_timeout_s;
    o.retries = r.retries;
    return std::make_shared<HttpRetriever>(o);
  }
  std::string dir = r.index_dir;
  if (dir.empty()) {
    if (!world)
      throw ConfigError("deepsearch.retriever.index_dir is required with data: files and retriever.kind: local "
                        "(build one with `agentrl index build --corpus wiki-18.jsonl --out DIR`)");
    dir = ensure_world_index(*world, c.world.options, r.cache_dir);
  }
  return std::make_shared<LocalRetriever>(dir, r.k1, r.b);
}

std::shared_ptr<const Retriever> make_retriever(const DeepSearchConfig& c, const World* world) {
  auto backend = make_backend(c, world);
  const auto& r = c.retriever;
  if (r.batch_window_ms <= 0) return backend;
  return std::make_shared<BatchingRetriever>(backend, static_cast<size_t>(r.batch_max), r.batch_window_ms);
}
}  // namespace

DeepSearchSuite::DeepSearchSuite(DeepSearchConfig config) : config_(std::move(config)) {
  load_data();
  retriever_ = make_retriever(config_, world_.get());
}

DeepSearchSuite::DeepSearchSuite(DeepSearchConfig config, std::shared_ptr<const Retriever> retriever)
    : config_(std::move(config)), retriever_(std::move(retriever)) {
  load_data();
}

void DeepSearchSuite::load_data() {
  if (config_.data == "world") {
    world_ = std::make_unique<World>(World::generate(config_.world.options));
    for (const char* s : {"train", "dev", "test"}) {
      for (auto& q : world_->split(s)) {
        items_[s].push_back(q.qa);
        chains_[s].push_back(q.chain);
      }
    }
    return;
  }
  const std::pair<const char*, const std::string*> files[] = {
      {"train", &config_.train_file}, {"dev", &config_.dev_file}, {"test", &config_.test_file}};
  for (auto& [split, file] : files) {
    items_[split];
    chains_[split];
    if (file->empty()) continue;
    if (!fs::exists(*file)) throw ConfigError(std::string("deepsearch.") + split + "_file: no such file '" + *file + "'");
    items_[split] = load_flashrag_qa(*file);
    chains_[split].resize(items_[split].size());
  }
  if (items_[config_.eval_split].empty())
    throw ConfigError("deepsearch: data: files but the eval split '" + config_.eval_split +
                      "' has no questions (set deepsearch." + config_.eval_split + "_file)");
}

const std::vector<QaItem>& DeepSearchSuite::items(const std::string& split) const {
  auto it = items_.find(split);
  if (it == items_.end()) throw ConfigError("deepsearch: unknown split '" + split + "' (expected train, dev or test)");
  return it->second;
}

Task DeepSearchSuite::get(const std::string& split, size_t index) const {
  const auto& v = items(split);
  if (index >= v.size()) throw std::out_of_range("deepsearch: task " + std::to_string(index) + " of split " + split);
  return Task{v[index].id, split, static_cast<int64_t>(index), v[index].type};
}

const QaItem& DeepSearchSuite::item(const Task& task) const {
  const auto& v = items(task.split);
  if (task.index < 0 || static_cast<size_t>(task.index) >= v.size())
    throw std::out_of_range("deepsearch: task index " + std::to_string(task.index) + " out of range");
  return v[static_cast<size_t>(task.index)];
}

const std::vector<Hop>& DeepSearchSuite::chain(const Task& task) const {
  item(task);  // range check
  return chains_.at(task.split)[static_cast<size_t>(task.index)];
}

// ---- env ------------------------------------------------------------------

DeepSearchEnv::DeepSearchEnv(const DeepSearchSuite& suite) : suite_(suite) {}

int DeepSearchEnv::max_steps() const { return static_cast<int>(suite_.config().max_turns); }

std::string DeepSearchEnv::reset(const Task& task, uint64_t seed) {
  (void)seed;  // episodes are deterministic given the task
  item_ = suite_.item(task);
  chain_ = suite_.chain(task);
  turn_ = searches_ = accesses_ = invalid_ = 0;
  done_ = false;
  next_chunk_.clear();
  const std::string question = suite_.config().question_mark ? question_with_mark(item_.question) : item_.question;
  return suite_.config().instruction + " Question: " + question + "\n";
}

void DeepSearchEnv::fill_metrics(StepResult& r) const {
  r.info.task_type = item_.type;
  r.info.metrics["turns"] = turn_;
  r.info.metrics["searches"] = searches_;
  r.info.metrics["accesses"] = accesses_;
  r.info.metrics["invalid_turns"] = invalid_;
}

std::string DeepSearchEnv::access(const std::string& id) {
  auto doc = suite_.retriever().get(id);
  if (!doc) return "No document with id '" + id + "'.";
  std::istringstream in(doc->text());
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  const size_t chunk = static_cast<size_t>(suite_.config().access_chunk_words);
  const size_t parts = std::max<size_t>(1, (words.size() + chunk - 1) / chunk);
  size_t& next = next_chunk_[id];
  if (next >= parts) return "Doc " + id + "(Title: " + doc->title() + ") has no more parts (" + std::to_string(parts) + " in all).";
  std::string text;
  for (size_t i = next * chunk; i < std::min(words.size(), (next + 1) * chunk); ++i) text += (text.empty() ? "" : " ") + words[i];
  std::string out = "Doc " + id + "(Title: " + doc->title() + ") [part " + std::to_string(next + 1) + "/" +
                    std::to_string(parts) + "] " + text;
  ++next;
  return out;
}

StepResult DeepSearchEnv::step(const std::string& response) {
  StepResult res;
  const auto& c = suite_.config();
  if (done_) {
    res.done = true;
    res.info.invalid_action = true;
    res.observation = "The episode is over.";
    fill_metrics(res);
    return res;
  }
  ++turn_;
  auto action = parse_action(response, c.allow_access, c.action_parse == "first");
  if (!action) {
    ++invalid_;
    res.info.invalid_action = true;
    res.observation = kInvalidActionMessage;
  } else if (action->kind == ActionKind::kAnswer) {
    double em = exact_match(action->content, item_.golden_answers);
    double f1 = f1_score(action->content, item_.golden_answers);
    res.info.metrics["em"] = em;
    res.info.metrics["f1"] = f1;
    res.info.score = c.reward == "f1" ? f1 : em;
    res.info.success = em == 1.0;
    res.reward = res.info.score > 0 ? res.info.score : c.format_reward;
    res.done = done_ = true;
    fill_metrics(res);
    return res;
  } else if (action->kind == ActionKind::kSearch) {
    ++searches_;
    std::vector<Passage> docs;
    for (auto& h : suite_.retriever().search(action->content, static_cast<size_t>(c.topk))) docs.push_back(h.passage);
    // Stripped, as Search-R1 strips the passages before wrapping them.
    std::string info = truncate_words(format_passages(docs, c.allow_access), static_cast<size_t>(c.max_obs_tokens));
    res.observation = "\n\n<information>" + strings::trim(info) + "</information>\n\n";
  } else {
    ++accesses_;
    std::string info = truncate_words(access(action->content), static_cast<size_t>(c.max_obs_tokens));
    res.observation = "\n\n<information>" + strings::trim(info) + "</information>\n\n";
  }
  if (turn_ >= c.max_turns) {
    res.done = done_ = true;
    res.info.metrics["em"] = 0;
    res.info.metrics["f1"] = 0;
  }
  fill_metrics(res);
  return res;
}

std::optional<std::string> DeepSearchEnv::expert_action() {
  if (done_) return std::nullopt;
  if (static_cast<size_t>(searches_) < chain_.size() && turn_ + 1 < suite_.config().max_turns) {
    const Hop& hop = chain_[static_cast<size_t>(searches_)];
    return "<think>Next I look up: " + hop_query(hop) + ".</think>\n<search> " + hop_query(hop) + " </search>";
  }
  if (chain_.empty() && searches_ == 0 && turn_ + 1 < suite_.config().max_turns)
    return "<think>Let me search for the question.</think>\n<search> " + item_.question + " </search>";
  return "<think>I have found the answer.</think>\n<answer> " + item_.golden_answers.at(0) + " </answer>";
}

AGENTRL_REGISTER_ENV(deepsearch, DeepSearchConfig, "multi-turn search agent (Search-R1 / ASearcher format)",
                     [](const DeepSearchConfig& c) { return std::make_shared<DeepSearchSuite>(c); });

}  // namespace agentrl::envs::deepsearch
