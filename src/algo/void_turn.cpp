// SimpleTIR void-turn predicates (arXiv 2509.02479, sec. 3.3; see void_turn.h).
#include "agentrl/algo/void_turn.h"

namespace agentrl::algo {

bool has_complete_code_block(const std::string& text, const std::string& language) {
  const std::string open = "```" + language;
  size_t pos = 0;
  while ((pos = text.find(open, pos)) != std::string::npos) {
    // The opening fence's info string runs to the end of its line; with a
    // language given it must be exactly that language ("```python3" is not
    // "```python"), so the next char must end the info string.
    size_t after = pos + open.size();
    if (!language.empty() && after < text.size() && text[after] != '\n' && text[after] != ' ' && text[after] != '\r') {
      pos = after;
      continue;
    }
    size_t body = text.find('\n', after);
    if (body == std::string::npos) return false;
    if (text.find("```", body + 1) != std::string::npos) return true;
    return false;  // the fence is still open at the end of the text
  }
  return false;
}

bool has_final_answer(const std::string& text, const std::string& marker) {
  size_t pos = 0;
  while ((pos = text.find(marker, pos)) != std::string::npos) {
    // Balance braces after the marker's opening brace (\boxed{\frac{1}{2}}).
    int depth = marker.empty() || marker.back() != '{' ? 0 : 1;
    if (depth == 0) return true;
    for (size_t i = pos + marker.size(); i < text.size(); ++i) {
      if (text[i] == '{') ++depth;
      if (text[i] == '}' && --depth == 0) return true;
    }
    pos += marker.size();
  }
  return false;
}

bool is_void_turn(const std::string& response, const std::string& tool_output, const std::string& language) {
  return !has_complete_code_block(response, language) && !has_final_answer(response) && !has_final_answer(tool_output);
}

}  // namespace agentrl::algo
