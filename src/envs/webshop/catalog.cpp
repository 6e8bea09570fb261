// Built-in WebShop catalog: deterministic synthetic products in WebShop's
// item schema and goals in its synthetic-instruction style; see product.h.
//
// The vocabulary mirrors WebShop's five top-level categories (beauty, food,
// fashion, furniture, electronics; engine.py's `category`), Amazon-style
// '›' category paths, WebShop-like attribute phrases and option values
// (colours from normalize.py's COLOR_SET, sizes from its SIZE_SET). Records
// are produced in the raw items_shuffle form (pricing "$a - $b", options
// {"Color": [{"value": "Black/White"}]}) and then cleaned with the same
// rules as real data, so both paths exercise one pipeline.
#include <algorithm>
#include <cstdio>
#include <iterator>

#include "agentrl/core/rng.h"
#include "agentrl/envs/webshop/goals.h"
#include "agentrl/envs/webshop/product.h"
#include "agentrl/envs/webshop/python_random.h"

namespace agentrl::envs::webshop {
namespace {

struct ProductType {
  const char* query;     // WebShop's search-query bucket (lowercase)
  const char* noun;      // head noun(s) of the title
  const char* path;      // category path after the root
  int options;           // 0 none, 1 colour, 2 colour + size, 3 size/count only
};

struct Category {
  const char* name;
  const char* root;
  std::vector<ProductType> types;
  std::vector<const char*> attributes;
  std::vector<const char*> sizes;
};

const std::vector<Category>& categories() {
  static const std::vector<Category> c = {
      {"beauty",
       "Beauty & Personal Care",
       {{"lip makeup", "Lipstick", "Makeup › Lips › Lipstick", 1},
        {"hair extensions, wigs & accessories", "Hair Extension", "Hair Care › Hair Extensions", 1},
        {"shampoo & conditioner", "Shampoo", "Hair Care › Shampoo & Conditioner › Shampoos", 3},
        {"deodorants & antiperspirants", "Deodorant", "Personal Care › Deodorants", 3},
        {"nail polish", "Nail Polish", "Foot, Hand & Nail Care › Nail Polish", 1},
        {"face serums", "Face Serum", "Skin Care › Face › Serums", 3},
        {"makeup brushes", "Makeup Brush Set", "Tools & Accessories › Makeup Brushes", 1}},
       {"long lasting", "cruelty free", "natural ingredients", "paraben free", "sensitive skin", "easy apply",
        "tea tree", "essential oils", "dry skin", "travel size", "fragrance free", "vegan"},
       {"1 fl oz (pack of 1)", "2 fl oz (pack of 1)", "3.4 fl oz (pack of 2)", "8 ounce", "12 ounce (pack of 3)"}},
      {"grocery",
       "Grocery & Gourmet Food",
       {{"snack foods", "Snack Bars", "Snack Foods › Bars › Nutrition Bars", 3},
        {"beverages", "Protein Shake", "Beverages › Meal Replacement & Protein Drinks", 3},
        {"coffee", "Ground Coffee", "Beverages › Coffee, Tea & Cocoa › Coffee › Ground Coffee", 3},
        {"herbal tea", "Herbal Tea", "Beverages › Coffee, Tea & Cocoa › Tea › Herbal", 3},
        {"candy & chocolate", "Dark Chocolate", "Candy & Chocolate › Chocolate Bars", 3},
        {"nut butters", "Peanut Butter", "Pantry Staples › Jams, Jellies & Sweet Spreads › Nut Butters", 3}},
       {"gluten free", "non gmo", "low sugar", "keto friendly", "dairy free", "high protein", "sugar free",
        "plant based", "soy free", "usda organic", "low carb", "ready eat"},
       {"12 count (pack of 1)", "24 count", "6 ounce (pack of 6)", "16 ounce", "1.5 pound (pack of 2)", "30 count"}},
      {"fashion",
       "Clothing, Shoes & Jewelry",
       {{"men's shoes", "Running Shoes", "Men › Shoes › Athletic › Running", 2},
        {"women's dresses", "Maxi Dress", "Women › Clothing › Dresses › Casual", 2},
        {"men's t-shirts", "T-Shirt", "Men › Clothing › Shirts › T-Shirts", 2},
        {"women's sandals", "Sandals", "Women › Shoes › Sandals › Flat", 2},
        {"women's leggings", "Leggings", "Women › Clothing › Active › Leggings", 2},
        {"men's jackets", "Rain Jacket", "Men › Clothing › Jackets & Coats › Rainwear", 2},
        {"hats & caps", "Baseball Cap", "Men › Accessories › Hats & Caps › Baseball Caps", 1}},
       {"machine wash", "non slip", "rubber sole", "quick drying", "button closure", "elastic waist", "long sleeve",
        "daily wear", "moisture wicking", "relaxed fit", "slim fit", "memory foam"},
       {"small", "medium", "large", "x-large", "xx-large", "x-small", "7", "8", "9", "10", "11"}},
      {"garden",
       "Home & Kitchen",
       {{"sofas and couches", "Sofa Couch", "Furniture › Living Room Furniture › Sofas & Couches", 1},
        {"console tables", "Console Table", "Furniture › Living Room Furniture › Tables › Sofa Tables", 1},
        {"bed frames", "Platform Bed Frame", "Furniture › Bedroom Furniture › Beds, Frames & Bases", 2},
        {"office chairs", "Office Chair", "Furniture › Home Office Furniture › Home Office Chairs", 1},
        {"bath towels", "Bath Towel Set", "Bath › Towels › Bath Towels", 2},
        {"table lamps", "Table Lamp", "Lighting & Ceiling Fans › Lamps & Shades › Table Lamps", 1}},
       {"easy assemble", "solid wood", "living room", "space saving", "metal legs", "wood frame", "easy clean",
        "high density", "mid century", "storage space", "heavy duty", "dining room"},
       {"twin", "full", "queen", "king", "1-light", "2-light", "set of 2", "set of 4"}},
      {"electronics",
       "Electronics",
       {{"headphones", "Wireless Earbuds", "Headphones, Earbuds & Accessories › Earbud Headphones", 1},
        {"phone cases", "Phone Case", "Cell Phones & Accessories › Cases, Holsters & Sleeves › Basic Cases", 2},
        {"usb cables", "USB C Cable", "Computers & Accessories › Cables › USB Cables", 2},
        {"microphones", "USB Microphone", "Musical Instruments › Microphones & Accessories › Microphones", 1},
        {"power banks", "Portable Charger", "Cell Phones & Accessories › Chargers & Power Adapters › Power Banks", 1},
        {"smart watch bands", "Watch Band", "Wearable Technology › Smartwatch Accessories › Bands", 2}},
       {"noise cancelling", "fast charging", "water resistant", "long battery life", "high speed", "easy install",
        "plug play", "hands free", "high definition", "dual band", "stereo sound", "wireless charging"},
       {"3 feet", "6 feet", "10 feet", "38 | 40 | 41 mm", "42 | 44 | 45 mm", "iphone 13", "iphone 14 pro", "pack of 2"}},
  };
  return c;
}

const char* const kColors[] = {"Black",  "White",  "Navy",     "Grey",      "Red",      "Pink",       "Beige",
                               "Blue",   "Green",  "Brown",    "Purple",    "Khaki",    "Rose Gold",  "Olive",
                               "Ivory",  "Teal",   "Burgundy", "Charcoal",  "Lavender", "Coral",      "Silver",
                               "Mint",   "Yellow", "Orange",   "Black/White", "Dark Heather", "Light Blue", "Walnut"};
const char* const kSyllables[] = {"ka", "lo", "mi", "ra", "vex", "su", "to", "ni", "zen", "qua", "bel", "dor",
                                  "fi", "gra", "hu", "jo", "lum", "nor", "pel", "sty", "tri", "vo", "wy", "xa"};
const char* const kOpeners[] = {"i need a", "i am looking for a", "i want a", "i'm looking for a", "find me a"};
const char* const kDescriptors[] = {"for Everyday Use", "with Gift Box", "for Women and Men", "for Travel",
                                    "for Home and Office", "- Premium Quality", "2-Pack", "for Gift"};

template <class T, size_t N>
const T& pick(Rng& rng, const T (&arr)[N]) {
  return arr[rng.uniform_int(0, static_cast<int64_t>(N) - 1)];
}
template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(v.size()) - 1))];
}

