// The generation interface the agent loop talks to.
//
// GenerationEngine (rollout/generation_engine.h) is the real implementation:
// batched KV-cache decoding on the policy. Tests and evaluations may plug a
// scripted Generator (e.g. an expert policy) instead. Torch-free types.
//
// Thread-safety: submit() is safe to call from many threads at once; each
// returned future is completed exactly once.
#pragma once

#include <cstdint>
#include <future>
#include <string>
#include <vector>

namespace agentrl::rollout {

struct SamplingParams {
  double temperature = 1.0;  // 0 = greedy
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;        // 1 = off
  uint64_t seed = 0;         // per-request seed: same request + seed -> same tokens
};

struct GenerationRequest {
  std::vector<int32_t> prompt;  // full context token ids
  SamplingParams sampling;
  int64_t max_new_tokens = 256;
  std::vector<int32_t> stop_token_ids;  // in addition to the model's EOS
  std::vector<std::string> stop_strings;
  // PCRE2 pattern (core/regex.h) searched over the generated text after each
  // token: generation ends at its first match, as at a stop string (text ends
  // at the match's end, or its start without include_stop_string). For turn
  // ends a fixed string cannot express (SimpleTIR: the first complete code
  // block). Empty = none.
  std::string stop_regex;
  bool include_stop_string = true;  // keep the stop string at the end of the text
  // Constrained decoding (rollout/choice_constraint.h): when non-empty, each
  // token is sampled among those that keep the generated text a prefix of
  // one of these texts (the others' logits are masked), and once the text
  // equals one the EOS / stop tokens are allowed too. The result's logprobs
  // and entropies are then those of the masked distribution, not the
  // policy's, and its allowed_tokens say which tokens each step kept, so
  // that the trainer can score the same masked distribution (PPO's ratios).
  // A step at which no token fits (a text no tokenisation reaches) samples
  // freely.
  std::vector<std::string> allowed_texts;
  // Requests with the same non-empty cache_key share KV cache: the G samples
  // of a group (same prompt) prefill once; a later turn of an episode whose
  // prompt extends the previous request's context reuses it.
  std::string cache_key;
  // Priority/ordering key for deterministic mode (lower runs first).
  int64_t order = 0;
};

enum class FinishReason { kEos, kStopToken, kStopString, kLength, kContextLimit, kAborted };
const char* finish_reason_name(FinishReason r);

struct GenerationResult {
  std::vector<int32_t> tokens;     // generated ids (after any stop-string trimming)
  std::vector<float> logprobs;     // behaviour log-prob of each generated token
  std::vector<float> entropies;    // full-vocabulary entropy at each generated position
  // Requests with allowed_texts: one entry per generated token, the token ids
  // its step sampled among (ascending; empty where the step was free).
  // Empty for other requests.
  std::vector<std::vector<int32_t>> allowed_tokens;
  std::string text;                // decoded generated text (ends at the stop string)
  FinishReason finish_reason = FinishReason::kLength;
  double queue_seconds = 0.0;
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
  int64_t cached_prompt_tokens = 0;  // prompt tokens served from a shared / reused cache
};

class Generator {
 public:
  virtual ~Generator() = default;
  virtual std::future<GenerationResult> submit(GenerationRequest request) = 0;
  // Generates a whole set of requests and returns results in the same order.
  // Implementations with a deterministic mode (GenerationEngine) batch exactly
  // this set, in vector order, so the outcome depends only on the requests.
  // Default: submit all, then wait for all.
  virtual std::vector<GenerationResult> generate_batch(std::vector<GenerationRequest> requests) {
    std::vector<std::future<GenerationResult>> futures;
    futures.reserve(requests.size());
    for (auto& r : requests) futures.push_back(submit(std::move(r)));
    std::vector<GenerationResult> out;
    out.reserve(futures.size());
    for (auto& f : futures) out.push_back(f.get());
    return out;
  }
  // Releases cached state for a cache_key (episode finished). Optional.
  virtual void release(const std::string& cache_key) { (void)cache_key; }
  // How many sequences can keep their cached state at once (0 = no limit).
  // A lock-step rollout keeps at most this many episodes in flight: with
  // more, each turn would evict the others' caches and re-prefill every
  // episode's whole history.
  virtual int64_t max_sequences() const { return 0; }
};

}  // namespace agentrl::rollout
