#include "agentrl/rollout/generation_engine.h"

#include <algorithm>
#include <chrono>
#include <list>

#include "agentrl/core/error.h"
#include "agentrl/core/regex.h"
#include "agentrl/core/logging.h"
#include "agentrl/core/rng.h"
#include "agentrl/model/intra_op_team.h"
#include "agentrl/model/kv_cache.h"
#include "agentrl/model/sampler.h"
#include "agentrl/rollout/choice_constraint.h"

namespace agentrl::rollout {

void EngineOptions::visit(config::Visitor& v) {
  v.field("max_batch_size", max_batch_size, "sequences decoded together per step", config::Range::at_least(1));
  v.field("kv_budget_tokens", kv_budget_tokens, "KV-cache budget in tokens (slots = budget / max_seq_len)",
          config::Range::at_least(1));
  v.field("kv_memory_fraction", kv_memory_fraction,
          "0 = use kv_budget_tokens; else the KV budget is this fraction of the device memory free once the policy, "
          "its fp32 masters and AdamW state and the reference model are allocated (like vLLM's "
          "gpu_memory_utilization), in whole max_seq_len sequences",
          config::Range::closed(0.0, 0.95));
  v.field("max_seq_len", max_seq_len, "longest prompt + generation of one sequence", config::Range::at_least(2));
  v.field("prefill_chunk_tokens", prefill_chunk_tokens, "prompt tokens prefilled per engine step",
          config::Range::at_least(1));
  v.field("device", device, "auto = the model's device; cpu/cuda must match the model's device",
          {"auto", "cpu", "cuda"});
  v.field("keep_finished", keep_finished, "keep finished sequences of a cache_key for prefix reuse");
  v.field("static_decode_shapes", static_decode_shapes,
          "pad decode-only steps to power-of-two rows and their keys to a multiple of 128: equal shapes step to "
          "step, what CUDA graph capture needs (capture itself is not built yet); one KV slot becomes the pad "
          "rows' scratch");
  v.field("fused_kernels", fused_kernels,
          "float32 on the CPU: norms, RoPE, SiLU gate, KV writes and decode attention on agentrl's fused kernels "
          "(one op each), and the weight products and lm head of steps of at most 64 rows on a few-row kernel; "
          "equal to the ATen ops up to float rounding; false = the ATen ops only");
}

namespace {

using Clock = std::chrono::steady_clock;
// How long the loop waits for work before it frees its OpenMP team: long
// enough that a rollout's turns (an environment step between two requests)
// keep it, short against a trainer's update.
constexpr auto kIdleRelease = std::chrono::milliseconds(10);
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct BatchJob;

struct Sequence {
  GenerationRequest req;
  std::promise<GenerationResult> promise;
  BatchJob* job = nullptr;  // set for generate_batch members
  size_t job_index = 0;
  int64_t slot = -1;
  std::vector<int32_t> tokens;  // prompt + generated
  int64_t prompt_len = 0;
  int64_t cached = 0;  // tokens whose K/V are in the slot
  uint64_t version = 0;
  Rng rng{0};
  model::SamplerParams sp;
  GenerationResult result;
  std::string bytes;  // generated tokens' bytes (kept with stop strings, a stop regex or allowed_texts)
  int64_t stop_cut = -1;  // byte length of `text` when a stop string matched
  std::shared_ptr<const Regex> stop_regex;  // compiled request.stop_regex (null when none)
  Clock::time_point submitted, admitted, first_token;
  bool done = false;
  bool prefilling() const { return cached < prompt_len; }
};
using SeqPtr = std::shared_ptr<Sequence>;

struct BatchJob {
  std::vector<SeqPtr> pending;  // not yet admitted, in request order
  std::vector<GenerationResult> results;
  size_t remaining = 0;
  std::promise<void> done;
  std::exception_ptr error;
};

struct Kept {
  std::string key;
  int64_t slot;
  std::vector<int32_t> tokens;  // tokens whose K/V are valid in the slot
  uint64_t version;
  uint64_t last_use;
};

int64_t common_prefix(const std::vector<int32_t>& a, int64_t a_len, const std::vector<int32_t>& b) {
  const int64_t n = std::min<int64_t>(a_len, static_cast<int64_t>(b.size()));
  int64_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

struct GenerationEngine::Impl {
  model::TransformerLM model{nullptr};
  std::shared_ptr<const text::Tokenizer> tok;
  EngineOptions opt;
  std::vector<int32_t> eos;
  std::unique_ptr<ChoiceConstraint> choices;  // loop thread; built at the first request with allowed_texts
  std::unique_ptr<model::KvCache> cache;
  int64_t limit = 0;     // max tokens per sequence
  int64_t scratch = -1;  // the pad rows' KV slot under static decode shapes (-1: off)

  std::shared_mutex weights_mu;
  std::atomic<uint64_t> version{0};

  mutable std::mutex mu;  // guards queue, jobs, releases, stop, stats
  std::condition_variable cv;
  std::deque<SeqPtr> queue;
  std::deque<std::shared_ptr<BatchJob>> jobs;
  std::vector<std::string> releases;
  bool stop = false;
  EngineStats st;

  // Loop-thread state.
  std::vector<SeqPtr> active;
  std::list<Kept> kept;
  std::shared_ptr<BatchJob> current_job;
  uint64_t use_clock = 0;
  std::thread loop_thread;

  void loop();
  void admit(std::deque<SeqPtr>& from, bool from_job);
  int admit_one(const SeqPtr& s);
  void step();
  int64_t pad_decode_step(std::vector<model::CacheSegment>& segs, std::vector<int64_t>& feed);
  void finish(const SeqPtr& s, FinishReason why);
  void deliver(const SeqPtr& s);
  void fail_active(std::exception_ptr e);
  void abort_all();
  void apply_releases();
  bool evict_one();
  void check_stop(const SeqPtr& s, int32_t token);
  void mask_choices(torch::Tensor& logits, const std::vector<int64_t>& rows, const std::vector<SeqPtr>& seqs);
};

// ---- construction / public API ---------------------------------------------------

GenerationEngine::GenerationEngine(model::TransformerLM model, std::shared_ptr<const text::Tokenizer> tokenizer,
                                   EngineOptions options, std::vector<int32_t> eos_ids)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  I.model = model;
  I.tok = std::move(tokenizer);
  I.opt = options_;
  I.eos = std::move(eos_ids);
  if (I.eos.empty() && I.tok && I.tok->eos_id()) I.eos.push_back(*I.tok->eos_id());
  if (options_.device != "auto") {
    const auto want = model::resolve_device(options_.device);
    if (want.type() != model->device().type())
      throw ConfigError("engine.device '" + options_.device + "' differs from the model's device " +
                        model->device().str() + " (the engine decodes on the live weights, without a copy)");
  }
  if (options_.kv_memory_fraction > 0) {
    const auto device = model->device();
    options_.kv_budget_tokens = model::kv_budget_from_memory(
        model::free_device_memory(device), options_.kv_memory_fraction,
        model::kv_bytes_per_token(model->args(), model->dtype()), options_.max_seq_len);
    I.opt = options_;
    log().info("engine: KV budget {} tokens ({} MiB, {:.0f}% of the free memory of {})", options_.kv_budget_tokens,
               (options_.kv_budget_tokens * model::kv_bytes_per_token(model->args(), model->dtype())) >> 20,
               100 * options_.kv_memory_fraction, device.str());
  }
  const int64_t slots = options_.kv_budget_tokens / options_.max_seq_len;
  if (slots < 1)
    throw ConfigError("engine.kv_budget_tokens (" + std::to_string(options_.kv_budget_tokens) +
                      ") is smaller than engine.max_seq_len (" + std::to_string(options_.max_seq_len) + ")");
  if (options_.max_batch_size < 1) throw ConfigError("engine.max_batch_size must be >= 1");
  if (options_.prefill_chunk_tokens < 1) throw ConfigError("engine.prefill_chunk_tokens must be >= 1");
  I.cache = std::make_unique<model::KvCache>(model->args(), slots, options_.max_seq_len, model->dtype(),
                                             model->device());
  I.limit = std::min(options_.max_seq_len, model->args().max_position_embeddings);
  if (options_.static_decode_shapes) {
    if (slots < 2)
      throw ConfigError("engine.static_decode_shapes needs 2 KV slots (one holds the pad rows), but "
                        "engine.kv_budget_tokens / engine.max_seq_len = " + std::to_string(options_.kv_budget_tokens) +
                        " / " + std::to_string(options_.max_seq_len) + " gives 1");
    I.scratch = *I.cache->allocate();
  }
  I.loop_thread = std::thread([this] { impl_->loop(); });
}

GenerationEngine::~GenerationEngine() {
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->loop_thread.joinable()) impl_->loop_thread.join();
}

int64_t GenerationEngine::num_slots() const { return impl_->cache->num_slots() - (impl_->scratch >= 0 ? 1 : 0); }

int64_t static_decode_rows(int64_t rows) {
  int64_t n = 2;
  while (n < rows) n *= 2;
  return n;
}

namespace {
void validate_request(const GenerationRequest& r, int64_t vocab, bool have_tokenizer) {
  if (r.prompt.empty()) throw ConfigError("generation request: empty prompt (at least one token is needed)");
  for (size_t i = 0; i < r.prompt.size(); ++i)
    if (r.prompt[i] < 0 || r.prompt[i] >= vocab)
      throw ConfigError("generation request: prompt token " + std::to_string(i) + " = " +
                        std::to_string(r.prompt[i]) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  if (r.max_new_tokens < 1)
    throw ConfigError("generation request: max_new_tokens must be >= 1, got " + std::to_string(r.max_new_tokens));
  const auto& s = r.sampling;
  if (!(s.temperature >= 0)) throw ConfigError("sampling temperature must be >= 0, got " + std::to_string(s.temperature));
  if (!(s.top_p > 0 && s.top_p <= 1)) throw ConfigError("sampling top_p must be in (0, 1], got " + std::to_string(s.top_p));
  if (s.top_k < 0) throw ConfigError("sampling top_k must be >= 0, got " + std::to_string(s.top_k));
  for (const auto& stop : r.stop_strings) {
    if (stop.empty()) throw ConfigError("generation request: empty stop string");
    if (!have_tokenizer) throw ConfigError("generation request: stop strings need an engine with a tokenizer");
  }
  if (!r.stop_regex.empty() && !have_tokenizer)
    throw ConfigError("generation request: a stop regex needs an engine with a tokenizer");
  if (!r.allowed_texts.empty() && !have_tokenizer)
    throw ConfigError("generation request: allowed_texts need an engine with a tokenizer");
}

// Throws ConfigError when the request's stop regex does not compile.
SeqPtr make_sequence(GenerationRequest r) {
  auto s = std::make_shared<Sequence>();
  s->req = std::move(r);
  s->tokens = s->req.prompt;
  s->prompt_len = static_cast<int64_t>(s->tokens.size());
  s->rng = Rng(s->req.sampling.seed);
  s->sp = {s->req.sampling.temperature, s->req.sampling.top_k, s->req.sampling.top_p};
  if (!s->req.stop_regex.empty()) s->stop_regex = std::make_shared<Regex>(s->req.stop_regex, "generation request stop_regex");
  s->submitted = Clock::now();
  return s;
}
}  // namespace

std::future<GenerationResult> GenerationEngine::submit(GenerationRequest request) {
  model::release_intra_op_team();  // the caller waits while the engine computes (intra_op_team.h)
  std::promise<GenerationResult> p;
  SeqPtr s;
  try {
    validate_request(request, impl_->model->args().vocab_size, impl_->tok != nullptr);
    s = make_sequence(std::move(request));
  } catch (...) {
    p.set_exception(std::current_exception());
    return p.get_future();
  }
  auto fut = s->promise.get_future();
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    if (impl_->stop) {
      s->result.finish_reason = FinishReason::kAborted;
      s->promise.set_value(s->result);
      return fut;
    }
    impl_->queue.push_back(std::move(s));
  }
  impl_->cv.notify_all();
  return fut;
}

std::vector<GenerationResult> GenerationEngine::generate_batch(std::vector<GenerationRequest> requests) {
  model::release_intra_op_team();  // the caller waits while the engine computes (intra_op_team.h)
  for (const auto& r : requests) validate_request(r, impl_->model->args().vocab_size, impl_->tok != nullptr);
  auto job = std::make_shared<BatchJob>();
  job->results.resize(requests.size());
  job->remaining = requests.size();
  for (size_t i = 0; i < requests.size(); ++i) {
    auto s = make_sequence(std::move(requests[i]));
    s->job = job.get();
    s->job_index = i;
    job->pending.push_back(std::move(s));
  }
  if (job->remaining == 0) return {};
  auto fut = job->done.get_future();
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->jobs.push_back(job);
  }
  impl_->cv.notify_all();
  fut.get();
  if (job->error) std::rethrow_exception(job->error);
  return std::move(job->results);
}

