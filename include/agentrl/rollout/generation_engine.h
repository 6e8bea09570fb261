// GenerationEngine: batched KV-cache decoding of many concurrent requests on
// the live policy (the Generator the agent loops talk to).
//
// One engine-loop thread runs steps over all active sequences (continuous
// batching): every step feeds each decoding sequence its last token and each
// newly admitted sequence (part of) its prompt as one ragged batch
// (TransformerLM::forward_cached), samples one token for every sequence whose
// prompt is complete, and retires finished sequences at once. KV memory is a
// pre-allocated model::KvCache of kv_budget_tokens / max_seq_len slots of
// max_seq_len tokens; a request that finds no free slot waits in the queue
// (never an out-of-memory).
//
// Prefix sharing (cache_key): a request reuses the longest common prefix of
// its prompt with any cached sequence of the same non-empty cache_key —
// running ones (the G samples of a group: the first prefills, the others wait
// one step and fork its cache with a copy) and finished ones kept after they
// end (the next turn of an episode takes over the previous turn's slot and
// prefills only the new tokens). release(key) frees the kept ones; kept
// sequences are also evicted, least recently used first, when a slot is
// needed, and are never reused across a lock_weights() (stale weights).
//
// Results: tokens include the EOS / stop token that ended generation; `text`
// is the decoded text of the tokens without that final EOS / stop token.
// Stop strings are matched on the concatenated token bytes, across token
// boundaries (a stop regex likewise, over all generated text, searched after
// each token); generation ends at the token that completes one: `tokens` end
// with that token (which may carry bytes past the stop string) and `text`
// ends exactly at the end of the stop string (include_stop_string) or at its
// start (otherwise). logprobs/entropies are those of the raw distribution
// softmax(logits) (model/sampler.h), except for a request with allowed_texts
// (constrained decoding, rollout/choice_constraint.h): its rows' other tokens
// are masked before sampling, and its log-probs are the masked distribution's.
//
// Modes. Throughput mode (submit): requests join whenever they arrive, so the
// batch composition depends on thread timing; per-request seeds make sampling
// independent of the composition, but the floating-point logits of a row can
// differ in the last bits with the batch shape, so rare near-ties may flip.
// Deterministic mode (generate_batch; the rollout's `rollout.deterministic`
// chooses it): the engine drains, then runs exactly
// that vector of requests admitted in vector order, with a step schedule that
// depends only on the requests (and the kept caches, which themselves depend
// only on earlier calls): the same calls give bit-identical results (on
// the same number of intra-op threads: the fused CPU path splits a step of
// tens of rows by threads, model/transformer.h). Other
// submissions wait until the batch is done. Deterministic mode is slower when
// requests would otherwise overlap with environment time.
//
// Static decode shapes (engine.static_decode_shapes, off by default): a step
// in which every sequence decodes is padded to a power-of-two
// number of rows (at least 2) with pad rows that write into a reserved
// scratch slot (one KV slot fewer for sequences) and whose outputs are
// dropped, and the keys its rows attend over are padded behind the mask to a
// multiple of kDecodeKvMultiple tokens. Consecutive decode steps then run
// ops of equal shapes (what a CUDA graph replay needs) until the batch
// crosses a power of two or the longest sequence a multiple; steps with
// prefill chunks keep their ragged shapes. Tokens and log-probs equal the
// unpadded steps' up to float rounding. The capture of such steps as CUDA
// graphs is not built yet; until it is, the pad rows are only extra work.
//
// Weights: the engine decodes with the caller's module (no copy). Hold
// lock_weights() around optimizer.step() / weight loading: no decode step
// runs while it is held, so no step sees half-updated weights.
//
// Threads: submit and generate_batch free the calling thread's OpenMP team
// (agentrl/model/intra_op_team.h) before they hand work over, and the loop
// frees its own after 10 ms without work, so that one team at a time
// computes (with two, every parallel region wakes its workers through the
// kernel); a thread's next parallel region builds a new team.
//
// Thread-safety: submit, generate_batch, release, lock_weights and stats are
// safe to call from any thread. The destructor aborts queued and running
// requests (finish_reason kAborted) and joins the loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/model/transformer.h"
#include "agentrl/rollout/generator.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::rollout {

// Config section "engine".
struct EngineOptions {
  int64_t max_batch_size = 64;          // sequences decoded per step
  int64_t kv_budget_tokens = 65536;     // total KV tokens (slots = budget / max_seq_len)
  // > 0: the budget is this fraction of the device memory free when the
  // engine is built (after the policy, masters, optimizer state and
  // reference), instead of kv_budget_tokens.
  double kv_memory_fraction = 0.0;
  int64_t max_seq_len = 4096;           // prompt + generation per sequence (slot capacity)
  int64_t prefill_chunk_tokens = 2048;  // prompt tokens prefilled per step (chunked prefill)
  std::string device = "auto";          // auto = the model's device; else must match it
  bool keep_finished = true;            // keep finished sequences of a cache_key for reuse
  bool static_decode_shapes = false;    // pad decode steps to static shapes: see the header comment
  bool fused_kernels = true;            // float32 CPU: TransformerLM::forward_cached's fused kernels

  void visit(config::Visitor& v);
};

struct EngineStats {
  int64_t steps = 0;
  int64_t prefill_tokens = 0;  // prompt tokens computed
  int64_t cached_tokens = 0;   // prompt tokens reused from cache
  int64_t decode_tokens = 0;   // generated tokens
  int64_t queued = 0;
  int64_t active = 0;
  int64_t kept = 0;            // finished sequences kept for reuse
  // Wall seconds the loop thread spent in decode steps (forward + sampling),
  // since construction. busy_seconds over an interval / that interval's wall
  // time = the engine's busy fraction (idle = waiting for requests or envs).
  double busy_seconds = 0.0;
  int64_t pad_rows = 0;        // rows added to decode steps by static_decode_shapes
};

// Decode steps under static_decode_shapes attend over a multiple of this
// many keys (capped at max_seq_len).
constexpr int64_t kDecodeKvMultiple = 128;

// The rows a decode step of `rows` sequences is padded to under
// static_decode_shapes: the smallest power of two >= max(rows, 2).
int64_t static_decode_rows(int64_t rows);

class GenerationEngine : public Generator {
 public:
  // eos_ids: tokens that end generation with kEos (e.g. the tokenizer's EOS
  // and the chat template's end-of-turn); when empty, tokenizer->eos_id() is
  // used if present. Throws ConfigError for bad options.
  GenerationEngine(model::TransformerLM model, std::shared_ptr<const text::Tokenizer> tokenizer,
                   EngineOptions options, std::vector<int32_t> eos_ids = {});
  ~GenerationEngine() override;
  GenerationEngine(const GenerationEngine&) = delete;
  GenerationEngine& operator=(const GenerationEngine&) = delete;

  // Queues a request; the future holds the result or, for an invalid request
  // (empty prompt, token id outside the vocabulary, bad sampling params), a
  // ConfigError.
  std::future<GenerationResult> submit(GenerationRequest request) override;

  // Deterministic mode: runs exactly these requests (see above) and blocks
  // until all are done. Results in request order.
  std::vector<GenerationResult> generate_batch(std::vector<GenerationRequest> requests);

  void release(const std::string& cache_key) override;
  int64_t max_sequences() const override { return num_slots(); }

  // Exclusive lock over the model weights; hold it while updating them.
  std::unique_lock<std::shared_mutex> lock_weights();

  EngineStats stats() const;
  const EngineOptions& options() const { return options_; }
  int64_t num_slots() const;

  struct Impl;  // engine_*.cpp

 private:
  EngineOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentrl::rollout