// k distinct indices of [0, n), in draw order.
std::vector<size_t> distinct(Rng& rng, size_t n, size_t k) {
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  for (size_t i = 0; i < k && i < n; ++i) std::swap(all[i], all[static_cast<size_t>(rng.uniform_int(i, n - 1))]);
  all.resize(std::min(k, n));
  return all;
}

std::string title_case(const std::string& s) {
  std::string out = s;
  bool start = true;
  for (char& c : out) {
    if (start && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    start = (c == ' ' || c == '-');
  }
  return out;
}

std::string upper(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// Bijective index -> 8 base-36 digits, so ASINs ("B0" + 8) are unique.
std::string asin_for(uint64_t seed, size_t index) {
  const uint64_t space = 2821109907456ULL;  // 36^8
  uint64_t v = (static_cast<uint64_t>(index) * 2654435761ULL + (seed % space)) % space;
  static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string s(8, '0');
  for (int i = 7; i >= 0; --i) {
    s[static_cast<size_t>(i)] = digits[v % 36];
    v /= 36;
  }
  return "B0" + s;
}

std::string money(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.2f", x);
  return buf;
}

}  // namespace

Product CatalogGenerator::product(size_t index) const {
  Rng rng(mix_seed(seed_, index));
  const Category& cat = pick(rng, categories());
  const ProductType& type = pick(rng, cat.types);
  std::string brand;
  int syl = static_cast<int>(rng.uniform_int(2, 3));
  for (int i = 0; i < syl; ++i) brand += pick(rng, kSyllables);
  brand = title_case(brand);
  auto attr_idx = distinct(rng, cat.attributes.size(), static_cast<size_t>(rng.uniform_int(2, 4)));
  std::vector<std::string> attrs;
  for (size_t i : attr_idx) attrs.push_back(cat.attributes[i]);

  Product p;
  p.asin = asin_for(seed_, index);
  p.title = brand + " " + title_case(attrs[0]) + " " + type.noun + " " +
            (attrs.size() > 2 ? title_case(attrs[2]) + " " : "") + pick(rng, kDescriptors);
  p.category = cat.name;
  p.query = type.query;
  p.product_category = std::string(cat.root) + " › " + type.path;
  p.description = brand + " " + type.noun + " designed with care. It is " + attrs[0] + " and " + attrs[1] +
                  ", made to last and easy to love.";
  for (const auto& a : attrs)
    p.bullet_points.push_back(upper(a) + ": this " + std::string(type.noun) + " is " + a + " by design. ");
  // Pricing like Amazon listings: one price or a "$a - $b" range.
  double base = 5.0 + static_cast<double>(rng.uniform_int(0, 9500)) / 100.0 * (1 + rng.uniform_int(0, 3));
  std::string pricing = money(base);
  if (rng.uniform() < 0.3) pricing += " - " + money(base + static_cast<double>(rng.uniform_int(100, 2000)) / 100.0);
  p.pricing = parse_pricing(pricing);
  p.price_tag = price_tag(p.pricing);
  // Options: raw values cleaned like engine.py (strip, '/' -> ' | ', lower).
  auto clean = [](std::string v) {
    std::string out;
    for (char c : v) {
      if (c == '/')
        out += " | ";
      else
        out.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c);
    }
    return out;
  };
  if (type.options == 1 || type.options == 2) {
    auto ci = distinct(rng, std::size(kColors), static_cast<size_t>(rng.uniform_int(2, 5)));
    std::vector<std::string> colors;
    for (size_t i : ci) colors.push_back(clean(kColors[i]));
    p.options.emplace_back("color", colors);
  }
  if (type.options == 2 || type.options == 3) {
    auto si = distinct(rng, cat.sizes.size(), static_cast<size_t>(rng.uniform_int(2, 4)));
    std::vector<std::string> sizes;
    for (size_t i : si) sizes.push_back(clean(cat.sizes[i]));
    p.options.emplace_back("size", sizes);
  }
  p.attributes = attrs;
  p.main_image = "https://example.invalid/images/" + p.asin + ".jpg";
  return p;
}

