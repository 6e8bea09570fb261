// Token sampling from one row of logits: greedy, temperature, top-k, top-p
// (nucleus, Holtzman et al. 2020), driven by the request's own agentrl::Rng so
// the same request with the same seed draws the same tokens whatever else is
// in the batch.
//
// Order of operations (as HF's logits processors): temperature, then top-k,
// then top-p on the tempered distribution; the token is drawn by inverse CDF
// with exactly one uniform draw per token, over the candidates sorted by
// descending logit (ties: lower id first) when top-k/top-p truncate, else
// over all ids in id order. temperature 0 = greedy (argmax, lowest
// id on ties; no random draw).
//
// Returned statistics are those of the RAW distribution p = softmax(logits)
// (temperature 1, no truncation), i.e. of the policy the trainer scores:
//   logprob = log p(token), entropy = -sum_j p_j log p_j over the vocabulary.
// This is the behaviour log-prob PPO/GRPO importance ratios need when the
// trainer evaluates the policy at temperature 1.
//
// Thread-safety: pure functions; the Rng is the caller's.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "agentrl/core/rng.h"

namespace agentrl::model {

struct SamplerParams {
  double temperature = 1.0;  // 0 = greedy
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;        // 1 = off
};

struct SampledToken {
  int32_t token = 0;
  float logprob = 0.0f;  // log softmax(raw logits)[token]
  float entropy = 0.0f;  // entropy of softmax(raw logits)
};

// logits: `vocab` contiguous float32 values. Throws ConfigError for
// temperature < 0, top_p outside (0,1], top_k < 0.
SampledToken sample_token(const float* logits, int64_t vocab, const SamplerParams& params, Rng& rng);

// Row-wise over logits [S,V] (any float dtype; converted to float32 on CPU);
// rows are independent (parallel over rows), rngs[i] drives row i; each row
// gets exactly sample_token's result. Both take their exponentials in double
// precision four at a time (a Cody-Waite + polynomial exp within a few ulp of
// std::exp).
std::vector<SampledToken> sample_rows(const torch::Tensor& logits, const std::vector<SamplerParams>& params,
                                      std::vector<Rng*>& rngs);

// The same rules computed with tensor ops on the logits' device (the GPU
// path): the [S,V] logits never leave the device; one [3,S] tensor (token,
// logprob, entropy) comes back per call. Each row still takes exactly one
// uniform draw from rngs[i] on the host (none when greedy), so a request's
// stream is the same on either path; the token equals sample_rows' except
// when the draw falls within floating-point rounding of a CDF boundary
// (cumulative sums are summed in another order).
std::vector<SampledToken> sample_rows_on_device(const torch::Tensor& logits, const std::vector<SamplerParams>& params,
                                                std::vector<Rng*>& rngs);

}  // namespace agentrl::model
