// WebShop products and goals: the data model, the loaders of WebShop's real
// data files, and the built-in catalog generator (goal sampling from the real
// data: goals.h).
//
// The model follows what WebShop's load_products / get_goals produce
// (web_agent_site/engine/engine.py, goal.py): a product has Title (= name),
// Description (= full_description), BulletPoints (= small_description as a
// list), pricing (parsed "$a - $b" string), Price tag ("$12.99",
// "$10.0 to $15.0" with Python's float repr), lowercased options with '/'
// replaced by ' | ', Attributes (from items_ins_v2*.json, ['DUMMY_ATTR'] when
// absent) and query (lowercased, stripped). A goal is WebShop's goal dict.
//
// Loaders throw FormatError naming the file (and the record's index / asin)
// for malformed input, IoError for unreadable files.
//
// Thread-safety: plain values; a ProductStore is immutable after loading and
// safe to read concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentrl::envs::webshop {

struct Product {
  std::string asin;
  std::string title;                     // "name" / "Title"
  std::string description;               // "full_description" / "Description"
  std::vector<std::string> bullet_points;
  std::string category;                  // e.g. "beauty"
  std::string query;                     // lowercased, stripped
  std::string product_category;          // "A › B › C"
  std::vector<double> pricing;           // 1 or 2 numbers
  std::string price_tag;                 // "$12.99" or "$10.0 to $15.0"
  // Option name -> values, in the file's order (Python dicts keep insertion
  // order, and the item page lists them in that order).
  std::vector<std::pair<std::string, std::vector<std::string>>> options;
  std::vector<std::string> attributes;
  std::string rating = "N.A.";
  std::string main_image;
};

// One option requirement of a goal. Synthetic goals store options as a dict
// (name -> value) and human goals as a list of values (name empty); the
// reward treats the two differently, exactly as goal.py does (a dict's
// items() are (name, value) tuples).
struct GoalOption {
  std::string name;
  std::string value;
};

struct Goal {
  std::string asin;
  std::string category;
  std::string query;
  std::string name;
  std::string product_category;
  std::string instruction_text;
  std::vector<std::string> attributes;
  double price_upper = 1000000.0;
  std::vector<GoalOption> goal_options;
  bool options_are_dict = true;
  double weight = 1.0;
};

// A goal for product `p` with the fields goal.py copies from the product
// (asin, category, query, name, product_category); the rest is the caller's.
Goal goal_for_product(const Product& p);

// Python's repr(float) ("12.99", "100.0", "1e+16").
std::string python_float_repr(double x);
// WebShop's price parsing: every "$"-separated piece stripped of all but
// digits and '.', parsed as a number; throws std::invalid_argument if a
// piece is not a number.
std::vector<double> parse_pricing(const std::string& pricing);
// Price tag of parsed pricing ("$12.99", "$10.0 to $15.0").
std::string price_tag(const std::vector<double>& pricing);
// Text indexed for search, as search_engine/convert_product_file_format.py
// builds it: Title, Description, first bullet point and "name: v1, v2, and
// name2: ..." joined by spaces, lowercased.
std::string index_text(const Product& p);

// Products with ASIN lookup.
class ProductStore {
 public:
  void add(Product p);  // later duplicates of an ASIN are ignored
  size_t size() const { return products_.size(); }
  const Product& at(size_t i) const { return products_[i]; }
  const Product* find(const std::string& asin) const;
  const std::vector<Product>& all() const { return products_; }

 private:
  std::vector<Product> products_;
  std::unordered_map<std::string, size_t> by_asin_;
};

// --- Real WebShop data ------------------------------------------------------

// Per-ASIN instruction data: items_ins_v2*.json (synthetic: attributes,
// instruction, instruction_attributes) and items_human_ins.json (human:
// a list of {instruction, instruction_attributes, instruction_options}).
struct HumanInstruction {
  std::string instruction;
  std::vector<std::string> attributes;
  std::vector<std::string> options;
};
struct ProductAnnotations {
  bool has_attributes = false;
  std::vector<std::string> attributes;
  bool has_instruction = false;
  std::string instruction;
  std::vector<std::string> instruction_attributes;
  std::vector<HumanInstruction> human;
};
using AnnotationMap = std::unordered_map<std::string, ProductAnnotations>;

// Reads items_ins_v2*.json ({asin: {attributes, instruction?,
// instruction_attributes?}}) into `out`.
void load_attribute_file(const std::string& path, AnnotationMap& out);
// Reads items_human_ins.json ({asin: [{instruction, instruction_attributes,
// instruction_options, ...}]}) into `out`.
void load_human_instruction_file(const std::string& path, AnnotationMap& out);

// Reads items_shuffle*.json (a JSON array of raw product records) with
// WebShop's cleaning: only the first `max_products` records (0 = all), skip
// ASIN "nan" or longer than 10 characters, skip duplicate ASINs, parse
// pricing (missing/empty -> [100.0]), lowercase options and replace '/' by
// ' | ', BulletPoints = small_description (wrapped in a list if a string),
// Attributes from `annotations` (['DUMMY_ATTR'] if absent). Records already
// in WebShop's processed form (pricing as a list of numbers, "Title",
// "options", "Attributes") are accepted too.
ProductStore load_products_file(const std::string& path, size_t max_products, const AnnotationMap& annotations);
// Reads a JSONL file with one product per line, either a processed product
// or {"id", "contents", "product": {...}} (pyserini's documents.jsonl).
ProductStore load_products_jsonl(const std::string& path, const AnnotationMap& annotations);

// --- Built-in catalog -------------------------------------------------------

// A deterministic synthetic catalog in WebShop's schema: product i depends
// only on (seed, i), so catalogs of any size can be streamed (e.g. into the
// search index) without holding them in memory.
class CatalogGenerator {
 public:
  explicit CatalogGenerator(uint64_t seed) : seed_(seed) {}
  Product product(size_t index) const;
  // A synthetic goal for product `index` (one option combination, attributes
  // drawn from the product's, price_upper above its price), in WebShop's
  // instruction style: "i need a ... with color: x, and size: y, and price
  // lower than 40.00 dollars". `price` is the product's sampled price.
  Goal goal(const Product& p, double price, uint64_t goal_seed) const;

 private:
  uint64_t seed_;
};

}  // namespace agentrl::envs::webshop
