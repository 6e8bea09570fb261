#define PCRE2_CODE_UNIT_WIDTH 8
#include "agentrl/core/regex.h"

#include <pcre2.h>

#include "agentrl/core/error.h"

namespace agentrl {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, const std::string& where) : pattern_(pattern), code_(new Code) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              0, &err, &offset, nullptr);
  if (!code_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw ConfigError(where + ": regex '" + pattern + "' does not compile at offset " + std::to_string(offset) +
                      ": " + reinterpret_cast<char*>(msg));
  }
}

Regex::~Regex() = default;

std::string_view Regex::Match::group(std::string_view subject, size_t i) const {
  if (i == 0) return subject.substr(begin, end - begin);
  const auto& g = groups.at(i - 1);
  if (g.first == std::string_view::npos) return {};
  return subject.substr(g.first, g.second - g.first);
}

std::optional<Regex::Match> Regex::search(std::string_view subject, size_t from) const {
  if (from > subject.size()) return std::nullopt;
  // Match data per call: search() stays safe to call from many threads.
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  if (!md) throw Error("regex '" + pattern_ + "': out of memory");
  const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), from, 0,
                             md.get(), nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return std::nullopt;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw Error("regex '" + pattern_ + "' failed on a " + std::to_string(subject.size()) +
                "-byte text: " + reinterpret_cast<char*>(msg));
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
  const uint32_t pairs = pcre2_get_ovector_count(md.get());
  Match m;
  m.begin = ov[0];
  m.end = ov[1];
  for (uint32_t i = 1; i < pairs; ++i) {
    const bool set = static_cast<int>(i) < rc && ov[2 * i] != PCRE2_UNSET;
    m.groups.emplace_back(set ? ov[2 * i] : std::string_view::npos, set ? ov[2 * i + 1] : std::string_view::npos);
  }
  return m;
}

}  // namespace agentrl
