// Typed YAML configuration.
//
// A config section is a plain struct with defaults in its member initialisers
// and one `visit` method that declares every field once: its YAML key, its
// C++ type, its allowed range or choices and a one-line doc. The same `visit`
// drives reading YAML (with validation), writing the resolved config back to
// YAML, and printing documentation (`agentrl config show --doc`):
//
//   struct OptimConfig {
//     double lr = 1e-6;
//     std::string schedule = "constant";
//     void visit(config::Visitor& v) {
//       v.field("lr", lr, "peak learning rate", config::Range::open_closed(0, 1));
//       v.field("schedule", schedule, "LR schedule", {"constant", "linear", "cosine"});
//     }
//   };
//
// Sections nest with `v.section("optim", optim, "optimizer")`. Sections that
// belong to plug-ins (one per environment, one per advantage estimator) are
// registered by name and scope with `register_section` and live in an
// ExtensionSections map of that scope, so adding an env or an estimator adds
// its config section without editing a shared struct.
//
// Loading (`load_config`): YAML files compose through a top-level
// `defaults: [base.yaml, ...]` list (later files override earlier ones, the
// including file overrides its defaults; relative paths resolve from the
// including file), then `a.b.c=value` overrides from the command line are
// applied with the same typed validation. Errors throw ConfigError naming the
// file, line, full key path, the value and what was expected; unknown keys get
// the closest valid key as a suggestion.
//
// Thread-safety: visitors are single-threaded; register_section is safe during
// static initialisation; a loaded config struct is a plain value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/core/error.h"

namespace agentrl::config {

// Allowed numeric interval. Default: unbounded.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;

  static Range closed(double lo, double hi) { return {lo, hi, false, false}; }
  static Range open_closed(double lo, double hi) { return {lo, hi, true, false}; }
  static Range at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, false}; }
  static Range positive() { return {0, std::numeric_limits<double>::infinity(), true, false}; }
  bool contains(double x) const;
  std::string describe() const;  // e.g. "a number in (0, 1]"
  bool bounded() const;
};

using Choices = std::vector<std::string>;

class Visitor {
 public:
  virtual ~Visitor() = default;

  virtual void field(const char* key, bool& value, const char* doc) = 0;
  virtual void field(const char* key, int64_t& value, const char* doc, Range range = {}) = 0;
  virtual void field(const char* key, double& value, const char* doc, Range range = {}) = 0;
  // choices empty = any string.
  virtual void field(const char* key, std::string& value, const char* doc, Choices choices = {}) = 0;
  // Each element must be one of choices (when given).
  virtual void field(const char* key, std::vector<std::string>& value, const char* doc,
                     Choices choices = {}) = 0;
  virtual void field(const char* key, std::vector<double>& value, const char* doc) = 0;
  virtual void field(const char* key, std::vector<int64_t>& value, const char* doc) = 0;
  // Free-form string map (e.g. named prompt templates).
  virtual void field(const char* key, std::map<std::string, std::string>& value, const char* doc) = 0;

  // int fields: the range is intersected with int's, so a value that does not
  // fit is a range error instead of a silent truncation.
  void field(const char* key, int& value, const char* doc, Range range = {}) {
    range.lo = std::max(range.lo, static_cast<double>(std::numeric_limits<int>::min()));
    range.hi = std::min(range.hi, static_cast<double>(std::numeric_limits<int>::max()));
    int64_t v = value;
    field(key, v, doc, range);
    value = static_cast<int>(v);
  }

  template <class T>
  void section(const char* key, T& s, const char* doc) {
    if (enter(key, doc)) {
      s.visit(*this);
      leave();
    }
  }

  // Low-level section protocol; `section` is the normal way to call these.
  // enter returns false when the visitor wants to skip the section.
  virtual bool enter(const char* key, const char* doc) = 0;
  virtual void leave() = 0;
};

// Type-erased config section, used for plug-in sections.
class Section {
 public:
  virtual ~Section() = default;
  virtual void visit(Visitor& v) = 0;
  virtual std::unique_ptr<Section> clone() const = 0;
};

template <class T>
class TypedSection final : public Section {
 public:
  T value;
  void visit(Visitor& v) override { value.visit(v); }
  std::unique_ptr<Section> clone() const override { return std::make_unique<TypedSection<T>>(*this); }
};

struct SectionInfo {
  std::string name;  // YAML key within its scope, e.g. "alfworld", "empg"
  std::string doc;
  std::function<std::unique_ptr<Section>()> make_default;
  // Where the section lives: "" = top level (envs), "algorithm" = under
  // algorithm: (estimators). Each ExtensionSections holds one scope.
  std::string scope;
};

// Registers a plug-in section; call from a static initialiser. Duplicate
// names within a scope throw.
void register_section(SectionInfo info);
// The sections registered in `scope`, sorted by name.
std::vector<SectionInfo> registered_sections(const std::string& scope = "");

template <class T>
struct SectionRegistrar {
  SectionRegistrar(const char* name, const char* doc, const char* scope = "") {
    register_section({name, doc, [] { return std::make_unique<TypedSection<T>>(); }, scope});
  }
};

// Holds one instance of every plug-in section registered in one scope
// (defaults until loaded). Copyable. Construct it after static
// initialisation (sections registered later are not in it).
class ExtensionSections {
 public:
  explicit ExtensionSections(std::string scope = "");
  ExtensionSections(const ExtensionSections& other);
  ExtensionSections& operator=(const ExtensionSections& other);

  void visit(Visitor& v);

  bool has(const std::string& name) const { return sections_.count(name) > 0; }
  Section& get(const std::string& name);
  const Section& get(const std::string& name) const;

  template <class T>
  const T& as(const std::string& name) const {
    auto* typed = dynamic_cast<const TypedSection<T>*>(&get(name));
    if (typed == nullptr) throw ConfigError("config section '" + name + "' has an unexpected type");
    return typed->value;
  }
  template <class T>
  T& as(const std::string& name) {
    auto* typed = dynamic_cast<TypedSection<T>*>(&get(name));
    if (typed == nullptr) throw ConfigError("config section '" + name + "' has an unexpected type");
    return typed->value;
  }

 private:
  std::string scope_;
  std::map<std::string, std::unique_ptr<Section>> sections_;
  std::map<std::string, std::string> docs_;
};

using VisitFn = std::function<void(Visitor&)>;

// Reads `path` (with its defaults chain) and then `overrides` ("a.b=c") into
// the struct visited by `root`. Throws ConfigError.
void load_config(const VisitFn& root, const std::string& path, const std::vector<std::string>& overrides = {});
// Reads YAML text (file name used in messages only; relative defaults resolve from base_dir).
void load_config_string(const VisitFn& root, const std::string& yaml_text, const std::string& file_name,
                        const std::vector<std::string>& overrides = {}, const std::string& base_dir = ".");
// Applies overrides only.
void apply_overrides(const VisitFn& root, const std::vector<std::string>& overrides);
// Serialises the resolved config as YAML that load_config reads back to the same values.
std::string to_yaml(const VisitFn& root);
// Human-readable documentation: one line per field: key, type, default, range/choices, doc.
std::string describe(const VisitFn& root);

template <class T>
void load(T& root, const std::string& path, const std::vector<std::string>& overrides = {}) {
  load_config([&](Visitor& v) { root.visit(v); }, path, overrides);
}
template <class T>
std::string to_yaml(T& root) {
  return to_yaml(VisitFn([&](Visitor& v) { root.visit(v); }));
}

// Closest candidate by edit distance, or "" if none is close.
std::string closest_match(const std::string& key, const std::vector<std::string>& candidates);

}  // namespace agentrl::config
