// WebShop as a native text environment (Yao et al. 2022, "WebShop: Towards
// Scalable Real-World Web Interaction with Grounded Language Agents";
// reference implementation princeton-nlp/WebShop, web_agent_text_env.py).
//
// Pages and transitions are those of WebShop's text env in its 'text'
// (simple) observation mode: the visible texts of each page joined by
// " [SEP] ".
//   search page   WebShop [SEP] Instruction: [SEP] <goal> [SEP] Search
//   results page  Instruction: [SEP] <goal> [SEP] Back to Search [SEP]
//                 Page 1 (Total results: 50) [SEP] (< Prev [SEP])? Next >
//                 [SEP] <ASIN> [SEP] <title> [SEP] <price> ... (10 per page
//                 of the top 50 BM25 hits)
//   item page     ... Back to Search [SEP] < Prev [SEP] <option name> [SEP]
//                 <value> ... [SEP] <title> [SEP] Price: $x [SEP] Rating: N.A.
//                 [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now
//   sub-pages     ... Back to Search [SEP] < Prev [SEP] <description |
//                 bullet points | reviews>
//   done page     "Thank you for shopping with us!" ... with the score.
// Actions: `search[query]` from any page (the query is lowercased), and
// `click[x]` where x (lowercased) is a clickable of the current page:
// buttons and ASIN links by their lowercased text, options by their value.
// Anything else (unparseable, unknown clickable, empty query,
// `click[search]`) is a no-op: same page, reward 0, info.invalid_action.
// Clicking `Buy Now` ends the episode with WebShop's reward (reward.h);
// reaching max_steps without buying ends it with reward 0 (truncated).
// Admissible actions: "search[<query>]" when the page has the search box
// (only the search page, as in WebShop's get_available_actions; free-form
// search is still accepted everywhere) plus "click[x]" for every clickable,
// sorted.
//
// Deviations from WebShop (documented in docs/parts/webshop-readme.md):
// whitespace-only text nodes are dropped from observations; the special
// '<r>', '<a>', '<c>', '<q>' search prefixes of the human-study site are not
// supported (searched literally); reviews are never shown (WebShop's loader
// leaves them empty too); two-number prices and price_upper are drawn from
// a seeded CPython-compatible generator instead of the unseeded global one.
//
// Thread-safety: a WebshopSuite is immutable and shared; each WebshopEnv is
// used by one thread at a time; envs of one suite run concurrently.
//
// This layer is torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/envs/env.h"
#include "agentrl/envs/search/bm25_index.h"
#include "agentrl/envs/webshop/product.h"
#include "agentrl/envs/webshop/reward.h"

namespace agentrl::envs::webshop {

struct WebshopConfig {
  // Real data: items_shuffle*.json (JSON array) or a documents.jsonl;
  // "" = the built-in generated catalog.
  std::string products_file;
  std::string attributes_file;          // items_ins_v2*.json ("" = none)
  std::string human_instructions_file;  // items_human_ins.json ("" = none)
  std::string goals = "human";          // human | synthetic (real data only)
  int64_t num_products = 0;             // real: first N records (0 = all); built-in: catalog size (0 = 3000)
  int64_t num_goals = 6000;             // built-in only
  int64_t test_goals = 500;             // split sizes: test = first, eval = next, train = rest
  int64_t eval_goals = 1000;
  // Where the BM25 index lives; "" = next to the products file
  // ("<file>.agentrl-index-<n>"), or for the built-in catalog / read-only
  // data a cache directory ($AGENTRL_CACHE_DIR, $XDG_CACHE_HOME/agentrl or
  // ~/.cache/agentrl, under webshop-index/).
  std::string index_dir;
  int64_t max_steps = 15;
  std::string observation_mode = "simple";  // simple | verl-agent
  std::string admissible_format = "agentrl";  // agentrl | verl-agent
  // How product clicks are written, by the scripted expert and in the
  // admissible actions: "lower" (WebShop's clickable text, the lowercased
  // ASIN) or "page" (the ASIN as the results page shows it). Clicks are
  // case-insensitive, so both reach the same page; "page" makes the click a
  // plain copy of page text, which a small model trained from scratch
  // learns far sooner than a copy that also changes case.
  std::string asin_case = "lower";
  int64_t seed = 42;  // catalog generation and price draws

