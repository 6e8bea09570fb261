// The Deep Search environment: a multi-turn retrieval agent in the format of
// Search-R1 (Jin et al. 2025) with ASearcher-style document access.
//
// Each turn the model reasons in <think>...</think> and ends with one action:
//   <search> query </search>  -> "\n\n<information>Doc 1(Title: ...) ...\n</information>\n\n"
//                                (top-k passages, Search-R1's rendering)
//   <access> doc-id </access> -> the document in chunks of access_chunk_words
//                                words; repeated access returns the next chunk
//   <answer> text </answer>   -> ends the episode; reward = EM (or F1) of the
//                                answer against the gold answers (qa.h)
// Observations are cut to max_obs_tokens whitespace-separated words (the env
// layer has no tokenizer; words over-count tokens only slightly for English).
// A turn without a parseable action gets Search-R1's invalid-action message.
// The episode also ends after max_turns turns (reward 0 without an answer).
// Optional format reward: an episode that ends with a well-formed <answer>
// but a wrong one gets `format_reward` instead of 0.
//
// step() takes the whole model response (extract_action returns it);
// stop_strings() are </search>, </access> and </answer>, which the engine
// must keep at the end of the response.
//
// Data: the built-in generated world (world.h; its passages are indexed into
// retriever.cache_dir once) or FlashRAG-format QA files with a retriever
// over a wiki-18 index built by `agentrl index build`, or a remote one.
// A retriever that is down throws IoError from step() after its retries:
// that is an infrastructure failure, not a bad action.
//
// Thread-safety: as envs/env.h; the suite (and its retriever) is shared.
//
// This layer is torch-free.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/envs/deepsearch/retriever.h"
#include "agentrl/envs/deepsearch/world.h"
#include "agentrl/envs/env.h"

namespace agentrl::envs::deepsearch {

struct RetrieverConfig {
  std::string kind = "local";
  std::string index_dir;  // local: index of `agentrl index build`; empty with data: world = build into cache_dir
  std::string cache_dir = "/tmp/agentrl-deepsearch-cache";
  double k1 = 0.9;
  double b = 0.4;
  std::string url = "http://127.0.0.1:8000";
  double connect_timeout_s = 2.0;
  double read_timeout_s = 10.0;
  int64_t retries = 3;
  // Searches of concurrently stepping episodes gathered into one retriever
  // call (Search-R1 sends a turn's queries in one request): wait at most
  // batch_window_ms for others, up to batch_max queries. 0 = one call each.
  double batch_window_ms = 0.0;
  int64_t batch_max = 512;

  void visit(config::Visitor& v) {
    v.field("kind", kind, "retrieval backend", {"local", "http"});
    v.field("index_dir", index_dir, "BM25 index directory (local); empty with data: world builds one in cache_dir");
    v.field("cache_dir", cache_dir, "where the built-in world's index is built once");
    v.field("k1", k1, "BM25 k1 (local)", config::Range::closed(0, 10));
    v.field("b", b, "BM25 b (local)", config::Range::closed(0, 1));
    v.field("url", url, "retrieval server, scheme://host:port or Search-R1's scheme://host:port/retrieve (http)");
    v.field("connect_timeout_s", connect_timeout_s, "HTTP connect timeout (s)", config::Range::positive());
    v.field("read_timeout_s", read_timeout_s, "HTTP read timeout (s)", config::Range::positive());
    v.field("retries", retries, "HTTP retries after the first attempt", config::Range::closed(0, 20));
    v.field("batch_window_ms", batch_window_ms,
            "gather the searches of concurrently stepping episodes for up to this long into one retriever call "
            "(Search-R1: one request per turn); 0 = a call per search",
            config::Range::closed(0, 10000));
    v.field("batch_max", batch_max, "most queries in one gathered retriever call", config::Range::closed(1, 1000000));
  }
};

struct WorldConfig {
  WorldOptions options;
  void visit(config::Visitor& v) {
    int64_t seed = static_cast<int64_t>(options.seed);
    v.field("seed", seed, "seed of the generated world", config::Range::at_least(0));
    options.seed = static_cast<uint64_t>(seed);
    v.field("people", options.people, "people", config::Range::closed(10, 10000000));
    v.field("cities", options.cities, "cities", config::Range::closed(2, 10000000));
    v.field("organisations", options.organisations, "organisations", config::Range::closed(2, 10000000));
    v.field("works", options.works, "works (books, symphonies, ...)", config::Range::closed(2, 10000000));
    v.field("questions", options.questions, "questions (80/10/10 train/dev/test)", config::Range::closed(10, 10000000));
  }
};

struct DeepSearchConfig {
  std::string data = "world";
  std::string train_file, dev_file, test_file;  // FlashRAG QA JSONL (data: files)
  int64_t max_turns = 4;
  int64_t topk = 3;
  int64_t max_obs_tokens = 500;
  bool allow_access = true;
  int64_t access_chunk_words = 200;
  std::string reward = "em";
  double format_reward = 0.0;
  std::string eval_split = "test";
  std::string action_parse = "last";  // last | first (Search-R1)
  bool question_mark = false;         // Search-R1: strip the question, end it with '?'
  std::string instruction =
      "Answer the question. Think step by step inside <think> </think> whenever you receive new information. "
      "To look something up, write <search> your query </search>; the top results come back inside "
      "<information> </information>. To read a whole document, write <access> doc id </access>. Search as often "
      "as you need. When you know the answer, write it inside <answer> </answer> with no explanation, e.g. "
      "<answer> Brastholm </answer>.";
  WorldConfig world;
  RetrieverConfig retriever;

