#include <utility>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text {
namespace {
// Length of the longest prefix of `s` that ends on a complete UTF-8 sequence
// boundary; a trailing incomplete (but so far valid) sequence is held back.
size_t complete_prefix(const std::string& s) {
  size_t n = s.size();
  // Look back at most 3 bytes for a lead byte of an unfinished sequence.
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    unsigned char c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking
    size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return back < need ? n - back : n;
  }
  return n;
}
}  // namespace

IncrementalDecoder::IncrementalDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens)
    : tok_(std::move(tokenizer)), skip_special_(skip_special_tokens) {}

std::string IncrementalDecoder::push(TokenId id) {
  if (skip_special_ && tok_->is_special(id)) return "";
  pending_ += tok_->token_bytes(id);
  size_t cut = complete_prefix(pending_);
  std::string out = pending_.substr(0, cut);
  pending_.erase(0, cut);
  return out;
}

std::string IncrementalDecoder::flush() {
  std::string out;
  if (!pending_.empty()) out = "\xEF\xBF\xBD";  // U+FFFD for an unfinished sequence
  pending_.clear();
  return out;
}

}  // namespace agentrl::text
