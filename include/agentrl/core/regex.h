// A compiled regular expression (PCRE2, Perl syntax) for text protocols that
// are defined by a regex in the original code: the end of a SimpleTIR turn
// (its first complete code block), the code it extracts. Matching is on
// bytes, not code points: `.` and character classes match one byte, so a
// pattern of ASCII literals around `.*?` behaves on UTF-8 text as Python's re
// does on str, and text that is not valid UTF-8 (a character a model split
// across tokens) is matched as well. Inline flags such as (?s) work.
//
// Thread-safety: a Regex is immutable after construction; search() may be
// called from many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentrl {

class Regex {
 public:
  struct Match {
    size_t begin = 0, end = 0;  // byte offsets of the whole match
    // Capture groups 1..n: [begin, end) byte offsets; npos/npos when the
    // group took no part in the match.
    std::vector<std::pair<size_t, size_t>> groups;
    std::string_view group(std::string_view subject, size_t i) const;  // "" when unset
  };

  // Throws ConfigError naming `where`, the pattern and the error offset when
  // the pattern does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The leftmost match at or after byte `from` (Python's re.search), or
  // nullopt. Throws Error when PCRE2 gives up (match or heap limit).
  std::optional<Match> search(std::string_view subject, size_t from = 0) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Code;
  std::string pattern_;
  std::unique_ptr<Code> code_;
};

}  // namespace agentrl
