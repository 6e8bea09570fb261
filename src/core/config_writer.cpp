// Writing a config back to YAML (to_yaml) and documenting it (describe).
// Both walk the struct through visit(); to_yaml's output is read back by
// load_config to identical values (doubles use round-trip precision).
#include <algorithm>
#include <sstream>

#include "agentrl/core/config.h"
#include "config_format.h"

namespace agentrl::config {
namespace {
using detail::format_double;
using detail::yaml_quote;

std::string one_line(const char* doc) {
  std::string s = doc == nullptr ? "" : doc;
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

template <class T, class F>
std::string flow_list(const std::vector<T>& xs, F fmt) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + fmt(xs[i]);
  return out + "]";
}

std::string int_text(int64_t x) { return std::to_string(x); }

class Writer final : public Visitor {
 public:
  Writer() { frames_.push_back(""); }

  void field(const char* key, bool& value, const char* doc) override { put(key, value ? "true" : "false", doc); }
  void field(const char* key, int64_t& value, const char* doc, Range) override { put(key, int_text(value), doc); }
  void field(const char* key, double& value, const char* doc, Range) override { put(key, format_double(value), doc); }
  void field(const char* key, std::string& value, const char* doc, Choices) override { put(key, yaml_quote(value), doc); }
  void field(const char* key, std::vector<std::string>& value, const char* doc, Choices) override {
    put(key, flow_list(value, yaml_quote), doc);
  }
  void field(const char* key, std::vector<double>& value, const char* doc) override {
    put(key, flow_list(value, format_double), doc);
  }
  void field(const char* key, std::vector<int64_t>& value, const char* doc) override {
    put(key, flow_list(value, int_text), doc);
  }
  void field(const char* key, std::map<std::string, std::string>& value, const char* doc) override {
    if (value.empty()) return put(key, "{}", doc);
    std::string& out = frames_.back();
    out += indent() + key + ":" + comment(doc) + "\n";
    for (const auto& [k, v] : value) out += indent() + "  " + yaml_quote(k) + ": " + yaml_quote(v) + "\n";
  }
  using Visitor::field;

  bool enter(const char* key, const char* doc) override {
    keys_.push_back(key);
    docs_.push_back(one_line(doc));
    frames_.push_back("");
    return true;
  }
  void leave() override {
    std::string body = std::move(frames_.back());
    frames_.pop_back();
    const std::string key = keys_.back();
    const std::string doc = docs_.back();
    keys_.pop_back();
    docs_.pop_back();
    std::string& out = frames_.back();
    if (!doc.empty()) out += indent() + "# " + doc + "\n";
    out += indent() + key + ":" + (body.empty() ? " {}" : "") + "\n" + body;
  }

  std::string result() const { return frames_.front(); }

 private:
  std::string indent() const { return std::string(2 * keys_.size(), ' '); }
  static std::string comment(const char* doc) {
    const std::string d = one_line(doc);
    return d.empty() ? "" : "  # " + d;
  }
  void put(const char* key, const std::string& text, const char* doc) {
    frames_.back() += indent() + key + ": " + text + comment(doc) + "\n";
  }

  std::vector<std::string> frames_;  // output of each open section
  std::vector<std::string> keys_;
  std::vector<std::string> docs_;
};

struct DocRow {
  std::string key, type, value, constraint, doc;
};

class Describer final : public Visitor {
 public:
  void field(const char* key, bool& value, const char* doc) override { add(key, "bool", value ? "true" : "false", "", doc); }
  void field(const char* key, int64_t& value, const char* doc, Range range) override {
    add(key, "int", int_text(value), range.bounded() ? "range " + range_text(range, true) : "", doc);
  }
  void field(const char* key, double& value, const char* doc, Range range) override {
    add(key, "double", format_double(value), range.bounded() ? "range " + range_text(range, false) : "", doc);
  }
  void field(const char* key, std::string& value, const char* doc, Choices choices) override {
    add(key, "string", yaml_quote(value), choices_text(choices), doc);
  }
  void field(const char* key, std::vector<std::string>& value, const char* doc, Choices choices) override {
    add(key, "list<string>", flow_list(value, yaml_quote), choices_text(choices), doc);
  }
  void field(const char* key, std::vector<double>& value, const char* doc) override {
    add(key, "list<double>", flow_list(value, format_double), "", doc);
  }
  void field(const char* key, std::vector<int64_t>& value, const char* doc) override {
    add(key, "list<int>", flow_list(value, int_text), "", doc);
  }
  void field(const char* key, std::map<std::string, std::string>& value, const char* doc) override {
    std::string text = "{";
    for (const auto& [k, v] : value) text += (text.size() > 1 ? ", " : "") + yaml_quote(k) + ": " + yaml_quote(v);
    add(key, "map<string,string>", text + "}", "", doc);
  }
  using Visitor::field;
  bool enter(const char* key, const char* doc) override {
    rows_.push_back({prefix() + key, "section", "", "", one_line(doc)});
    path_.push_back(key);
    return true;
  }
  void leave() override { path_.pop_back(); }

  std::string result() const {
    size_t wk = 0, wt = 0, wv = 0, wc = 0;
    for (const auto& r : rows_) {
      wk = std::max(wk, r.key.size());
      wt = std::max(wt, r.type.size());
      wv = std::max(wv, r.value.size());
      wc = std::max(wc, r.constraint.size());
    }
    wv = std::min<size_t>(wv, 30);
    std::ostringstream out;
    for (const auto& r : rows_) {
      std::string line = pad(r.key, wk) + "  " + pad(r.type, wt) + "  ";
      if (r.type != "section") {
        line += pad("default " + r.value, wv + 8) + "  " + pad(r.constraint, wc) + "  ";
      } else {
        line += std::string(wv + 8 + 2 + wc + 2, ' ');
      }
      line += r.doc;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
    return out.str();
  }

 private:
  static std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }
  static std::string range_text(const Range& r, bool integer) {
    // "a number in (0, 1]" -> "(0, 1]"; "a number >= 1" -> ">= 1".
    std::string d = detail::describe_range(r, integer);
    const std::string lead = integer ? "an integer " : "a number ";
    if (d.rfind(lead, 0) == 0) d = d.substr(lead.size());
    if (d.rfind("in ", 0) == 0) d = d.substr(3);
    return d;
  }
  static std::string choices_text(const Choices& c) {
    if (c.empty()) return "";
    std::string s = "one of ";
    for (size_t i = 0; i < c.size(); ++i) s += (i ? "|" : "") + c[i];
    return s;
  }
  std::string prefix() const {
    std::string p;
    for (const auto& k : path_) p += k + ".";
    return p;
  }
  void add(const char* key, std::string type, std::string value, std::string constraint, const char* doc) {
    rows_.push_back({prefix() + key, std::move(type), std::move(value), std::move(constraint), one_line(doc)});
  }

  std::vector<std::string> path_;
  std::vector<DocRow> rows_;
};

}  // namespace

std::string to_yaml(const VisitFn& root) {
  Writer w;
  root(w);
  return w.result();
}

std::string describe(const VisitFn& root) {
  Describer d;
  root(d);
  return d.result();
}

}  // namespace agentrl::config
