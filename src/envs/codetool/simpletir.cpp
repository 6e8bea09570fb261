#include "agentrl/envs/codetool/simpletir.h"

#include "agentrl/core/regex.h"
#include "agentrl/core/strings.h"

namespace agentrl::envs::codetool::simpletir {
namespace {

using strings::trim;

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// Byte offset of code point `n` (or s.size()).
size_t code_point_offset(const std::string& s, size_t n) {
  size_t i = 0;
  for (; i < s.size() && n > 0; --n) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

// Python's str.splitlines()[-1], for the line breaks an interpreter's stderr
// holds ("" for an empty text).
std::string last_line(const std::string& s) {
  std::string text = s;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  const size_t cut = text.find_last_of("\n\r\v\f\x1c\x1d\x1e");
  return cut == std::string::npos ? text : text.substr(cut + 1);
}

// The brace group after "boxed{" as the toolkit scans it: up to the brace
// that balances the first, or to the end of the text when none does.
std::string brace_group(const std::string& s) {
  int depth = 1;
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '{') ++depth;
    if (s[i] == '}' && --depth == 0) break;
    out += s[i];
  }
  return out;
}

// The last match of -?\d*\.?\d+ in the text with commas removed, or "".
std::string last_number(const std::string& text) {
  static const Regex number("-?[0-9]*\\.?[0-9]+", "simpletir last number");
  const std::string s = strings::replace_all(text, ",", "");
  std::string last;
  for (size_t pos = 0; auto m = number.search(s, pos);) {
    last = std::string(m->group(s, 0));
    pos = m->end > m->begin ? m->end : m->end + 1;
  }
  return last;
}

// Python's s.strip(chars) for one ASCII character.
std::string strip_char(std::string s, char c) {
  while (!s.empty() && s.back() == c) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == c) ++i;
  return s.substr(i);
}

// The toolkit's clean-up of an extracted answer (strip_string itself is
// AnswerChecker's normalisation).
std::string clean(std::string pred) {
  pred = strip_char(trim(pred), '.');
  std::string joined;  // re.sub(r"\n\s*", "", pred)
  for (size_t i = 0; i < pred.size(); ++i) {
    if (pred[i] != '\n') {
      joined += pred[i];
      continue;
    }
    while (i + 1 < pred.size() && std::string_view(strings::kWhitespace).find(pred[i + 1]) != std::string_view::npos) ++i;
  }
  pred = joined;
  if (!pred.empty() && pred.front() == ':') pred.erase(0, 1);
  if (!pred.empty() && pred.back() == '.') pred.pop_back();
  if (!pred.empty() && pred.back() == '/') pred.pop_back();
  return pred;
}

}  // namespace

std::optional<std::string> first_code_block(const std::string& response) {
  static const Regex block(kCodeBlockPattern, "simpletir code block");
  auto m = block.search(response);
  if (!m) return std::nullopt;
  return trim(m->group(response, 1));
}

bool has_answer(const std::string& text) { return contains(text, "\\boxed{"); }

std::string truncate(const std::string& text, size_t max_chars) {
  const size_t n = strings::utf8_code_points(text);
  if (n <= max_chars) return text;
  const size_t half = max_chars / 2;
  return text.substr(0, code_point_offset(text, half)) + "\n..._This content has been truncated to stay below " +
         std::to_string(max_chars) + " characters_...\n" + text.substr(code_point_offset(text, n - half));
}

std::string execution_output(const ExecResult& r) {
  // As agent_utils.py: stdout as it is (its final newline kept), then stderr,
  // when there is any, replaces it with its last line.
  std::string obs;
  if (!r.stdout_text.empty()) obs = "\nCode execution result: " + truncate(r.stdout_text) + "\n";
  if (!r.stderr_text.empty()) obs = "\nCode execution result: " + truncate(last_line(r.stderr_text)) + "\n";
  return obs;
}

std::string extract_answer(const std::string& episode_text) {
  std::string s = episode_text;
  for (const char* stop : {"</s>", "<|im_end|>", "<|endoftext|>", "[END]"}) {
    const size_t at = s.find(stop);
    if (at != std::string::npos) s = trim(s.substr(0, at));
  }
  s = strings::replace_all(s, "\xd0\xba\xd0\xb8", "");  // "ки", a step marker of some datasets
  std::string pred;
  if (contains(s, "final answer is $") && contains(s, "$. I hope")) {
    std::string tmp = s.substr(s.find("final answer is $") + 17);
    pred = trim(tmp.substr(0, tmp.find("$. I hope")));
  } else if (contains(s, "boxed")) {
    const std::string ans = s.substr(s.rfind("boxed") + 5);
    if (ans.empty()) return "";
    pred = ans[0] == '{' ? brace_group(ans) : trim(ans.substr(0, ans.find('$')));
  } else if (contains(s, "he answer is")) {
    pred = trim(s.substr(s.rfind("he answer is") + 12));
  } else if (contains(s, "final answer is")) {
    pred = trim(s.substr(s.rfind("final answer is") + 15));
  } else if (const char* shi = "\xe7\xad\x94\xe6\xa1\x88\xe6\x98\xaf"; contains(s, shi)) {  // "答案是"
    std::string tmp = s.substr(s.find(shi) + 9);
    tmp = trim(tmp.substr(0, tmp.find(shi)));  // split(...)[1]: up to the next one
    pred = trim(tmp.substr(0, tmp.find("\n\n")));
  } else {
    pred = last_number(s);
  }
  return clean(pred);
}

}  // namespace agentrl::envs::codetool::simpletir
