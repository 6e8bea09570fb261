#include "bpe_model.h"

#include <queue>

#include "agentrl/core/error.h"
#include "byte_level.h"
#include "utf8_util.h"

namespace agentrl::text::detail {

BpeModel::BpeModel(BpeModelSpec spec, const std::string& where)
    : vocab_(std::move(spec.vocab)), byte_level_(spec.byte_level), ignore_merges_(spec.ignore_merges) {
  TokenId max_id = -1;
  for (const auto& [text, id] : vocab_) {
    if (id < 0) throw FormatError(where + ": model.vocab entry '" + text + "' has negative id " + std::to_string(id));
    max_id = std::max(max_id, id);
  }
  id_to_token_.resize(static_cast<size_t>(max_id + 1));
  has_token_.assign(static_cast<size_t>(max_id + 1), false);
  for (const auto& [text, id] : vocab_) {
    id_to_token_[id] = text;
    has_token_[id] = true;
  }
  merges_.reserve(spec.merges.size() * 2);
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [a, b] = spec.merges[rank];
    auto ia = vocab_.find(a), ib = vocab_.find(b), im = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || im == vocab_.end()) {
      throw FormatError(where + ": model.merges[" + std::to_string(rank) + "] = '" + a + " " + b +
                        "' uses a token missing from model.vocab");
    }
    // First occurrence wins (lowest rank), as in HF.
    merges_.emplace(pair_key(ia->second, ib->second), MergeResult{static_cast<int32_t>(rank), im->second});
  }
  if (byte_level_) {
    byte_ids_.assign(256, -1);
    const auto& alphabet = ByteLevelAlphabet::get();
    for (int b = 0; b < 256; ++b) {
      auto it = vocab_.find(alphabet.encode_byte(static_cast<unsigned char>(b)));
      if (it != vocab_.end()) byte_ids_[b] = it->second;
    }
  }
  if (spec.unk_token) {
    auto it = vocab_.find(*spec.unk_token);
    if (it == vocab_.end()) throw FormatError(where + ": model.unk_token '" + *spec.unk_token + "' is not in model.vocab");
    unk_id_ = it->second;
  }
}

const std::string* BpeModel::token_text(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size() || !has_token_[id]) return nullptr;
  return &id_to_token_[id];
}

std::optional<TokenId> BpeModel::token_id(std::string_view text) const {
  auto it = vocab_.find(std::string(text));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

// One symbol per byte (byte-level) or per character. A symbol missing from
// the vocabulary becomes unk, or is dropped when there is no unk token:
// that is what HF's BPE does (models/bpe/model.rs, merge_word).
void BpeModel::initial_symbols(std::string_view piece, std::vector<TokenId>& symbols) const {
  symbols.clear();
  if (byte_level_) {
    for (char c : piece) {
      TokenId id = byte_ids_[static_cast<unsigned char>(c)];
      if (id >= 0) {
        symbols.push_back(id);
      } else if (unk_id_) {
        symbols.push_back(*unk_id_);
      }
    }
    return;
  }
  size_t i = 0;
  while (i < piece.size()) {
    size_t n = utf8_sequence_length(piece, i);
    if (n == 0) n = 1;
    auto it = vocab_.find(std::string(piece.substr(i, n)));
    if (it != vocab_.end()) {
      symbols.push_back(it->second);
    } else if (unk_id_) {
      symbols.push_back(*unk_id_);
    }
    i += n;
  }
}

void BpeModel::merge(std::vector<TokenId>& symbols) const {
  const int n = static_cast<int>(symbols.size());
  if (n < 2) return;
  std::vector<int> prev(n), next(n);
  for (int i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  struct Candidate {
    int32_t rank;
    int pos;
    TokenId left, right, merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto consider = [&](int pos) {
    if (pos < 0 || next[pos] < 0) return;
    auto it = merges_.find(pair_key(symbols[pos], symbols[next[pos]]));
    if (it != merges_.end()) {
      heap.push({it->second.rank, pos, symbols[pos], symbols[next[pos]], it->second.merged});
    }
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  std::vector<bool> alive(n, true);
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    // Skip candidates made stale by an earlier merge.
    if (!alive[c.pos] || symbols[c.pos] != c.left) continue;
    int r = next[c.pos];
    if (r < 0 || symbols[r] != c.right) continue;
    symbols[c.pos] = c.merged;
    alive[r] = false;
    next[c.pos] = next[r];
    if (next[r] >= 0) prev[next[r]] = c.pos;
    consider(prev[c.pos]);
    consider(c.pos);
  }
  size_t w = 0;
  for (int i = 0; i >= 0; i = next[i]) symbols[w++] = symbols[i];
  symbols.resize(w);
}

void BpeModel::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  const bool cacheable = piece.size() <= kMaxCachedPiece;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(std::string(piece));
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<TokenId> symbols;
  bool whole = false;
  if (ignore_merges_) {
    auto it = vocab_.find(byte_level_ ? ByteLevelAlphabet::get().encode(piece) : std::string(piece));
    if (it != vocab_.end()) {
      symbols.push_back(it->second);
      whole = true;
    }
  }
  if (!whole) {
    initial_symbols(piece, symbols);
    merge(symbols);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(piece), std::move(symbols));
  }
}

}  // namespace agentrl::text::detail