void GenerationEngine::release(const std::string& cache_key) {
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->releases.push_back(cache_key);
  }
  impl_->cv.notify_all();
}

std::unique_lock<std::shared_mutex> GenerationEngine::lock_weights() {
  std::unique_lock<std::shared_mutex> lock(impl_->weights_mu);
  impl_->version.fetch_add(1);  // cached K/V from older weights are no longer reused
  return lock;
}

EngineStats GenerationEngine::stats() const {
  std::lock_guard<std::mutex> g(impl_->mu);
  EngineStats s = impl_->st;
  s.queued = static_cast<int64_t>(impl_->queue.size());
  return s;
}

}  // namespace agentrl::rollout

// ---- engine loop (single thread) ---------------------------------------------

namespace agentrl::rollout {

void GenerationEngine::Impl::loop() {
  for (;;) {
    std::deque<SeqPtr> incoming;
    {
      std::unique_lock<std::mutex> g(mu);
      // A deterministic batch with members still waiting for a KV slot goes
      // on even when nothing is active (its finished members freed slots).
      const bool job_waiting = current_job && !current_job->pending.empty();
      const auto ready = [&] {
        return stop || job_waiting || !queue.empty() || !jobs.empty() || !active.empty() || !releases.empty();
      };
      // Idle for a while (the rollout is over, or its environments take
      // their time): hand the cores back, so that the thread that computes
      // next (the trainer's) is the only one with an OpenMP team
      // (intra_op_team.h: two teams made a small parallel region ~6x
      // dearer in engine_bench's BM_ParallelRegion).
      if (!cv.wait_for(g, kIdleRelease, ready)) {
        g.unlock();
        model::release_intra_op_team();
        g.lock();
        cv.wait(g, ready);
      }
      if (stop) break;
      for (auto& k : releases) {
        kept.remove_if([&](const Kept& e) {
          if (e.key != k) return false;
          cache->release(e.slot);
          return true;
        });
      }
      releases.clear();
      st.kept = static_cast<int64_t>(kept.size());
      // A pending deterministic batch starts once the engine has drained; no
      // other request is admitted until it is done.
      if (!current_job && !jobs.empty() && active.empty()) {
        current_job = jobs.front();
        jobs.pop_front();
      }
      if (!current_job && jobs.empty()) incoming.swap(queue);
    }
    if (current_job) {
      std::deque<SeqPtr> pend(current_job->pending.begin(), current_job->pending.end());
      admit(pend, true);
      current_job->pending.assign(pend.begin(), pend.end());
    } else {
      admit(incoming, false);
      std::lock_guard<std::mutex> g(mu);  // not admitted: back to the queue front, in order
      queue.insert(queue.begin(), incoming.begin(), incoming.end());
    }
    auto finish_job = [&] {
      if (current_job && current_job->remaining == 0 && current_job->pending.empty()) {
        auto job = current_job;
        current_job.reset();
        job->done.set_value();
      }
    };
    if (active.empty()) {
      finish_job();
      continue;
    }
    Clock::time_point busy_from = Clock::now();
    try {
      std::shared_lock<std::shared_mutex> w(weights_mu);
      busy_from = Clock::now();  // after the weights lock: waiting for an optimizer step is not busy
      step();
    } catch (...) {
      fail_active(std::current_exception());
    }
    {
      std::lock_guard<std::mutex> g(mu);
      st.busy_seconds += seconds(busy_from, Clock::now());
    }
    finish_job();
  }
  abort_all();
}

void GenerationEngine::Impl::admit(std::deque<SeqPtr>& from, bool from_job) {
  (void)from_job;
  std::deque<SeqPtr> deferred;
  while (!from.empty() && static_cast<int64_t>(active.size()) < opt.max_batch_size) {
    auto s = from.front();
    const int r = admit_one(s);
    if (r == 2) {  // no KV slot: wait (FIFO: nothing behind it jumps ahead)
      break;
    }
    from.pop_front();
    if (r == 1) deferred.push_back(s);  // waits for a group sibling's prefill
  }
  from.insert(from.begin(), deferred.begin(), deferred.end());
}


// Returns 0 = admitted (or finished at once), 1 = deferred one step (a group
// sibling is prefilling the shared prompt), 2 = no KV slot free.
int GenerationEngine::Impl::admit_one(const SeqPtr& s) {
  const uint64_t ver = version.load();
  if (s->prompt_len >= limit) {
    s->admitted = s->first_token = Clock::now();
    finish(s, FinishReason::kContextLimit);
    return 0;
  }
  const auto& key = s->req.cache_key;
  int64_t best = 0;
  auto best_kept = kept.end();
  Sequence* best_active = nullptr;
  if (!key.empty()) {
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (it->key != key || it->version != ver) continue;
      const int64_t l = common_prefix(it->tokens, static_cast<int64_t>(it->tokens.size()), s->tokens);
      if (l > best) best = l, best_kept = it, best_active = nullptr;
    }
    for (auto& a : active) {
      if (a->req.cache_key != key || a->version != ver) continue;
      const int64_t l = common_prefix(a->tokens, a->cached, s->tokens);
      if (l > best) best = l, best_active = a.get(), best_kept = kept.end();
    }
    for (auto& a : active) {  // a sibling still prefilling more of our prompt: wait for it
      if (a->req.cache_key != key || a->version != ver || !a->prefilling()) continue;
      const int64_t l = std::min(common_prefix(a->tokens, a->prompt_len, s->tokens), s->prompt_len - 1);
      if (l > best) return 1;
    }
  }
  best = std::min(best, s->prompt_len - 1);  // the last prompt token is always fed (its logits are needed)
  if (best_kept != kept.end() && best > 0) {
    s->slot = best_kept->slot;  // take over the previous turn's slot: no copy
    kept.erase(best_kept);
  } else {
    auto slot = cache->allocate();
    while (!slot && evict_one()) slot = cache->allocate();
    if (!slot) return 2;
    s->slot = *slot;
    if (best > 0 && best_active) cache->copy_prefix(best_active->slot, s->slot, best);
  }
  s->cached = best;
  s->result.cached_prompt_tokens = best;
  s->version = ver;
  s->admitted = Clock::now();
  active.push_back(s);
  std::lock_guard<std::mutex> g(mu);
  st.cached_tokens += best;
  return 0;
}

