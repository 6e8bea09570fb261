// The reading visitor: walks a config struct through visit(), takes each
// field's value from the merged Tree, validates it (type, range, choices) and
// reports every key the struct did not ask for as unknown, with the closest
// valid key as a suggestion.
#include "config_reader.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "agentrl/core/error.h"
#include "config_format.h"

namespace agentrl::config::detail {
namespace {

// Parse results: ok, not a number at all, or a number outside the type.
enum class Parsed { kOk, kBad, kOverflow };

Parsed parse_int(const std::string& s, int64_t& out) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return Parsed::kBad;
  auto r = std::from_chars(b, e, out);
  if (r.ptr != e) return Parsed::kBad;
  if (r.ec == std::errc::result_out_of_range) return Parsed::kOverflow;
  return r.ec == std::errc() ? Parsed::kOk : Parsed::kBad;
}

bool looks_numeric(const std::string& s) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && (*b == '+' || *b == '-')) ++b;
  double tmp;
  auto r = std::from_chars(b, e, tmp, std::chars_format::general);
  return b != e && std::isdigit(static_cast<unsigned char>(*b)) && r.ptr == e;
}

}  // namespace

bool parse_double(const std::string& s, double& out) {
  // YAML 1.2 core schema spellings of infinity and NaN.
  static const char* kInf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
  static const char* kNegInf[] = {"-.inf", "-.Inf", "-.INF"};
  static const char* kNan[] = {".nan", ".NaN", ".NAN"};
  for (const char* x : kInf)
    if (s == x) return out = std::numeric_limits<double>::infinity(), true;
  for (const char* x : kNegInf)
    if (s == x) return out = -std::numeric_limits<double>::infinity(), true;
  for (const char* x : kNan)
    if (s == x) return out = std::numeric_limits<double>::quiet_NaN(), true;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return false;
  // from_chars would accept "inf"/"nan"; YAML spells them differently.
  if (std::isalpha(static_cast<unsigned char>(*b)) || (*b == '-' && b + 1 != e && std::isalpha(static_cast<unsigned char>(b[1]))))
    return false;
  auto r = std::from_chars(b, e, out, std::chars_format::general);
  return r.ec == std::errc() && r.ptr == e;
}

Reader::Reader(Tree* root, bool assign) : assign_(assign) { stack_.push_back(Frame{root, "", {}}); }

std::string Reader::path(const char* key) const { return stack_.back().prefix + key; }

Tree* Reader::lookup(const char* key) {
  Frame& f = stack_.back();
  f.known.push_back(key);
  if (f.node == nullptr) return nullptr;
  Tree* t = f.node->find(key);
  if (t != nullptr) t->used = true;
  return t;
}

std::string Reader::bad(const Origin& at, const std::string& key_path, const std::string& what) const {
  return at.where() + ": key '" + key_path + "': " + what;
}

const YAML::Node* Reader::scalar_leaf(Tree* t, const std::string& key_path, const char* expected) {
  if (t->is_map) throw ConfigError(bad(t->value_at, key_path, std::string("expected ") + expected + ", got a map"));
  if (!t->leaf().IsScalar())
    throw ConfigError(bad(t->value_at, key_path, std::string("expected ") + expected + ", got " + describe_node(t->leaf())));
  return &t->leaf();
}

void Reader::check_range(const Origin& at, const std::string& key_path, const std::string& text, double x,
                         const Range& range, bool integer) {
  if (range.contains(x)) return;
  throw ConfigError(bad(at, key_path,
                        "value " + text + " is out of range, expected " + describe_range(range, integer)));
}

void Reader::field(const char* key, bool& value, const char*) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  const std::string s = scalar_leaf(t, kp, "true or false")->Scalar();
  bool v;
  if (s == "true" || s == "True" || s == "TRUE") {
    v = true;
  } else if (s == "false" || s == "False" || s == "FALSE") {
    v = false;
  } else {
    throw ConfigError(bad(t->value_at, kp, "expected true or false, got '" + s + "'"));
  }
  if (assign_) value = v;
}

int64_t Reader::to_int(const YAML::Node& n, const Origin& at, const std::string& kp, const Range& range) {
  if (!n.IsScalar()) throw ConfigError(bad(at, kp, "expected an integer, got " + describe_node(n)));
  int64_t v = 0;
  const Parsed p = parse_int(n.Scalar(), v);
  if (p == Parsed::kOverflow)
    throw ConfigError(bad(at, kp, "value " + n.Scalar() + " is out of range, expected a 64-bit integer"));
  if (p == Parsed::kBad) throw ConfigError(bad(at, kp, "expected an integer, got '" + n.Scalar() + "'"));
  check_range(at, kp, n.Scalar(), static_cast<double>(v), range, true);
  return v;
}

double Reader::to_double(const YAML::Node& n, const Origin& at, const std::string& kp, const Range& range) {
  if (!n.IsScalar()) throw ConfigError(bad(at, kp, "expected a number, got " + describe_node(n)));
  double v = 0;
  if (!parse_double(n.Scalar(), v)) {
    if (looks_numeric(n.Scalar()))
      throw ConfigError(bad(at, kp, "value " + n.Scalar() + " is out of range, expected a number representable as a double"));
    throw ConfigError(bad(at, kp, "expected a number, got '" + n.Scalar() + "'"));
  }
  check_range(at, kp, n.Scalar(), v, range, false);
  return v;
}

