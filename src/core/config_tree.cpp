// Merged configuration tree: YAML parsing, `defaults:` composition and
// command-line overrides (see config_tree.h for why the tree exists).
#include "config_tree.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "agentrl/core/error.h"

namespace agentrl::config::detail {
namespace fs = std::filesystem;

std::string Origin::where() const {
  if (override) return "override '" + source + "'";
  if (line > 0) return source + ":" + std::to_string(line);
  return source;
}

Tree* Tree::find(const std::string& key) {
  for (auto& e : kids)
    if (e.key == key) return &e.value;
  return nullptr;
}

const YAML::Node& Tree::leaf() const {
  static const YAML::Node kNull;
  return leaf_node ? *leaf_node : kNull;
}

int line_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "no value (null)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "an undefined value";
  }
}

Tree from_yaml(const YAML::Node& node, const Origin& origin) {
  Tree t;
  t.value_at = origin.at_line(origin.override ? 0 : line_of(node));
  t.key_at = origin;
  if (!node.IsMap()) {
    t.is_map = false;
    t.leaf_node = std::make_shared<const YAML::Node>(node);
    return t;
  }
  t.is_map = true;
  for (const auto& kv : node) {
    const YAML::Node k = kv.first;  // copies: the iterator's pair is a temporary
    const YAML::Node v = kv.second;
    Origin key_origin = origin.at_line(origin.override ? 0 : line_of(k));
    if (!k.IsScalar())
      throw ConfigError(key_origin.where() + ": map keys must be plain strings, got " + describe_node(k));
    const std::string key = k.Scalar();
    if (t.find(key) != nullptr) throw ConfigError(key_origin.where() + ": duplicate key '" + key + "'");
    Tree child = from_yaml(v, origin);
    child.key_at = key_origin;
    t.kids.push_back(TreeEntry{key, std::move(child)});
  }
  return t;
}

void merge_into(Tree& base, Tree overlay) {
  if (base.is_map && overlay.is_map) {
    for (auto& e : overlay.kids) {
      if (Tree* existing = base.find(e.key)) {
        merge_into(*existing, std::move(e.value));
      } else {
        base.kids.push_back(std::move(e));
      }
    }
    return;
  }
  if (base.is_map && !overlay.is_map && overlay.leaf().IsNull()) return;
  base = std::move(overlay);
}

namespace {

YAML::Node parse_yaml(const std::string& text, const std::string& display) {
  try {
    // LoadAll: a second "---" document would otherwise be ignored silently.
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1)
      throw ConfigError(display + ":" + std::to_string(line_of(docs[1])) + ": the file holds " + std::to_string(docs.size()) +
                        " YAML documents ('---'), expected one");
    return docs.empty() ? YAML::Node() : docs[0];
  } catch (const YAML::ParserException& e) {
    throw ConfigError(display + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": YAML syntax error: " + e.msg);
  }
}

// Resolves the `defaults:` list of one document (already parsed into `doc`),
// returning defaults merged in order with the document's own keys last.
Tree compose(const YAML::Node& doc, const std::string& display, const std::string& base_dir,
             std::vector<std::string>& chain) {
  Origin origin{display, false, 0};
  if (doc.IsNull()) {
    Tree empty;
    empty.is_map = true;
    return empty;
  }
  if (!doc.IsMap())
    throw ConfigError(origin.at_line(line_of(doc)).where() + ": expected a map of config sections at the top level, got " +
                      describe_node(doc));
  Tree own = from_yaml(doc, origin);
  Tree result;
  result.is_map = true;
  result.value_at = own.value_at;
  for (size_t i = 0; i < own.kids.size(); ++i) {
    if (own.kids[i].key != "defaults") continue;
    Tree defaults = std::move(own.kids[i].value);
    own.kids.erase(own.kids.begin() + static_cast<long>(i));
    // `defaults:` is a list of file names, a single file name, or empty.
    std::vector<std::pair<YAML::Node, Origin>> entries;
    if (defaults.is_map)
      throw ConfigError(defaults.value_at.where() + ": 'defaults' must be a list of file names, got a map");
    if (defaults.leaf().IsScalar()) entries.push_back({defaults.leaf(), defaults.value_at});
    if (defaults.leaf().IsSequence())
      for (const auto& item : defaults.leaf()) entries.push_back({item, origin.at_line(line_of(item))});
    for (auto& [item, at] : entries) {
      if (!item.IsScalar())
        throw ConfigError(at.where() + ": 'defaults' entries must be file names, got " + describe_node(item));
      fs::path p(item.Scalar());
      const fs::path resolved = p.is_absolute() ? p : (fs::path(base_dir) / p).lexically_normal();
      std::error_code ec;
      if (!fs::exists(resolved, ec))
        throw ConfigError(at.where() + ": defaults file '" + item.Scalar() + "' not found (looked for '" +
                          resolved.string() + "')");
      merge_into(result, load_file_tree(resolved.string(), resolved.string(), chain));
    }
    break;
  }
  merge_into(result, std::move(own));
  return result;
}

}  // namespace

Tree load_file_tree(const std::string& path, const std::string& display, std::vector<std::string>& chain) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::path(path), ec);
  const std::string id = ec ? path : canonical.string();
  for (const auto& c : chain) {
    if (c != id) continue;
    std::string cycle;
    for (const auto& x : chain) cycle += x + " -> ";
    throw ConfigError(display + ": defaults cycle: " + cycle + id);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot open config file '" + path + "': " + std::error_code(errno, std::generic_category()).message());
  std::stringstream ss;
  ss << in.rdbuf();
  chain.push_back(id);
  const fs::path dir = fs::path(path).parent_path();
  Tree t = compose(parse_yaml(ss.str(), display), display, dir.empty() ? "." : dir.string(), chain);
  chain.pop_back();
  return t;
}

Tree load_text_tree(const std::string& text, const std::string& display, const std::string& base_dir,
                    std::vector<std::string>& chain) {
  return compose(parse_yaml(text, display), display, base_dir, chain);
}

Tree override_tree(const std::string& text) {
  Origin origin{text, true, 0};
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(origin.where() + ": expected key=value (e.g. trainer.lr=1e-5)");
  const std::string path = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  auto parse = [&]() -> YAML::Node {
    if (value.empty()) return YAML::Node(std::string());  // "key=" sets an empty string
    try {
      return YAML::Load(value);
    } catch (const YAML::ParserException& e) {
      throw ConfigError(origin.where() + ": cannot parse value '" + value + "' as YAML: " + e.msg);
    }
  };
  const YAML::Node node = parse();
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts)
    if (p.empty()) throw ConfigError(origin.where() + ": empty component in key '" + path + "'");
  Tree t = from_yaml(node, origin);
  for (size_t i = parts.size(); i-- > 0;) {
    Tree parent;
    parent.is_map = true;
    parent.value_at = origin;
    parent.key_at = origin;
    t.key_at = origin;
    parent.kids.push_back(TreeEntry{parts[i], std::move(t)});
    t = std::move(parent);
  }
  return t;
}

}  // namespace agentrl::config::detail
