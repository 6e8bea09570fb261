// WebShop data model helpers, real-data loaders and goal construction; see
// product.h. Cleaning rules follow web_agent_site/engine/engine.py
// load_products and goal.py get_human_goals / get_synthetic_goals.
#include "agentrl/envs/webshop/product.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/webshop/text_match.h"

namespace agentrl::envs::webshop {
using json = nlohmann::ordered_json;

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: fixed notation when
  // 1e-4 <= |x| < 1e16, else d.ddde+XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp10 = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  std::string out;
  const int decpt = exp10 + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += e;
  }
  return neg ? "-" + out : out;
}

std::vector<double> parse_pricing(const std::string& pricing) {
  // engine.py: [float(Decimal(re.sub(r'[^\d.]', '', p))) for p in pricing.split('$')[1:]]
  std::vector<double> out;
  size_t pos = pricing.find('$');
  while (pos != std::string::npos) {
    size_t next = pricing.find('$', pos + 1);
    std::string piece = pricing.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    std::string kept;
    for (char c : piece)
      if ((c >= '0' && c <= '9') || c == '.') kept.push_back(c);
    double v = 0;
    auto r = std::from_chars(kept.data(), kept.data() + kept.size(), v);
    if (kept.empty() || r.ec != std::errc() || r.ptr != kept.data() + kept.size())
      throw std::invalid_argument("price piece '$" + piece + "' is not a number");
    out.push_back(v);
    pos = next;
  }
  return out;
}

std::string price_tag(const std::vector<double>& pricing) {
  if (pricing.size() == 1) return "$" + python_float_repr(pricing[0]);
  return "$" + python_float_repr(pricing[0]) + " to $" + python_float_repr(pricing[1]);
}

namespace {
using strings::lower_ascii;
}  // namespace

Goal goal_for_product(const Product& p) {
  Goal g;
  g.asin = p.asin;
  g.category = p.category;
  g.query = p.query;
  g.name = p.title;
  g.product_category = p.product_category;
  return g;
}

std::string index_text(const Product& p) {
  std::string options;
  for (const auto& [name, values] : p.options) {
    std::string joined;
    for (size_t i = 0; i < values.size(); ++i) joined += (i ? ", " : "") + values[i];
    options += (options.empty() ? "" : ", and ") + name + ": " + joined;
  }
  const std::string first_bullet = p.bullet_points.empty() ? "" : p.bullet_points[0];
  return unicode_lower(p.title + " " + p.description + " " + first_bullet + " " + options);
}

void ProductStore::add(Product p) {
  if (by_asin_.count(p.asin)) return;
  by_asin_.emplace(p.asin, products_.size());
  products_.push_back(std::move(p));
}

const Product* ProductStore::find(const std::string& asin) const {
  auto it = by_asin_.find(asin);
  return it == by_asin_.end() ? nullptr : &products_[it->second];
}

// ------------------------------------------------------------ loading

namespace {

json parse_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open WebShop data file '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw FormatError("WebShop data file '" + path + "' is not valid JSON: " + e.what());
  }
}

[[noreturn]] void bad(const std::string& path, const std::string& where, const std::string& what) {
  throw FormatError("WebShop data file '" + path + "', " + where + ": " + what);
}

std::string get_string(const json& obj, const char* key, const std::string& path, const std::string& where,
                       bool required, const std::string& fallback = "") {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) bad(path, where, std::string("missing key '") + key + "'");
    return fallback;
  }
  if (!it->is_string()) bad(path, where, std::string("key '") + key + "' must be a string, got " + it->type_name());
  return it->get<std::string>();
}

std::vector<std::string> get_string_list(const json& v, const std::string& path, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array()) bad(path, where, std::string("expected a list of strings, got ") + v.type_name());
  for (const auto& e : v) {
    if (!e.is_string()) bad(path, where, std::string("expected a list of strings, found ") + e.type_name());
    out.push_back(e.get<std::string>());
  }
  return out;
}

