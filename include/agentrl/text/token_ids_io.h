// Token ids as JSON lines: what `agentrl tokenizer encode|decode` reads and
// writes, kept here so that it is testable without the CLI.
//
// Thread-safety: pure functions (the streams belong to the caller).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text {

// "[1,2,3]".
std::string ids_to_json(const std::vector<TokenId>& ids);

// Parses a JSON array of integer ids. Throws FormatError naming `where`
// (e.g. "<stdin> line 3") for anything else, including ids outside
// [0, vocab_size) when vocab_size > 0.
std::vector<TokenId> ids_from_json(std::string_view text, const std::string& where, int32_t vocab_size = 0);

struct EncodeOptions {
  bool add_special_tokens = false;
  bool parse_special = true;
};

// One JSON array per input line (the trailing '\n' of each line is not
// encoded). Returns the number of lines.
size_t encode_lines(const Tokenizer& tok, std::istream& in, std::ostream& out, const EncodeOptions& options = {});

// One decoded text per input JSON array, each followed by '\n'. Blank lines
// are skipped. Returns the number of arrays decoded.
size_t decode_lines(const Tokenizer& tok, std::istream& in, std::ostream& out, bool skip_special_tokens = false,
                    const std::string& source_name = "<stdin>");

}  // namespace agentrl::text
