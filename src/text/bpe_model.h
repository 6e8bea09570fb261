// BPE model of a tokenizer.json ("model": {"type": "BPE", ...}) (internal).
//
// Turns one pre-token into ids by applying merges in rank order, as HF
// tokenizers' models/bpe/word.rs does: repeatedly merge the adjacent pair of
// lowest rank (ties: leftmost), with a binary heap so that long pieces (a run
// of 10k spaces) cost O(n log n), not O(n^2). Results for short pieces are
// cached.
//
// Thread-safety: encode_piece may be called concurrently (the cache is
// guarded by a mutex); everything else is immutable after construction.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text::detail {

struct BpeModelSpec {
  std::unordered_map<std::string, TokenId> vocab;              // token text -> id
  std::vector<std::pair<std::string, std::string>> merges;     // in rank order
  bool byte_level = true;     // pieces are raw bytes mapped through the GPT-2 alphabet
  bool ignore_merges = false; // a piece found whole in the vocab is one token
  std::optional<std::string> unk_token;
};

class BpeModel {
 public:
  // `where` (the file name) prefixes error messages.
  BpeModel(BpeModelSpec spec, const std::string& where);

  // Appends the ids of one pre-token (raw UTF-8 bytes) to `out`.
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;

  // Token text (in vocabulary form, e.g. "Ġthe"), or nullptr for ids that are
  // not in the model vocabulary.
  const std::string* token_text(TokenId id) const;
  std::optional<TokenId> token_id(std::string_view text) const;
  TokenId max_id() const { return static_cast<TokenId>(id_to_token_.size()) - 1; }

 private:
  struct MergeResult {
    int32_t rank;
    TokenId merged;
  };
  static uint64_t pair_key(TokenId a, TokenId b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  void initial_symbols(std::string_view piece, std::vector<TokenId>& symbols) const;
  void merge(std::vector<TokenId>& symbols) const;

  std::unordered_map<std::string, TokenId> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> has_token_;
  std::unordered_map<uint64_t, MergeResult> merges_;
  std::vector<TokenId> byte_ids_;  // byte-level: id of each byte's symbol (-1 if absent)
  bool byte_level_;
  bool ignore_merges_;
  std::optional<TokenId> unk_id_;

  // Cache of pieces up to kMaxCachedPiece bytes; stops growing when full
  // (HF tokenizers' BPE cache behaves the same way).
  static constexpr size_t kMaxCachedPiece = 64;
  static constexpr size_t kCacheCapacity = 1 << 17;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<TokenId>> cache_;
};

}  // namespace agentrl::text::detail
