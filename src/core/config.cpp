// Typed YAML configuration: ranges, suggestions, the plug-in section
// registry and the load entry points (reading: config_reader.cpp, merging:
// config_tree.cpp, writing and docs: config_writer.cpp).
#include "agentrl/core/config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>

#include <nlohmann/json.hpp>

#include "config_format.h"
#include "config_reader.h"
#include "config_tree.h"

namespace agentrl::config {

// ---- Range --------------------------------------------------------------------

bool Range::contains(double x) const {
  if (std::isnan(x)) return !bounded();
  if (lo_open ? !(x > lo) : !(x >= lo)) return false;
  if (hi_open ? !(x < hi) : !(x <= hi)) return false;
  return true;
}

bool Range::bounded() const { return std::isfinite(lo) || std::isfinite(hi); }

std::string Range::describe() const { return detail::describe_range(*this, false); }

namespace detail {

std::string format_double(double x) {
  if (std::isnan(x)) return ".nan";
  if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
  char buf[64];
  // %.15g is exact for most values people write (0.1, 1e-06); fall back to
  // 17 significant digits, which always round-trips an IEEE double.
  for (int prec : {15, 16, 17}) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, x);
    double back = 0;
    if (parse_double(buf, back) && back == x) break;
  }
  return buf;
}

std::string describe_range(const Range& r, bool integer) {
  const std::string what = integer ? "an integer" : "a number";
  auto num = [&](double x) { return integer && std::fabs(x) < 9e15 ? std::to_string(static_cast<int64_t>(x)) : format_double(x); };
  const bool has_lo = std::isfinite(r.lo);
  const bool has_hi = std::isfinite(r.hi);
  if (has_lo && has_hi)
    return what + " in " + (r.lo_open ? "(" : "[") + num(r.lo) + ", " + num(r.hi) + (r.hi_open ? ")" : "]");
  if (has_lo) return what + (r.lo_open ? " > " : " >= ") + num(r.lo);
  if (has_hi) return what + (r.hi_open ? " < " : " <= ") + num(r.hi);
  return integer ? "any integer" : "any number";
}

std::string yaml_quote(const std::string& s) {
  static const char* kReserved[] = {"null", "Null", "NULL", "~",   "true", "True", "TRUE", "false", "False",
                                    "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"};
  bool plain = !s.empty() && (std::isalnum(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == '/');
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-' || c == '+')) {
      plain = false;
      break;
    }
  }
  for (const char* r : kReserved)
    if (s == r) plain = false;
  if (plain) return s;
  // A JSON string is a valid YAML double-quoted scalar (YAML 1.2 is a JSON
  // superset), and nlohmann escapes control characters for us.
  return nlohmann::json(s).dump();
}

}  // namespace detail

// ---- closest_match --------------------------------------------------------------

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(const std::string& key, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

// ---- Plug-in section registry -----------------------------------------------------

namespace {
struct SectionRegistry {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, SectionInfo> sections;  // (scope, name) -> info
};
SectionRegistry& section_registry() {
  static SectionRegistry r;
  return r;
}
}  // namespace

void register_section(SectionInfo info) {
  auto& r = section_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (info.name.empty()) throw ConfigError("register_section: empty section name");
  auto key = std::make_pair(info.scope, info.name);
  if (r.sections.count(key) > 0) {
    throw ConfigError("config section '" + (info.scope.empty() ? "" : info.scope + ".") + info.name +
                      "' is registered twice");
  }
  r.sections.emplace(std::move(key), std::move(info));
}

std::vector<SectionInfo> registered_sections(const std::string& scope) {
  auto& r = section_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<SectionInfo> out;
  for (const auto& [key, info] : r.sections)
    if (key.first == scope) out.push_back(info);
  return out;
}

ExtensionSections::ExtensionSections(std::string scope) : scope_(std::move(scope)) {
  for (const auto& info : registered_sections(scope_)) {
    sections_[info.name] = info.make_default();
    docs_[info.name] = info.doc;
  }
}

ExtensionSections::ExtensionSections(const ExtensionSections& other) : scope_(other.scope_), docs_(other.docs_) {
  for (const auto& [name, s] : other.sections_) sections_[name] = s->clone();
}

ExtensionSections& ExtensionSections::operator=(const ExtensionSections& other) {
  if (this == &other) return *this;
  std::map<std::string, std::unique_ptr<Section>> copy;
  for (const auto& [name, s] : other.sections_) copy[name] = s->clone();
  sections_ = std::move(copy);
  scope_ = other.scope_;
  docs_ = other.docs_;
  return *this;
}

void ExtensionSections::visit(Visitor& v) {
  for (auto& [name, s] : sections_) {
    if (v.enter(name.c_str(), docs_[name].c_str())) {
      s->visit(v);
      v.leave();
    }
  }
}

namespace {
[[noreturn]] void no_section(const std::string& scope, const std::string& name,
                             const std::map<std::string, std::unique_ptr<Section>>& all) {
  std::string list;
  for (const auto& [n, s] : all) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError("no config section '" + (scope.empty() ? "" : scope + ".") + name + "' is registered (registered: " + (list.empty() ? "none" : list) + ")");
}
}  // namespace

Section& ExtensionSections::get(const std::string& name) {
  auto it = sections_.find(name);
  if (it == sections_.end()) no_section(scope_, name, sections_);
  return *it->second;
}

const Section& ExtensionSections::get(const std::string& name) const {
  auto it = sections_.find(name);
  if (it == sections_.end()) no_section(scope_, name, sections_);
  return *it->second;
}

// ---- Loading ------------------------------------------------------------------------

namespace {
// Validates the whole tree first (no assignment), then assigns, so a config
// error never leaves the struct half-updated.
void read_tree(const VisitFn& root, detail::Tree& tree, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) detail::merge_into(tree, detail::override_tree(o));
  for (bool assign : {false, true}) {
    detail::Reader reader(&tree, assign);
    root(reader);
    reader.finish();
  }
}
}  // namespace

void load_config(const VisitFn& root, const std::string& path, const std::vector<std::string>& overrides) {
  std::vector<std::string> chain;
  detail::Tree tree = detail::load_file_tree(path, path, chain);
  read_tree(root, tree, overrides);
}

void load_config_string(const VisitFn& root, const std::string& yaml_text, const std::string& file_name,
                        const std::vector<std::string>& overrides, const std::string& base_dir) {
  std::vector<std::string> chain;
  detail::Tree tree = detail::load_text_tree(yaml_text, file_name, base_dir, chain);
  read_tree(root, tree, overrides);
}

void apply_overrides(const VisitFn& root, const std::vector<std::string>& overrides) {
  detail::Tree tree;
  tree.is_map = true;
  read_tree(root, tree, overrides);
}

}  // namespace agentrl::config