  void visit(config::Visitor& v) {
    v.field("data", data, "built-in generated world, or FlashRAG QA files", {"world", "files"});
    v.field("train_file", train_file, "FlashRAG QA JSONL of the train split (data: files)");
    v.field("dev_file", dev_file, "FlashRAG QA JSONL of the dev split (data: files)");
    v.field("test_file", test_file, "FlashRAG QA JSONL of the test split (data: files)");
    v.field("max_turns", max_turns, "turns per episode", config::Range::closed(1, 100));
    v.field("topk", topk, "passages per search", config::Range::closed(1, 100));
    v.field("max_obs_tokens", max_obs_tokens, "observation budget (whitespace words)", config::Range::closed(10, 100000));
    v.field("allow_access", allow_access, "enable <access> doc-id </access>");
    v.field("access_chunk_words", access_chunk_words, "words per <access> chunk", config::Range::closed(10, 100000));
    v.field("reward", reward, "reward of the final answer", {"em", "f1"});
    v.field("format_reward", format_reward, "reward of a well-formed wrong answer (0 = off)", config::Range::closed(0, 1));
    v.field("eval_split", eval_split, "split used for evaluation", {"train", "dev", "test"});
    v.field("action_parse", action_parse,
            "which action tag of a response counts: last (the last complete tag) or first (the first opening tag "
            "with its closing tag after it, Search-R1's regex)",
            {"last", "first"});
    v.field("question_mark", question_mark,
            "strip the question and end it with '?' when it does not (Search-R1's data processing)");
    v.field("instruction", instruction, "text shown before the question");
    v.section("world", world, "built-in generated world");
    v.section("retriever", retriever, "retrieval backend");
  }
};

// Search-R1's message for a turn without a valid action.
extern const char* const kInvalidActionMessage;

// Search-R1's question processing: stripped, '?' appended unless it ends so.
std::string question_with_mark(const std::string& question);

// `text` cut after `max_words` whitespace-separated words (" ..." marks a cut).
std::string truncate_words(const std::string& text, size_t max_words);

class DeepSearchSuite;

class DeepSearchEnv final : public Env {
 public:
  explicit DeepSearchEnv(const DeepSearchSuite& suite);
  std::string reset(const Task& task, uint64_t seed) override;
  StepResult step(const std::string& action) override;
  std::vector<std::string> admissible_actions() const override { return {}; }
  std::string task_description() const override { return item_.question; }
  std::optional<std::string> expert_action() override;
  std::optional<std::string> extract_action(const std::string& response) const override { return response; }
  std::vector<std::string> stop_strings() const override { return {"</search>", "</access>", "</answer>"}; }
  int max_steps() const override;

 private:
  std::string access(const std::string& id);
  void fill_metrics(StepResult& r) const;

  const DeepSearchSuite& suite_;
  QaItem item_;
  std::vector<Hop> chain_;
  int turn_ = 0, searches_ = 0, accesses_ = 0, invalid_ = 0;
  bool done_ = true;
  std::map<std::string, size_t> next_chunk_;
};

class DeepSearchSuite final : public EnvSuite, public TaskSource {
 public:
  // ConfigError for inconsistent config or missing files; FormatError for
  // malformed data; IoError if the world index cannot be built.
  explicit DeepSearchSuite(DeepSearchConfig config);
  // With an explicit retriever (tests, shared retrievers).
  DeepSearchSuite(DeepSearchConfig config, std::shared_ptr<const Retriever> retriever);

  const std::string& name() const override { return name_; }
  const TaskSource& tasks() const override { return *this; }
  std::unique_ptr<Env> make_env() const override { return std::make_unique<DeepSearchEnv>(*this); }
  std::string eval_split() const override { return config_.eval_split; }

  std::vector<std::string> splits() const override { return {"train", "dev", "test"}; }
  size_t size(const std::string& split) const override { return items(split).size(); }
  Task get(const std::string& split, size_t index) const override;

  const std::vector<QaItem>& items(const std::string& split) const;
  // Relation chain of a world question (empty for external data).
  const std::vector<Hop>& chain(const Task& task) const;
  const QaItem& item(const Task& task) const;
  const DeepSearchConfig& config() const { return config_; }
  const Retriever& retriever() const { return *retriever_; }
  std::shared_ptr<const Retriever> shared_retriever() const { return retriever_; }
  const World* world() const { return world_.get(); }

 private:
  void load_data();
  std::string name_ = "deepsearch";
  DeepSearchConfig config_;
  std::unique_ptr<World> world_;
  std::map<std::string, std::vector<QaItem>> items_;
  std::map<std::string, std::vector<std::vector<Hop>>> chains_;
  std::shared_ptr<const Retriever> retriever_;
};

// Index directory of the built-in world for `options` under `cache_dir`;
// builds it (atomically: temp dir + rename) if missing.
std::string ensure_world_index(const World& world, const WorldOptions& options, const std::string& cache_dir);

}  // namespace agentrl::envs::deepsearch
