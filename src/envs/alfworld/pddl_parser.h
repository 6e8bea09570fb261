// Minimal s-expression reader for PDDL problems (private to alfworld/).
// Comments start with ';' and run to the end of the line; every node keeps
// the 1-based line it starts on, for error messages.
#pragma once

#include <string>
#include <vector>

namespace agentrl::envs::alfworld {

struct SExpr {
  std::string atom;  // empty for a list
  std::vector<SExpr> items;
  int line = 0;
  bool is_list() const { return atom.empty(); }
};

// Parses the first top-level expression of `text`. Throws FormatError
// "<file>: line N: ..." on unbalanced parentheses or an empty input.
SExpr parse_sexpr(const std::string& text, const std::string& file);

}  // namespace agentrl::envs::alfworld