using strings::replace_all;
using strings::trim;

// One product record (raw items_shuffle form or processed form) -> Product.
// Returns false for records WebShop skips (bad ASIN).
bool convert_record(const json& r, const std::string& path, const std::string& where, const AnnotationMap& ann,
                    Product& p) {
  if (!r.is_object()) bad(path, where, std::string("product record must be an object, got ") + r.type_name());
  p.asin = get_string(r, "asin", path, where, true);
  if (p.asin == "nan" || p.asin.size() > 10) return false;
  const std::string w = where + " (asin " + p.asin + ")";
  p.title = r.contains("name") ? get_string(r, "name", path, w, true) : get_string(r, "Title", path, w, true);
  p.description = r.contains("full_description") ? get_string(r, "full_description", path, w, false)
                                                 : get_string(r, "Description", path, w, false);
  p.category = get_string(r, "category", path, w, false);
  p.query = trim(lower_ascii(get_string(r, "query", path, w, false)));
  p.product_category = get_string(r, "product_category", path, w, false);
  // BulletPoints = small_description if a list, else [small_description].
  auto sd = r.find("small_description");
  if (sd != r.end() && sd->is_array()) {
    p.bullet_points = get_string_list(*sd, path, w + ", small_description");
  } else {
    p.bullet_points = {get_string(r, "small_description", path, w, false)};
  }
  // Pricing: a "$a - $b" string (raw) or a list of numbers (processed).
  auto pr = r.find("pricing");
  if (pr == r.end() || pr->is_null() || (pr->is_string() && pr->get<std::string>().empty()) ||
      (pr->is_array() && pr->empty())) {
    p.pricing = {100.0};
  } else if (pr->is_string()) {
    try {
      p.pricing = parse_pricing(pr->get<std::string>());
    } catch (const std::invalid_argument& e) {
      bad(path, w, std::string("bad pricing '") + pr->get<std::string>() + "': " + e.what());
    }
    if (p.pricing.empty()) bad(path, w, "bad pricing '" + pr->get<std::string>() + "': no '$' amount");
    if (p.pricing.size() > 2) p.pricing.resize(2);
  } else if (pr->is_array()) {
    for (const auto& v : *pr) {
      if (!v.is_number()) bad(path, w, "pricing list must hold numbers");
      p.pricing.push_back(v.get<double>());
    }
    if (p.pricing.size() > 2) p.pricing.resize(2);
  } else {
    bad(path, w, std::string("pricing must be a string or a list, got ") + pr->type_name());
  }
  p.price_tag = price_tag(p.pricing);
  // Options: processed {"name": [values]} or raw customization_options
  // {"Name": [{"value": "Black/White", "image": ...}]}.
  auto opts = r.find("options");
  if (opts != r.end() && opts->is_object() && !r.contains("customization_options")) {
    for (auto it = opts->begin(); it != opts->end(); ++it)
      p.options.emplace_back(it.key(), get_string_list(it.value(), path, w + ", options." + it.key()));
  } else {
    auto co = r.find("customization_options");
    if (co != r.end() && co->is_object()) {
      for (auto it = co->begin(); it != co->end(); ++it) {
        if (it.value().is_null()) continue;
        if (!it.value().is_array()) bad(path, w, "customization_options." + it.key() + " must be a list");
        std::vector<std::string> values;
        for (const auto& c : it.value()) {
          if (!c.is_object() || !c.contains("value") || !c["value"].is_string())
            bad(path, w, "customization_options." + it.key() + " entries need a string 'value'");
          values.push_back(lower_ascii(replace_all(trim(c["value"].get<std::string>()), "/", " | ")));
        }
        p.options.emplace_back(lower_ascii(it.key()), std::move(values));
      }
    } else if (co != r.end() && !co->is_null() && !(co->is_string() && co->get<std::string>().empty())) {
      bad(path, w, std::string("customization_options must be an object, got ") + co->type_name());
    }
  }
  // engine.py: Attributes = attributes[asin]['attributes'] when present
  // (even if empty), else ['DUMMY_ATTR']; processed records carry their own.
  auto a = ann.find(p.asin);
  if (a != ann.end() && a->second.has_attributes) {
    p.attributes = a->second.attributes;
  } else if (r.contains("Attributes")) {
    p.attributes = get_string_list(r["Attributes"], path, w + ", Attributes");
  } else {
    p.attributes = {"DUMMY_ATTR"};
  }
  auto img = r.find("images");
  if (img != r.end() && img->is_array() && !img->empty() && (*img)[0].is_string())
    p.main_image = (*img)[0].get<std::string>();
  if (r.contains("Rating") && r["Rating"].is_string()) p.rating = r["Rating"].get<std::string>();
  return true;
}

}  // namespace