bool GenerationEngine::Impl::evict_one() {
  if (kept.empty()) return false;
  auto lru = std::min_element(kept.begin(), kept.end(),
                              [](const Kept& a, const Kept& b) { return a.last_use < b.last_use; });
  cache->release(lru->slot);
  kept.erase(lru);
  return true;
}

// Under static decode shapes, a step whose every segment decodes one token
// gets pad rows (token 0 at position 0 of the scratch slot) up to
// static_decode_rows. Returns the number added.
int64_t GenerationEngine::Impl::pad_decode_step(std::vector<model::CacheSegment>& segs, std::vector<int64_t>& feed) {
  if (scratch < 0) return 0;
  for (const auto& s : segs)
    if (s.length != 1) return 0;
  const auto real = static_cast<int64_t>(segs.size());
  const int64_t rows = static_decode_rows(real);
  for (int64_t i = real; i < rows; ++i) {
    segs.push_back({scratch, 0, 1});
    feed.push_back(0);
  }
  return rows - real;
}

void GenerationEngine::Impl::step() {
  std::vector<model::CacheSegment> segs;
  std::vector<int64_t> feed;
  std::vector<SeqPtr> seg_seq;
  int64_t budget = opt.prefill_chunk_tokens, prefilled = 0;
  for (auto& s : active) {
    int64_t n = static_cast<int64_t>(s->tokens.size()) - s->cached;
    if (s->prefilling()) {
      if (budget <= 0) continue;
      n = std::min(n, budget);
      budget -= n;
      prefilled += n;
    }
    segs.push_back({s->slot, s->cached, n});
    feed.insert(feed.end(), s->tokens.begin() + s->cached, s->tokens.begin() + s->cached + n);
    seg_seq.push_back(s);
  }
  if (segs.empty()) return;
  const int64_t pads = pad_decode_step(segs, feed);
  auto hidden = model->forward_cached(torch::tensor(feed, torch::TensorOptions().dtype(torch::kInt64)), segs, *cache,
                                      scratch >= 0 ? kDecodeKvMultiple : 1, opt.fused_kernels);
  std::vector<int64_t> rows;
  std::vector<model::SamplerParams> params;
  std::vector<Rng*> rngs;
  for (size_t i = 0; i < seg_seq.size(); ++i) {  // the pad rows after them are dropped
    auto& s = seg_seq[i];
    s->cached += segs[i].length;
    if (s->cached == static_cast<int64_t>(s->tokens.size())) {
      rows.push_back(static_cast<int64_t>(i));
      params.push_back(s->sp);
      rngs.push_back(&s->rng);
    }
  }
  if (!rows.empty()) {
    torch::NoGradGuard ng;
    auto sel = hidden.index_select(0, torch::tensor(rows, torch::TensorOptions().dtype(torch::kInt64)).to(hidden.device()));
    // On a GPU the logits stay there (device sampling, one small copy back);
    // on the CPU the host sampler is the exact reference.
    auto logits = model->logits_fp32(sel, opt.fused_kernels);
    mask_choices(logits, rows, seg_seq);
    auto samples = logits.is_cuda() ? model::sample_rows_on_device(logits, params, rngs)
                                    : model::sample_rows(logits, params, rngs);
    const auto now = Clock::now();
    for (size_t j = 0; j < rows.size(); ++j) {
      auto& s = seg_seq[rows[j]];
      if (s->tokens.size() == static_cast<size_t>(s->prompt_len)) s->first_token = now;
      s->tokens.push_back(samples[j].token);
      s->result.logprobs.push_back(samples[j].logprob);
      s->result.entropies.push_back(samples[j].entropy);
      check_stop(s, samples[j].token);
    }
  }
  {
    std::lock_guard<std::mutex> g(mu);
    st.steps += 1;
    st.prefill_tokens += prefilled;
    st.decode_tokens += static_cast<int64_t>(rows.size());
    st.pad_rows += pads;
  }
  active.erase(std::remove_if(active.begin(), active.end(), [](const SeqPtr& s) { return s->done; }), active.end());
  std::lock_guard<std::mutex> g(mu);
  st.active = static_cast<int64_t>(active.size());
  st.kept = static_cast<int64_t>(kept.size());
}

