#include "agentrl/rollout/choice_constraint.h"

#include <algorithm>

namespace agentrl::rollout {

ChoiceConstraint::ChoiceConstraint(const text::Tokenizer& tokenizer) {
  const int32_t n = tokenizer.vocab_size();
  bytes_.reserve(static_cast<size_t>(n));
  for (int32_t id = 0; id < n; ++id) bytes_.push_back(tokenizer.token_bytes(id));
}

std::vector<uint8_t> ChoiceConstraint::allowed(const std::vector<std::string>& candidates, std::string_view generated,
                                               const std::vector<int32_t>& end_tokens) const {
  std::vector<uint8_t> out(bytes_.size(), 0);
  // What is left of each candidate that `generated` is a prefix of, sorted:
  // the remainders that start with a token's bytes are then contiguous, and
  // the first remainder >= those bytes is one of them if any is.
  std::vector<std::string_view> rest;
  bool complete = false;
  for (const auto& c : candidates) {
    if (c.size() < generated.size() || c.compare(0, generated.size(), generated) != 0) continue;
    if (c.size() == generated.size()) complete = true;
    else rest.emplace_back(std::string_view(c).substr(generated.size()));
  }
  std::sort(rest.begin(), rest.end());
  if (!rest.empty()) {
    for (size_t t = 0; t < bytes_.size(); ++t) {
      const std::string_view b = bytes_[t];
      if (b.empty()) continue;
      auto it = std::lower_bound(rest.begin(), rest.end(), b);
      if (it != rest.end() && it->substr(0, b.size()) == b) out[t] = 1;
    }
  }
  if (complete)
    for (int32_t id : end_tokens)
      if (id >= 0 && static_cast<size_t>(id) < out.size()) out[static_cast<size_t>(id)] = 1;
  return out;
}

}  // namespace agentrl::rollout