void Reader::field(const char* key, int64_t& value, const char*, Range range) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  scalar_leaf(t, kp, "an integer");
  const int64_t v = to_int(t->leaf(), t->value_at, kp, range);
  if (assign_) value = v;
}

void Reader::field(const char* key, double& value, const char*, Range range) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  scalar_leaf(t, kp, "a number");
  const double v = to_double(t->leaf(), t->value_at, kp, range);
  if (assign_) value = v;
}

void Reader::check_choice(const Origin& at, const std::string& kp, const std::string& s, const Choices& choices) {
  if (choices.empty()) return;
  for (const auto& c : choices)
    if (c == s) return;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  std::string msg = "expected one of: " + list + ", got '" + s + "'";
  const std::string near = closest_match(s, choices);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  throw ConfigError(bad(at, kp, msg));
}

void Reader::field(const char* key, std::string& value, const char*, Choices choices) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  const std::string s = scalar_leaf(t, kp, "a string")->Scalar();
  check_choice(t->value_at, kp, s, choices);
  if (assign_) value = s;
}

const YAML::Node& Reader::sequence_leaf(Tree* t, const std::string& kp) {
  if (t->is_map) throw ConfigError(bad(t->value_at, kp, "expected a list, got a map"));
  if (!t->leaf().IsSequence())
    throw ConfigError(bad(t->value_at, kp, "expected a list, got " + describe_node(t->leaf())));
  return t->leaf();
}

Origin Reader::element_at(const Tree* t, const YAML::Node& elem) const {
  return t->value_at.override ? t->value_at : t->value_at.at_line(line_of(elem));
}

void Reader::field(const char* key, std::vector<std::string>& value, const char*, Choices choices) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  std::vector<std::string> out;
  size_t i = 0;
  for (const auto& elem : sequence_leaf(t, kp)) {
    const std::string ep = kp + "[" + std::to_string(i++) + "]";
    const Origin at = element_at(t, elem);
    if (!elem.IsScalar()) throw ConfigError(bad(at, ep, "expected a string, got " + describe_node(elem)));
    check_choice(at, ep, elem.Scalar(), choices);
    out.push_back(elem.Scalar());
  }
  if (assign_) value = std::move(out);
}

void Reader::field(const char* key, std::vector<double>& value, const char*) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  std::vector<double> out;
  size_t i = 0;
  for (const auto& elem : sequence_leaf(t, kp))
    out.push_back(to_double(elem, element_at(t, elem), kp + "[" + std::to_string(i++) + "]", Range{}));
  if (assign_) value = std::move(out);
}

void Reader::field(const char* key, std::vector<int64_t>& value, const char*) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  std::vector<int64_t> out;
  size_t i = 0;
  for (const auto& elem : sequence_leaf(t, kp))
    out.push_back(to_int(elem, element_at(t, elem), kp + "[" + std::to_string(i++) + "]", Range{}));
  if (assign_) value = std::move(out);
}

void Reader::field(const char* key, std::map<std::string, std::string>& value, const char*) {
  Tree* t = lookup(key);
  if (t == nullptr) return;
  const std::string kp = path(key);
  if (!t->is_map) {
    if (t->leaf().IsNull()) {
      if (assign_) value.clear();
      return;
    }
    throw ConfigError(bad(t->value_at, kp, "expected a map of strings, got " + describe_node(t->leaf())));
  }
  std::map<std::string, std::string> out;
  for (auto& e : t->kids) {
    e.value.used = true;
    const std::string ep = kp + "." + e.key;
    if (e.value.is_map || !e.value.leaf().IsScalar())
      throw ConfigError(bad(e.value.value_at, ep,
                            "expected a string, got " + (e.value.is_map ? std::string("a map") : describe_node(e.value.leaf()))));
    out[e.key] = e.value.leaf().Scalar();
  }
  // A map field replaces the whole map (merged keys from defaults included).
  if (assign_) value = std::move(out);
}

bool Reader::enter(const char* key, const char*) {
  Tree* t = lookup(key);
  const std::string kp = path(key);
  if (t != nullptr && !t->is_map && !t->leaf().IsNull())
    throw ConfigError(bad(t->value_at, kp, "expected a map (config section), got " + describe_node(t->leaf())));
  stack_.push_back(Frame{t != nullptr && t->is_map ? t : nullptr, kp + ".", {}});
  return true;
}

void Reader::check_unknown(const Frame& f) const {
  if (f.node == nullptr) return;
  for (const auto& e : f.node->kids) {
    if (e.value.used) continue;
    const std::string full = f.prefix + e.key;
    std::string msg = e.value.key_at.where() + ": unknown key '" + full + "'";
    const std::string near = closest_match(e.key, f.known);
    if (!near.empty()) {
      msg += " (did you mean '" + f.prefix + near + "'?)";
    } else if (!f.known.empty()) {
      std::string list;
      for (const auto& k : f.known) list += (list.empty() ? "" : ", ") + k;
      msg += " (valid keys" + (f.prefix.empty() ? std::string() : " of '" + f.prefix.substr(0, f.prefix.size() - 1) + "'") +
             ": " + list + ")";
    } else {
      msg += " (this section has no keys)";
    }
    throw ConfigError(msg);
  }
}

void Reader::leave() {
  check_unknown(stack_.back());
  stack_.pop_back();
}

void Reader::finish() { check_unknown(stack_.front()); }

}  // namespace agentrl::config::detail