Goal CatalogGenerator::goal(const Product& p, double price, uint64_t goal_seed) const {
  Rng rng(mix_seed(seed_ ^ 0x600D5EEDULL, goal_seed));
  Goal g = goal_for_product(p);
  auto ai = distinct(rng, p.attributes.size(), static_cast<size_t>(rng.uniform_int(1, std::min<int64_t>(3, p.attributes.size()))));
  for (size_t i : ai) g.attributes.push_back(p.attributes[i]);
  // Options in sorted-name order, as get_synthetic_goals builds them.
  auto opts = p.options;
  std::sort(opts.begin(), opts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string option_text;
  for (const auto& [name, values] : opts) {
    const std::string& v = pick(rng, values);
    g.goal_options.push_back({name, v});
    option_text += (option_text.empty() ? "" : ", and ") + name + ": " + v;
  }
  if (!option_text.empty()) option_text = " with " + option_text;
  // Instruction: "<opener> <attr>, <attr> and <attr> <noun>" (lowercase).
  std::string attrs_text;
  for (size_t i = 0; i < g.attributes.size(); ++i) {
    if (i > 0) attrs_text += (i + 1 == g.attributes.size()) ? " and " : ", ";
    attrs_text += g.attributes[i];
  }
  std::string noun;
  for (const auto& c : categories())
    for (const auto& t : c.types)
      if (p.query == t.query) noun = t.noun;
  for (char& ch : noun)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  PyRandom prng(mix_seed(goal_seed, 0x9A1CE));
  std::vector<double> range;
  for (double x : price_range())
    if (x > price && range.size() < 4) range.push_back(x);
  std::string price_text;
  if (range.size() >= 2) {
    auto s = prng.sample(range, 2);
    g.price_upper = std::max(s[0], s[1]);
    char buf[64];
    std::snprintf(buf, sizeof buf, ", and price lower than %.2f dollars", g.price_upper);
    price_text = buf;
  } else {
    g.price_upper = 1000000.0;
  }
  g.instruction_text = std::string(pick(rng, kOpeners)) + " " + attrs_text + " " + noun + option_text + price_text;
  g.options_are_dict = true;
  g.weight = 1.0;
  return g;
}

}  // namespace agentrl::envs::webshop
