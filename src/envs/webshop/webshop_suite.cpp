// WebShop suite: config, data loading (built-in or real), the on-disk search
// index, the task source and the env registration. See webshop_env.h.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/registry.h"
#include "agentrl/envs/webshop/goals.h"
#include "agentrl/envs/webshop/python_random.h"
#include "agentrl/envs/webshop/webshop_env.h"

namespace agentrl::envs::webshop {
namespace fs = std::filesystem;

void WebshopConfig::visit(config::Visitor& v) {
  v.field("products_file", products_file,
          "WebShop products: items_shuffle*.json or documents.jsonl; empty = built-in generated catalog");
  v.field("attributes_file", attributes_file, "items_ins_v2*.json (product attributes, synthetic instructions)");
  v.field("human_instructions_file", human_instructions_file, "items_human_ins.json (human instructions)");
  v.field("goals", goals, "goal set for real data", {"human", "synthetic"});
  v.field("num_products", num_products,
          "real data: use the first N product records (0 = all); built-in: catalog size (0 = 3000)",
          config::Range::at_least(0));
  v.field("num_goals", num_goals, "built-in catalog: number of generated goals", config::Range::at_least(1));
  v.field("test_goals", test_goals, "size of the test split (the first goals of the split order)",
          config::Range::at_least(0));
  v.field("eval_goals", eval_goals, "size of the eval split (the goals after test)", config::Range::at_least(0));
  v.field("index_dir", index_dir,
          "BM25 index directory; empty = next to the products file, or the agentrl cache for built-in/read-only data");
  v.field("max_steps", max_steps, "maximum steps of an episode", config::Range::at_least(1));
  v.field("observation_mode", observation_mode,
          "observation format: simple (WebShop's 'text' mode, [SEP]-joined) or verl-agent (the texts after the "
          "instruction, each in single quotes, as verl-agent's format_obs)",
          {"simple", "verl-agent"});
  v.field("admissible_format", admissible_format,
          "admissible actions: agentrl (sorted, search[<query>]) or verl-agent (search[<your query>] first, then "
          "every clickable in page order, click[search] included)",
          {"agentrl", "verl-agent"});
  v.field("asin_case", asin_case,
          "how product clicks are written by the scripted expert and in the admissible actions: lower (WebShop's "
          "clickable text) or page (the ASIN as the results page shows it; clicks are case-insensitive)",
          {"lower", "page"});
  v.field("seed", seed, "seed of the built-in catalog and of price draws", config::Range::at_least(0));
}

// ------------------------------------------------------------ index

namespace {
constexpr const char* kFingerprintFile = "agentrl_webshop_source";
constexpr int kIndexFormatVersion = 1;

std::string read_small_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string cache_root() {
  if (const char* d = std::getenv("AGENTRL_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/agentrl";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/agentrl";
  return (fs::temp_directory_path() / "agentrl-cache").string();
}

// Writable by access(2) and by its permission bits: root passes access()
// on read-only-by-mode directories (like a shared dataset), which should
// not receive an index.
bool dir_writable(const fs::path& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return false;
  return ::access(dir.c_str(), W_OK) == 0 && (st.st_mode & 0222) != 0;
}
}  // namespace

std::string default_index_dir(const WebshopConfig& config, size_t num_products) {
  if (!config.index_dir.empty()) return config.index_dir;
  const std::string n = std::to_string(num_products);
  if (config.products_file.empty())
    return cache_root() + "/webshop-index/builtin-s" + std::to_string(config.seed) + "-n" + n + "-v" +
           std::to_string(kIndexFormatVersion);
  fs::path file = fs::absolute(config.products_file);
  fs::path parent = file.parent_path();
  if (dir_writable(parent)) return (parent / (file.filename().string() + ".agentrl-index-" + n)).string();
  // Read-only data directory: cache keyed by the file's absolute path.
  size_t h = std::hash<std::string>()(file.string());
  std::ostringstream os;
  os << cache_root() << "/webshop-index/" << file.filename().string() << "-" << std::hex << h << std::dec << "-n" << n;
  return os.str();
}

std::shared_ptr<const search::Bm25Index> open_or_build_index(const std::string& dir, const std::string& fingerprint,
                                                             const ProductStore& store) {
  const fs::path fp = fs::path(dir) / kFingerprintFile;
  if (search::Bm25Index::exists(dir) && fs::exists(fp) && read_small_file(fp) == fingerprint) {
    try {
      auto index = search::Bm25Index::open(dir);
      // A cheap probe: a damaged database often opens but fails on read.
      if (index->size() == store.size() && (store.size() == 0 || index->get(store.at(0).asin))) return index;
    } catch (const Error&) {
      // Unreadable or corrupt: rebuilt below.
    }
  }
  // Build next to the target and rename into place: a concurrent reader
  // never sees a half-built index, and a crash leaves only the temp dir.
  const std::string tmp = dir + ".tmp." + std::to_string(::getpid());
  {
    search::Bm25IndexWriter writer(tmp, /*overwrite=*/true);
    for (const auto& p : store.all()) writer.add({p.asin, index_text(p), ""});
    writer.commit();
  }
  {
    std::ofstream out(fs::path(tmp) / kFingerprintFile);
    out << fingerprint;
    if (!out) throw IoError("cannot write '" + (fs::path(tmp) / kFingerprintFile).string() + "'");
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(fs::path(dir).parent_path(), ec);
  fs::rename(tmp, dir, ec);
  if (ec) {
    // Another process may have won the race; use its index if it matches.
    fs::remove_all(tmp);
    if (!(search::Bm25Index::exists(dir) && fs::exists(fp) && read_small_file(fp) == fingerprint))
      throw IoError("cannot move search index into '" + dir + "': " + ec.message());
  }
  return search::Bm25Index::open(dir);
}

std::vector<const Product*> WebshopData::search(const std::string& query) const {
  std::vector<const Product*> out;
  for (const auto& hit : index->search(query, 50))
    if (const Product* p = store.find(hit.id)) out.push_back(p);
  return out;
}

// ------------------------------------------------------------ loading

namespace {

void check_file(const std::string& key, const std::string& path) {
  if (!path.empty() && !fs::exists(path))
    throw ConfigError("webshop." + key + ": file '" + path + "' does not exist");
}

void load_builtin(const WebshopConfig& c, WebshopData& d) {
  const size_t n = c.num_products == 0 ? 3000 : static_cast<size_t>(c.num_products);
  CatalogGenerator gen(static_cast<uint64_t>(c.seed));
  for (size_t i = 0; i < n; ++i) d.store.add(gen.product(i));
  PyRandom price_rng(static_cast<uint64_t>(c.seed));
  d.prices = product_prices(d.store, price_rng);
  Rng pick(mix_seed(static_cast<uint64_t>(c.seed), 0x60A15ULL));
  for (int64_t g = 0; g < c.num_goals; ++g) {
    const Product& p = d.store.at(static_cast<size_t>(pick.uniform_int(0, static_cast<int64_t>(d.store.size()) - 1)));
    d.goals.push_back(gen.goal(p, d.prices.at(p.asin), static_cast<uint64_t>(g)));
  }
}

void load_real(const WebshopConfig& c, WebshopData& d) {
  check_file("products_file", c.products_file);
  check_file("attributes_file", c.attributes_file);
  check_file("human_instructions_file", c.human_instructions_file);
  AnnotationMap ann;
  if (!c.attributes_file.empty()) load_attribute_file(c.attributes_file, ann);
  if (!c.human_instructions_file.empty()) load_human_instruction_file(c.human_instructions_file, ann);
  const std::string& f = c.products_file;
  const bool jsonl = f.size() >= 6 && f.compare(f.size() - 6, 6, ".jsonl") == 0;
  d.store = jsonl ? load_products_jsonl(f, ann) : load_products_file(f, static_cast<size_t>(c.num_products), ann);
  if (d.store.size() == 0) throw ConfigError("webshop.products_file '" + f + "' holds no usable products");
  PyRandom rng(static_cast<uint64_t>(c.seed));
  d.prices = product_prices(d.store, rng);
  if (c.goals == "human") {
    if (c.human_instructions_file.empty())
      throw ConfigError("webshop.goals: human needs webshop.human_instructions_file (items_human_ins.json)");
    d.goals = human_goals(d.store, ann, d.prices, rng);
  } else {
    if (c.attributes_file.empty())
      throw ConfigError("webshop.goals: synthetic needs webshop.attributes_file (items_ins_v2.json)");
    d.goals = synthetic_goals(d.store, ann, d.prices, rng);
  }
  webshop_goal_shuffle(d.goals);
}

}  // namespace

std::shared_ptr<const WebshopData> load_webshop_data(const WebshopConfig& c) {
  auto d = std::make_shared<WebshopData>();
  d->max_steps = static_cast<int>(c.max_steps);
  d->observation_mode = c.observation_mode;
  d->admissible_format = c.admissible_format;
  d->asin_case = c.asin_case;
  if (c.products_file.empty())
    load_builtin(c, *d);
  else
    load_real(c, *d);
  if (d->goals.empty()) throw ConfigError("webshop: the configured data yields no goals");
  d->test_goals = std::min(d->goals.size(), static_cast<size_t>(c.test_goals));
  d->eval_goals = std::min(d->goals.size() - d->test_goals, static_cast<size_t>(c.eval_goals));
  std::ostringstream fp;
  fp << "agentrl-webshop-index v" << kIndexFormatVersion << "\n";
  if (c.products_file.empty()) {
    fp << "builtin seed=" << c.seed << " n=" << d->store.size() << "\n";
  } else {
    std::error_code ec;
    fp << "file=" << fs::absolute(c.products_file).string() << " size=" << fs::file_size(c.products_file, ec)
       << " mtime=" << fs::last_write_time(c.products_file, ec).time_since_epoch().count()
       << " attributes=" << c.attributes_file << " n=" << d->store.size() << "\n";
  }
  d->index = open_or_build_index(default_index_dir(c, d->store.size()), fp.str(), d->store);
  return d;
}

// ------------------------------------------------------------ tasks

std::string goal_task_id(size_t goal_index) { return "webshop_goal_" + std::to_string(goal_index); }

size_t parse_goal_task_id(const std::string& id) {
  const std::string prefix = "webshop_goal_";
  if (id.compare(0, prefix.size(), prefix) != 0 || id.size() == prefix.size())
    throw ConfigError("not a WebShop task id: '" + id + "' (expected webshop_goal_<index>)");
  size_t pos = 0;
  size_t v = std::stoul(id.substr(prefix.size()), &pos);
  if (pos != id.size() - prefix.size()) throw ConfigError("not a WebShop task id: '" + id + "'");
  return v;
}

namespace {
std::pair<size_t, size_t> split_range(const WebshopData& d, const std::string& split) {
  if (split == "test") return {0, d.test_goals};
  if (split == "eval") return {d.test_goals, d.test_goals + d.eval_goals};
  if (split == "train") return {d.test_goals + d.eval_goals, d.goals.size()};
  throw ConfigError("unknown WebShop split '" + split + "' (expected train, eval or test)");
}
}  // namespace

size_t WebshopTaskSource::size(const std::string& split) const {
  auto [b, e] = split_range(*data_, split);
  return e - b;
}

Task WebshopTaskSource::get(const std::string& split, size_t index) const {
  auto [b, e] = split_range(*data_, split);
  if (index >= e - b)
    throw std::out_of_range("WebShop split '" + split + "' has " + std::to_string(e - b) + " tasks; index " +
                            std::to_string(index) + " is out of range");
  Task t;
  t.id = goal_task_id(b + index);
  t.split = split;
  t.index = static_cast<int64_t>(index);
  t.task_type = data_->goals[b + index].category;
  return t;
}

WebshopSuite::WebshopSuite(const WebshopConfig& config) : WebshopSuite(load_webshop_data(config)) {}
WebshopSuite::WebshopSuite(std::shared_ptr<const WebshopData> data) : data_(data), tasks_(data) {}

std::vector<std::string> WebshopSuite::identifiers() const {
  std::vector<std::string> out;
  for (const auto& p : data_->store.all()) {
    out.push_back(p.asin);
    if (data_->asin_case == "lower") out.push_back(strings::lower_ascii(p.asin));
  }
  return out;
}

AGENTRL_REGISTER_ENV(webshop, WebshopConfig,
                     "WebShop online shopping (native; built-in catalog or real WebShop data)",
                     [](const WebshopConfig& c) { return std::make_shared<WebshopSuite>(c); });

}  // namespace agentrl::envs::webshop
