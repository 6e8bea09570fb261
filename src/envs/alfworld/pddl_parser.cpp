#include "pddl_parser.h"

#include <cctype>

#include "agentrl/core/error.h"

namespace agentrl::envs::alfworld {

SExpr parse_sexpr(const std::string& text, const std::string& file) {
  std::vector<SExpr> stack;
  int line = 1;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == ';') {
      while (i < n && text[i] != '\n') ++i;
    } else if (c == '(') {
      SExpr e;
      e.line = line;
      stack.push_back(std::move(e));
      ++i;
    } else if (c == ')') {
      if (stack.empty()) throw FormatError(file + ": line " + std::to_string(line) + ": unbalanced ')'");
      SExpr done = std::move(stack.back());
      stack.pop_back();
      if (stack.empty()) return done;
      stack.back().items.push_back(std::move(done));
      ++i;
    } else {
      size_t b = i;
      while (i < n && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != '(' && text[i] != ')' &&
             text[i] != ';')
        ++i;
      if (stack.empty())
        throw FormatError(file + ": line " + std::to_string(line) + ": expected '(' but found '" +
                          text.substr(b, i - b) + "'");
      SExpr a;
      a.atom = text.substr(b, i - b);
      a.line = line;
      stack.back().items.push_back(std::move(a));
    }
  }
  if (!stack.empty())
    throw FormatError(file + ": line " + std::to_string(line) + ": unexpected end of PDDL (" +
                      std::to_string(stack.size()) + " unclosed '(', opened at line " +
                      std::to_string(stack.back().line) + "); the file looks truncated");
  throw FormatError(file + ": empty PDDL problem");
}

}  // namespace agentrl::envs::alfworld