void GenerationEngine::Impl::check_stop(const SeqPtr& s, int32_t token) {
  const int64_t generated = static_cast<int64_t>(s->tokens.size()) - s->prompt_len;
  const auto& r = s->req;
  if (std::find(eos.begin(), eos.end(), token) != eos.end()) return finish(s, FinishReason::kEos);
  if (std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), token) != r.stop_token_ids.end())
    return finish(s, FinishReason::kStopToken);
  const size_t old = s->bytes.size();
  if (!r.stop_strings.empty() || s->stop_regex || !r.allowed_texts.empty()) s->bytes += tok->token_bytes(token);
  if (!r.stop_strings.empty() || s->stop_regex) {
    size_t best_end = std::string::npos, best_start = 0;
    for (const auto& stop_string : r.stop_strings) {
      // Only matches that end inside this token's bytes are new; earlier ones
      // would have stopped generation before.
      const size_t n = stop_string.size();
      const size_t from = old + 1 > n ? old + 1 - n : 0;
      const size_t pos = s->bytes.find(stop_string, from);
      if (pos != std::string::npos && pos + n < best_end) best_end = pos + n, best_start = pos;
    }
    // The regex is searched over all generated bytes (its match may start
    // anywhere); a match found now ends in this token's bytes, or it would
    // have stopped generation before.
    if (s->stop_regex) {
      if (auto m = s->stop_regex->search(s->bytes); m && m->end < best_end) best_end = m->end, best_start = m->begin;
    }
    if (best_end != std::string::npos) {
      s->stop_cut = static_cast<int64_t>(r.include_stop_string ? best_end : best_start);
      return finish(s, FinishReason::kStopString);
    }
  }
  if (generated >= r.max_new_tokens) return finish(s, FinishReason::kLength);
  if (static_cast<int64_t>(s->tokens.size()) >= limit) return finish(s, FinishReason::kContextLimit);
}