  void visit(config::Visitor& v);
};

// The shared, read-only part: products, prices, goals and the search index.
struct WebshopData {
  ProductStore store;
  std::unordered_map<std::string, double> prices;
  std::vector<Goal> goals;  // split order: test, eval, train
  size_t test_goals = 0, eval_goals = 0;
  std::shared_ptr<const search::Bm25Index> index;
  int max_steps = 15;
  std::string observation_mode = "simple";    // WebshopConfig::observation_mode
  std::string admissible_format = "agentrl";  // WebshopConfig::admissible_format
  std::string asin_case = "lower";            // WebshopConfig::asin_case
  // Top-50 products for a query (WebShop's SEARCH_RETURN_N), skipping hits
  // that are not in the store.
  std::vector<const Product*> search(const std::string& query) const;
};

// Builds (or reuses) the BM25 index of `store` in `dir`. The index is
// reused when `dir` holds a committed index whose fingerprint file matches
// `fingerprint`; otherwise it is rebuilt (into a temporary directory that is
// renamed into place, so concurrent builders never see a partial index).
std::shared_ptr<const search::Bm25Index> open_or_build_index(const std::string& dir, const std::string& fingerprint,
                                                             const ProductStore& store);
// The directory open_or_build_index would use for this config.
std::string default_index_dir(const WebshopConfig& config, size_t num_products);

std::shared_ptr<const WebshopData> load_webshop_data(const WebshopConfig& config);

// WebShop's parse_action: re.match(r'(.+)\[(.+)\]', action) -> (name, arg);
// arg empty when there is no match.
std::pair<std::string, std::optional<std::string>> parse_action(const std::string& action);

class WebshopEnv final : public Env {
 public:
  explicit WebshopEnv(std::shared_ptr<const WebshopData> data);

  std::string reset(const Task& task, uint64_t seed) override;
  // Starts an episode on goal `goal_index` of WebshopData::goals.
  std::string reset_goal(size_t goal_index);
  StepResult step(const std::string& action) override;
  std::vector<std::string> admissible_actions() const override;
  // The search page lists the search bar as a template (search[<query>]).
  bool admissible_actions_exhaustive() const override;
  std::string task_description() const override;
  std::optional<std::string> expert_action() override;
  int max_steps() const override { return data_->max_steps; }

  enum class Page { kSearch, kResults, kItem, kDescription, kFeatures, kReviews, kDone };
  Page page() const { return page_; }
  std::string observation() const;
  const Goal& goal() const { return *goal_; }

 private:
  struct Clickable {
    enum Kind { kButton, kProductLink, kOption } kind;
    std::string option_name;  // kOption
  };
  struct Clickables {
    std::map<std::string, Clickable> by_text;
    std::vector<std::string> order;  // page (document) order, each text once
    void add(const std::string& text, Clickable c);
  };
  Clickables clickables() const;
  // A product click's ASIN in WebshopConfig::asin_case (the expert's and
  // the admissible actions').
  std::string clicked_asin(const std::string& asin) const;
  // A clickable's text as the admissible actions show it (WebshopConfig::asin_case).
  std::string shown_click_text(const std::string& text, const Clickable& c) const;
  std::string simple_observation() const;  // WebShop's 'text' mode
  void go_search_results(const std::string& keywords, int page);
  StepResult buy();

  std::shared_ptr<const WebshopData> data_;
  const Goal* goal_ = nullptr;
  Page page_ = Page::kSearch;
  std::string keywords_;
  int results_page_ = 1;
  std::vector<const Product*> results_;
  const Product* item_ = nullptr;
  std::vector<std::pair<std::string, std::string>> options_;  // chosen (name, value), insertion order
  int steps_ = 0;
  bool done_ = false;
  double reward_ = 0;
};

class WebshopTaskSource final : public TaskSource {
 public:
  explicit WebshopTaskSource(std::shared_ptr<const WebshopData> data) : data_(std::move(data)) {}
  std::vector<std::string> splits() const override { return {"train", "eval", "test"}; }
  size_t size(const std::string& split) const override;
  Task get(const std::string& split, size_t index) const override;

 private:
  std::shared_ptr<const WebshopData> data_;
};

class WebshopSuite final : public EnvSuite {
 public:
  explicit WebshopSuite(const WebshopConfig& config);
  explicit WebshopSuite(std::shared_ptr<const WebshopData> data);
  const std::string& name() const override { return name_; }
  const TaskSource& tasks() const override { return tasks_; }
  std::unique_ptr<Env> make_env() const override { return std::make_unique<WebshopEnv>(data_); }
  std::string eval_split() const override { return "eval"; }
  // Every product's ASIN as pages show it, and lowercased too when clicks
  // are written lowercase (WebshopConfig::asin_case).
  std::vector<std::string> identifiers() const override;
  const WebshopData& data() const { return *data_; }

 private:
  std::string name_ = "webshop";
  std::shared_ptr<const WebshopData> data_;
  WebshopTaskSource tasks_;
};

// Task id of goal `goal_index` ("webshop_goal_<i>", the position in the
// split order) and back; parse throws ConfigError for a foreign id.
std::string goal_task_id(size_t goal_index);
size_t parse_goal_task_id(const std::string& id);

}  // namespace agentrl::envs::webshop