void load_attribute_file(const std::string& path, AnnotationMap& out) {
  json j = parse_json_file(path);
  if (!j.is_object()) throw FormatError("WebShop attribute file '" + path + "' must hold a JSON object {asin: {...}}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string where = "asin " + it.key();
    if (!it.value().is_object()) bad(path, where, "entry must be an object");
    auto& a = out[it.key()];
    const json& e = it.value();
    if (e.contains("attributes")) {
      a.attributes = get_string_list(e["attributes"], path, where + ", attributes");
      a.has_attributes = true;
    }
    if (e.contains("instruction") && !e["instruction"].is_null()) {
      a.has_instruction = true;
      a.instruction = get_string(e, "instruction", path, where, true);
      if (e.contains("instruction_attributes"))
        a.instruction_attributes = get_string_list(e["instruction_attributes"], path, where + ", instruction_attributes");
    }
  }
}

void load_human_instruction_file(const std::string& path, AnnotationMap& out) {
  json j = parse_json_file(path);
  if (!j.is_object()) throw FormatError("WebShop human instruction file '" + path + "' must hold a JSON object {asin: [...]}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string where = "asin " + it.key();
    if (!it.value().is_array()) bad(path, where, "entry must be a list of instructions");
    auto& a = out[it.key()];
    size_t k = 0;
    for (const auto& e : it.value()) {
      const std::string w = where + ", instruction " + std::to_string(k++);
      if (!e.is_object()) bad(path, w, "must be an object");
      HumanInstruction h;
      h.instruction = get_string(e, "instruction", path, w, true);
      h.attributes = get_string_list(e.value("instruction_attributes", json::array()), path, w + ", instruction_attributes");
      h.options = get_string_list(e.value("instruction_options", json::array()), path, w + ", instruction_options");
      a.human.push_back(std::move(h));
    }
  }
}

ProductStore load_products_file(const std::string& path, size_t max_products, const AnnotationMap& annotations) {
  json j = parse_json_file(path);
  if (!j.is_array()) throw FormatError("WebShop product file '" + path + "' must hold a JSON array of products");
  ProductStore store;
  size_t n = max_products == 0 ? j.size() : std::min(max_products, j.size());
  for (size_t i = 0; i < n; ++i) {
    Product p;
    if (convert_record(j[i], path, "record " + std::to_string(i), annotations, p)) store.add(std::move(p));
  }
  return store;
}

ProductStore load_products_jsonl(const std::string& path, const AnnotationMap& annotations) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot open WebShop data file '" + path + "'");
  ProductStore store;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      bad(path, "line " + std::to_string(lineno), std::string("invalid JSON: ") + e.what());
    }
    const json& rec = (j.is_object() && j.contains("product")) ? j["product"] : j;
    Product p;
    if (convert_record(rec, path, "line " + std::to_string(lineno), annotations, p)) store.add(std::move(p));
  }
  return store;
}

}  // namespace agentrl::envs::webshop