// Rows of sequences with allowed_texts get every other token's logit set to
// a large negative number (finite: the sampler's entropy sums p * z, and
// 0 * -inf would be NaN). The allowed set is computed on the host from the
// sequence's generated bytes; on a GPU one small mask per constrained row is
// copied over. A row where no token fits stays unconstrained. Each
// constrained row's kept ids go into its result (allowed_tokens), one entry
// per sampled token, for the trainer to mask alike.
void GenerationEngine::Impl::mask_choices(torch::Tensor& logits, const std::vector<int64_t>& rows,
                                          const std::vector<SeqPtr>& seqs) {
  constexpr float kMasked = -1e30f;
  for (size_t j = 0; j < rows.size(); ++j) {
    const auto& s = seqs[static_cast<size_t>(rows[j])];
    if (s->req.allowed_texts.empty()) continue;
    if (!choices) choices = std::make_unique<ChoiceConstraint>(*tok);  // one pass over the vocabulary
    std::vector<int32_t> ends = eos;
    ends.insert(ends.end(), s->req.stop_token_ids.begin(), s->req.stop_token_ids.end());
    auto allowed = choices->allowed(s->req.allowed_texts, s->bytes, ends);
    const int64_t n = std::min<int64_t>(logits.size(1), static_cast<int64_t>(allowed.size()));
    std::vector<int32_t> ids;
    for (int64_t id = 0; id < n; ++id)
      if (allowed[static_cast<size_t>(id)]) ids.push_back(static_cast<int32_t>(id));
    s->result.allowed_tokens.push_back(ids);  // empty: nothing fits, the row stays free
    if (ids.empty()) continue;
    auto keep = torch::zeros({logits.size(1)}, torch::TensorOptions().dtype(torch::kBool));
    std::copy(allowed.begin(), allowed.begin() + n, keep.data_ptr<bool>());
    logits[static_cast<int64_t>(j)].masked_fill_(keep.to(logits.device()).logical_not(), kMasked);
  }
}

