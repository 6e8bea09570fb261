#include "agentrl/text/token_ids_io.h"

#include <istream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"

namespace agentrl::text {

std::string ids_to_json(const std::vector<TokenId>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

std::vector<TokenId> ids_from_json(std::string_view text, const std::string& where, int32_t vocab_size) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(where + ": not JSON (expected an array of token ids such as [9707,1879]): " + e.what());
  }
  if (!j.is_array()) throw FormatError(where + ": expected a JSON array of token ids, got " + j.dump());
  std::vector<TokenId> ids;
  ids.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    if (!v.is_number_integer()) throw FormatError(where + ": element " + std::to_string(i) + " is " + v.dump() + ", expected an integer id");
    int64_t id = v.get<int64_t>();
    if (id < 0 || (vocab_size > 0 && id >= vocab_size) || id > INT32_MAX) {
      throw FormatError(where + ": id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(vocab_size) + ")");
    }
    ids.push_back(static_cast<TokenId>(id));
  }
  return ids;
}

size_t encode_lines(const Tokenizer& tok, std::istream& in, std::ostream& out, const EncodeOptions& options) {
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    out << ids_to_json(tok.encode(line, options.add_special_tokens, options.parse_special)) << '\n';
    ++n;
  }
  return n;
}

size_t decode_lines(const Tokenizer& tok, std::istream& in, std::ostream& out, bool skip_special_tokens,
                    const std::string& source_name) {
  std::string line;
  size_t n = 0, lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (strings::is_blank(line)) continue;
    auto ids = ids_from_json(line, source_name + " line " + std::to_string(lineno), tok.vocab_size());
    out << tok.decode(ids, skip_special_tokens) << '\n';
    ++n;
  }
  return n;
}

}  // namespace agentrl::text
