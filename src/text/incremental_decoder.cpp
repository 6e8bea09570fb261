// IncrementalDecoder (declared in tokenizer.h): streams token bytes out as
// soon as they form complete UTF-8 characters.
#include <utility>

#include "agentrl/text/tokenizer.h"
#include "utf8_util.h"

namespace agentrl::text {

IncrementalDecoder::IncrementalDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens)
    : tok_(std::move(tokenizer)), skip_special_(skip_special_tokens) {}

std::string IncrementalDecoder::push(TokenId id) {
  if (skip_special_ && tok_->is_special(id)) return "";
  pending_ += tok_->token_bytes(id);
  // Emit everything up to the last complete character; ill-formed bytes are
  // emitted at once as U+FFFD (they can never become valid later).
  size_t cut = detail::complete_utf8_prefix(pending_);
  std::string out = detail::to_valid_utf8(std::string_view(pending_).substr(0, cut));
  pending_.erase(0, cut);
  return out;
}

std::string IncrementalDecoder::flush() {
  std::string out = detail::to_valid_utf8(pending_);  // an unfinished sequence becomes one U+FFFD
  pending_.clear();
  return out;
}

}  // namespace agentrl::text