void GenerationEngine::Impl::finish(const SeqPtr& s, FinishReason why) {
  const auto now = Clock::now();
  auto& res = s->result;
  res.finish_reason = why;
  res.tokens.assign(s->tokens.begin() + s->prompt_len, s->tokens.end());
  if (tok) {
    if (why == FinishReason::kStopString) {
      res.text = s->bytes.substr(0, static_cast<size_t>(s->stop_cut));
    } else {
      std::vector<int32_t> ids = res.tokens;
      if ((why == FinishReason::kEos || why == FinishReason::kStopToken) && !ids.empty()) ids.pop_back();
      res.text = tok->decode(ids);
    }
  }
  res.queue_seconds = seconds(s->submitted, s->admitted);
  res.prefill_seconds = seconds(s->admitted, s->first_token);
  res.decode_seconds = seconds(s->first_token, now);
  if (s->slot >= 0) {
    if (!s->req.cache_key.empty() && opt.keep_finished && s->version == version.load()) {
      kept.push_back({s->req.cache_key, s->slot,
                      std::vector<int32_t>(s->tokens.begin(), s->tokens.begin() + s->cached), s->version,
                      ++use_clock});
    } else {
      cache->release(s->slot);
    }
    s->slot = -1;
  }
  s->done = true;
  {
    std::lock_guard<std::mutex> g(mu);  // published before the caller can see the result
    st.kept = static_cast<int64_t>(kept.size());
  }
  deliver(s);
}

