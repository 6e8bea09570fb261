// Internal to src/core: the merged configuration tree.
//
// Composing `defaults:` chains and command-line overrides merges several YAML
// documents; an error found later (unknown key, bad value) must still name the
// file and line where the offending key was written. yaml-cpp nodes only know
// their position inside their own document, so the merge builds this tree of
// our own, in which every node keeps its origin (file + line, or the override
// text it came from). Leaves keep the yaml-cpp node (scalar, sequence, null).
//
// Thread-safety: plain values, single-threaded use.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace agentrl::config::detail {

// Where a piece of configuration was written.
struct Origin {
  std::string source;     // file path, or the override text "a.b=c"
  bool override = false;  // true: source is a command-line override
  int line = 0;           // 1-based; 0 = unknown

  // Message prefix without the trailing ": ", e.g. "exp.yaml:12" or
  // "override 'trainer.lr=abc'".
  std::string where() const;
  // Same source, another line (for elements of a sequence).
  Origin at_line(int l) const { return Origin{source, override, l}; }
};

struct TreeEntry;

struct Tree {
  bool is_map = false;
  // When !is_map: scalar, sequence or null. Held by pointer because
  // assigning one YAML::Node to another rewrites the shared node it refers
  // to (yaml-cpp reference semantics), which would corrupt merged trees.
  std::shared_ptr<const YAML::Node> leaf_node;
  Origin value_at;    // where the value starts
  Origin key_at;      // where the key naming this node was written
  bool used = false;  // consumed by the reading visitor
  std::vector<TreeEntry> kids;  // when is_map, in document order

  Tree* find(const std::string& key);
  const YAML::Node& leaf() const;
};

struct TreeEntry {
  std::string key;
  Tree value;
};

// 1-based line of a yaml-cpp node (0 when it has no position).
int line_of(const YAML::Node& node);

// Converts a parsed document into a Tree; map keys must be scalars and unique
// (throws ConfigError naming file:line otherwise).
Tree from_yaml(const YAML::Node& node, const Origin& origin);

// Deep merge: maps merge key by key, anything else replaces. A null leaf
// written over a map ("trainer:" with nothing below) keeps the map.
void merge_into(Tree& base, Tree overlay);

// Parses the file at `path` and resolves its `defaults:` chain. `display` is
// the name used in messages. `chain` holds the files being loaded (cycle
// detection).
Tree load_file_tree(const std::string& path, const std::string& display, std::vector<std::string>& chain);
// Same, for YAML text; relative defaults resolve from base_dir.
Tree load_text_tree(const std::string& text, const std::string& display, const std::string& base_dir,
                    std::vector<std::string>& chain);

// Parses "a.b.c=value" into a tree {a: {b: {c: value}}}; throws ConfigError.
Tree override_tree(const std::string& override_text);

// A short description of a value for "got ..." in messages.
std::string describe_node(const YAML::Node& node);

}  // namespace agentrl::config::detail
