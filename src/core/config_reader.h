// Internal to src/core: the visitor that reads a merged config Tree into a
// struct (see config.h for the contract). With assign=false it only validates,
// which lets load_config check everything before touching the struct.
//
// Thread-safety: single-threaded.
#pragma once

#include <string>
#include <vector>

#include "agentrl/core/config.h"
#include "config_tree.h"

namespace agentrl::config::detail {

class Reader final : public Visitor {
 public:
  Reader(Tree* root, bool assign);

  void field(const char* key, bool& value, const char* doc) override;
  void field(const char* key, int64_t& value, const char* doc, Range range) override;
  void field(const char* key, double& value, const char* doc, Range range) override;
  void field(const char* key, std::string& value, const char* doc, Choices choices) override;
  void field(const char* key, std::vector<std::string>& value, const char* doc, Choices choices) override;
  void field(const char* key, std::vector<double>& value, const char* doc) override;
  void field(const char* key, std::vector<int64_t>& value, const char* doc) override;
  void field(const char* key, std::map<std::string, std::string>& value, const char* doc) override;
  using Visitor::field;
  bool enter(const char* key, const char* doc) override;
  void leave() override;

  // Throws for unknown keys at the top level (call after the root visit).
  void finish();

 private:
  struct Frame {
    Tree* node;                      // null when the section is absent
    std::string prefix;              // "trainer." ("" at the root)
    std::vector<std::string> known;  // keys the struct declared here
  };

  std::string path(const char* key) const;
  Tree* lookup(const char* key);
  std::string bad(const Origin& at, const std::string& key_path, const std::string& what) const;
  const YAML::Node* scalar_leaf(Tree* t, const std::string& key_path, const char* expected);
  const YAML::Node& sequence_leaf(Tree* t, const std::string& key_path);
  Origin element_at(const Tree* t, const YAML::Node& elem) const;
  int64_t to_int(const YAML::Node& n, const Origin& at, const std::string& kp, const Range& range);
  double to_double(const YAML::Node& n, const Origin& at, const std::string& kp, const Range& range);
  void check_range(const Origin& at, const std::string& kp, const std::string& text, double x, const Range& range,
                   bool integer);
  void check_choice(const Origin& at, const std::string& kp, const std::string& s, const Choices& choices);
  void check_unknown(const Frame& f) const;

  bool assign_;
  std::vector<Frame> stack_;
};

// Parses a YAML float (decimal, exponent, .inf, .nan); false if not a number.
bool parse_double(const std::string& s, double& out);

}  // namespace agentrl::config::detail