void GenerationEngine::Impl::deliver(const SeqPtr& s) {
  if (s->job) {
    s->job->results[s->job_index] = std::move(s->result);
    s->job->remaining -= 1;
  } else {
    s->promise.set_value(std::move(s->result));
  }
}

void GenerationEngine::Impl::fail_active(std::exception_ptr e) {
  for (auto& s : active) {
    if (s->slot >= 0) cache->release(s->slot);
    s->slot = -1;
    s->done = true;
    if (s->job) {
      s->job->error = e;
      s->job->remaining -= 1;
    } else {
      s->promise.set_exception(e);
    }
  }
  active.clear();
  if (current_job) {
    for (auto& s : current_job->pending) {
      (void)s;
      current_job->remaining -= 1;
    }
    current_job->pending.clear();
    current_job->error = e;
  }
}

void GenerationEngine::Impl::abort_all() {
  auto abort = [&](const SeqPtr& s) {
    if (s->done) return;
    s->result.finish_reason = FinishReason::kAborted;
    s->result.tokens.assign(s->tokens.begin() + s->prompt_len, s->tokens.end());
    s->done = true;
    deliver(s);
  };
  for (auto& s : active) abort(s);
  active.clear();
  std::lock_guard<std::mutex> g(mu);
  for (auto& s : queue) abort(s);
  queue.clear();
  if (current_job) jobs.push_front(current_job);
  current_job.reset();
  for (auto& j : jobs) {
    for (auto& s : j->pending) abort(s);
    j->done.set_value();
  }
  jobs.clear();
}

}  // namespace agentrl::rollout
