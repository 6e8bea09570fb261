// Specifications of the generation engine on a tiny random model with a tiny
// byte-level tokenizer written here (ids 0-255 = bytes, 256 = <eos>, 257+ =
// two-letter pieces), checked against uncached full-forward decoding.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cctype>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "agentrl/core/error.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/rollout/choice_constraint.h"
#include "agentrl/rollout/generation_engine.h"

using namespace agentrl;
using namespace agentrl::rollout;

namespace {

class ByteTokenizer : public text::Tokenizer {
 public:
  static constexpr int32_t kVocab = 300, kEos = 256;
  std::vector<text::TokenId> encode(std::string_view t, bool, bool) const override {
    std::vector<text::TokenId> ids;
    for (unsigned char c : t) ids.push_back(c);
    return ids;
  }
  std::string decode(const std::vector<text::TokenId>& ids, bool) const override {
    std::string s;
    for (auto id : ids) s += token_bytes(id);
    return s;
  }
  std::string token_bytes(text::TokenId id) const override {
    if (id < 256) return std::string(1, static_cast<char>(id));
    if (id == kEos) return "<eos>";
    const int k = id - 257;
    return std::string{static_cast<char>('a' + k % 26), static_cast<char>('a' + k / 26)};
  }
  std::string id_to_piece(text::TokenId id) const override { return token_bytes(id); }
  std::optional<text::TokenId> piece_to_id(const std::string&) const override { return std::nullopt; }
  int32_t vocab_size() const override { return kVocab; }
  bool is_special(text::TokenId id) const override { return id == kEos; }
  std::optional<text::TokenId> bos_id() const override { return std::nullopt; }
  std::optional<text::TokenId> eos_id() const override { return kEos; }
  std::optional<text::TokenId> pad_id() const override { return std::nullopt; }
};

model::TransformerLM tiny_model(uint64_t seed = 1) {
  model::ModelArgs a;
  a.model_type = "qwen2";
  a.vocab_size = ByteTokenizer::kVocab;
  a.hidden_size = 32;
  a.intermediate_size = 64;
  a.num_hidden_layers = 2;
  a.num_attention_heads = 4;
  a.num_key_value_heads = 2;
  a.attention_bias = true;
  model::TransformerLM m(a);
  m->init_weights(seed, 0.3);  // peaked logits: fewer near-ties
  return m;
}

EngineOptions small_options(int64_t slots = 8) {
  EngineOptions o;
  o.max_seq_len = 128;
  o.kv_budget_tokens = slots * 128;
  o.max_batch_size = 16;
  o.prefill_chunk_tokens = 64;
  return o;
}

std::vector<int32_t> prompt_of(int n, int salt) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(static_cast<int32_t>((i * 37 + salt * 11 + 5) % 256));
  return p;
}

GenerationRequest greedy(std::vector<int32_t> prompt, int64_t n) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_new_tokens = n;
  return r;
}

// Greedy decoding with a full forward over the whole sequence at every step.
std::vector<int32_t> greedy_without_cache(model::TransformerLM& m, std::vector<int32_t> seq, int64_t n) {
  torch::NoGradGuard g;
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t T = static_cast<int64_t>(seq.size());
    auto ids = torch::tensor(std::vector<int64_t>(seq.begin(), seq.end())).unsqueeze(0);
    auto pos = torch::arange(T).unsqueeze(0);
    auto logits = m->forward(ids, pos, torch::ones({1, T}, torch::kBool))[0][T - 1];
    const auto tok = static_cast<int32_t>(logits.argmax().item<int64_t>());
    out.push_back(tok);
    seq.push_back(tok);
    if (tok == ByteTokenizer::kEos) break;
  }
  return out;
}

// Log-probs [T, vocab] of a fresh full forward over prompt + generated
// tokens (what the trainer recomputes); row t-1 predicts token t.
torch::Tensor full_forward_logprobs(model::TransformerLM& m, const std::vector<int32_t>& prompt,
                                    const std::vector<int32_t>& generated, std::vector<int64_t>& seq) {
  torch::NoGradGuard g;
  seq.assign(prompt.begin(), prompt.end());
  seq.insert(seq.end(), generated.begin(), generated.end());
  const int64_t T = static_cast<int64_t>(seq.size());
  auto logits = m->forward(torch::tensor(seq).unsqueeze(0), torch::arange(T).unsqueeze(0),
                           torch::ones({1, T}, torch::kBool))[0];
  return torch::log_softmax(logits, -1);
}

std::shared_ptr<const text::Tokenizer> tok() { return std::make_shared<ByteTokenizer>(); }

}  // namespace

TEST(GenerationEngine, GreedyEqualsGreedyDecodingWithoutCache) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  auto r = e.submit(greedy(prompt_of(9, 1), 20)).get();
  EXPECT_EQ(r.tokens, greedy_without_cache(m, prompt_of(9, 1), 20));
  EXPECT_EQ(r.logprobs.size(), r.tokens.size());
  EXPECT_EQ(r.entropies.size(), r.tokens.size());
}

TEST(GenerationEngine, MixedLengthBatchGivesTheSameTokensAsEachRequestAlone) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back(greedy(prompt_of(3 + 7 * i, i), 12 + i));
  auto together = e.generate_batch(reqs);
  ASSERT_EQ(together.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto alone = e.submit(reqs[i]).get();
    EXPECT_EQ(together[i].tokens, alone.tokens) << "request " << i;
    EXPECT_EQ(alone.tokens, greedy_without_cache(m, reqs[i].prompt, reqs[i].max_new_tokens)) << "request " << i;
  }
}

// model.attention: fused (the default on LibTorch 1.13): the engine's
// prefill chunks (prompts longer than a chunk, several per step) attend on
// agentrl's tiled kernel, as the full forward does.
TEST(GenerationEngine, FusedAttentionKernelGivesTheTokensAndLogprobsOfUncachedDecoding) {
  auto m = tiny_model();
  m->set_attention_kernel(model::AttentionKernel::kFused);
  GenerationEngine e(m, tok(), small_options());
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 5; ++i) reqs.push_back(greedy(prompt_of(20 + 19 * i, i), 10));
  auto together = e.generate_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(together[i].tokens, greedy_without_cache(m, reqs[i].prompt, reqs[i].max_new_tokens)) << "request " << i;
    std::vector<int64_t> seq;
    auto logp = full_forward_logprobs(m, reqs[i].prompt, together[i].tokens, seq);
    for (size_t j = 0; j < together[i].tokens.size(); ++j) {
      const int64_t t = static_cast<int64_t>(reqs[i].prompt.size() + j);
      EXPECT_NEAR(together[i].logprobs[j], logp[t - 1][seq[t]].item<float>(), 1e-4) << "request " << i << ", " << j;
    }
  }
}

TEST(GenerationEngine, LogprobsAndEntropiesEqualAFreshFullForward) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  GenerationRequest r;
  r.prompt = prompt_of(11, 2);
  r.max_new_tokens = 15;
  r.sampling.seed = 42;  // temperature 1 sampling
  auto res = e.submit(r).get();
  ASSERT_FALSE(res.tokens.empty());
  std::vector<int64_t> seq;
  auto logp = full_forward_logprobs(m, r.prompt, res.tokens, seq);
  for (size_t i = 0; i < res.tokens.size(); ++i) {
    const int64_t t = static_cast<int64_t>(r.prompt.size() + i);  // token t predicted at t-1
    EXPECT_NEAR(res.logprobs[i], logp[t - 1][seq[t]].item<float>(), 1e-4) << i;
    const float ent = -(logp[t - 1].exp() * logp[t - 1]).sum().item<float>();
    EXPECT_NEAR(res.entropies[i], ent, 1e-4) << i;
  }
}

namespace {

// The concatenated bytes of `ids`.
std::string bytes_of(const text::Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string out;
  for (auto id : ids) out += t.token_bytes(id);
  return out;
}

// The shortest prefix of `ids` whose bytes reach byte `end`: where a stop
// ending there stops generation.
std::vector<int32_t> tokens_through(const text::Tokenizer& t, const std::vector<int32_t>& ids, size_t end) {
  std::vector<int32_t> out;
  for (size_t i = 0, acc = 0; acc < end && i < ids.size(); ++i) {
    out.push_back(ids[i]);
    acc += t.token_bytes(ids[i]).size();
  }
  return out;
}

}  // namespace

TEST(GenerationEngine, StopStringSpanningTokenBoundariesEndsTextExactlyThere) {
  auto m = tiny_model();
  auto t = tok();
  GenerationEngine e(m, t, small_options());
  auto free_run = e.submit(greedy(prompt_of(6, 3), 40)).get();
  const std::string bytes = bytes_of(*t, free_run.tokens);
  ASSERT_GE(bytes.size(), 12u);
  const std::string stop = bytes.substr(6, 4);  // 4 bytes: spans >= 2 tokens (tokens are 1-2 bytes)
  const size_t at = bytes.find(stop);
  // Expected tokens: the shortest prefix whose bytes contain the stop string.
  const auto expect = tokens_through(*t, free_run.tokens, at + stop.size());
  ASSERT_GE(expect.size(), 2u);
  auto req = greedy(prompt_of(6, 3), 40);
  req.stop_strings = {"never-generated", stop};
  auto r = e.submit(req).get();
  EXPECT_EQ(r.finish_reason, FinishReason::kStopString);
  EXPECT_EQ(r.tokens, expect);
  EXPECT_EQ(r.text, bytes.substr(0, at + stop.size()));
  req.include_stop_string = false;
  auto r2 = e.submit(req).get();
  EXPECT_EQ(r2.text, bytes.substr(0, at));
  EXPECT_EQ(r2.tokens, expect);
}

TEST(GenerationEngine, AllowedTextsConfineSamplingToThoseTextsAndGreedyPicksThePolicysFavourite) {
  auto m = tiny_model();
  auto t = tok();
  GenerationEngine e(m, t, small_options());
  const std::vector<std::string> texts = {"go to fridge 1", "go to desk 2", "look", "take apple 1 from desk 2"};
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    GenerationRequest r;
    r.prompt = prompt_of(7, 4);
    r.sampling.temperature = 1.0;
    r.sampling.seed = seed;
    r.max_new_tokens = 40;
    r.allowed_texts = texts;
    auto out = e.submit(r).get();
    EXPECT_EQ(out.finish_reason, FinishReason::kEos) << "seed " << seed;
    EXPECT_NE(std::find(texts.begin(), texts.end(), out.text), texts.end()) << "seed " << seed << ": " << out.text;
    for (size_t i = 0; i < out.logprobs.size(); ++i) {
      EXPECT_TRUE(std::isfinite(out.logprobs[i]) && out.logprobs[i] <= 0) << "seed " << seed << " token " << i;
      EXPECT_TRUE(std::isfinite(out.entropies[i])) << "seed " << seed << " token " << i;
    }
    seen.insert(out.text);
  }
  EXPECT_GE(seen.size(), 2u) << "sampling at temperature 1 should reach more than one text";
  // Greedy: the first token is the policy's most likely token among those
  // that begin a text (a full forward of the prompt, masked by hand).
  auto req = greedy(prompt_of(7, 4), 40);
  req.allowed_texts = texts;
  auto g = e.submit(req).get();
  EXPECT_NE(std::find(texts.begin(), texts.end(), g.text), texts.end()) << g.text;
  torch::NoGradGuard ng;
  const auto p = prompt_of(7, 4);
  const int64_t T = static_cast<int64_t>(p.size());
  auto logits = m->forward(torch::tensor(std::vector<int64_t>(p.begin(), p.end())).unsqueeze(0),
                           torch::arange(T).unsqueeze(0), torch::ones({1, T}, torch::kBool))[0][T - 1];
  auto allowed = ChoiceConstraint(*t).allowed(texts, "", {ByteTokenizer::kEos});
  int64_t best = -1;
  for (int64_t id = 0; id < logits.size(0); ++id)
    if (allowed[static_cast<size_t>(id)] && (best < 0 || logits[id].item<float>() > logits[best].item<float>()))
      best = id;
  ASSERT_FALSE(g.tokens.empty());
  EXPECT_EQ(g.tokens[0], best);
}

// A constrained result says which tokens each step kept (allowed_tokens):
// the sampled token is among them, the first step's are the constraint's,
// and the trainer's log-probs and entropies under the same masks
// (LogprobOptions::allowed) equal the engine's, which the unmasked ones do not.
TEST(GenerationEngine, AllowedTokensLetTheTrainerScoreTheEnginesMaskedDistribution) {
  auto m = tiny_model();
  auto t = tok();
  GenerationEngine e(m, t, small_options());
  const std::vector<std::string> texts = {"go to fridge 1", "go to desk 2", "look", "take apple 1 from desk 2"};
  const auto first = ChoiceConstraint(*t).allowed(texts, "", {ByteTokenizer::kEos});
  std::vector<int32_t> first_ids;
  for (int32_t id = 0; id < ByteTokenizer::kVocab; ++id)
    if (first[static_cast<size_t>(id)]) first_ids.push_back(id);
  double unmasked_gap = 0;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    GenerationRequest r;
    r.prompt = prompt_of(5 + static_cast<int>(seed), 4);
    r.sampling.temperature = 1.0;
    r.sampling.seed = seed;
    r.max_new_tokens = 40;
    r.allowed_texts = texts;
    const auto out = e.submit(r).get();
    ASSERT_EQ(out.allowed_tokens.size(), out.tokens.size()) << "seed " << seed;
    EXPECT_EQ(out.allowed_tokens[0], first_ids);
    std::vector<int64_t> seq(r.prompt.begin(), r.prompt.end());
    std::map<int64_t, std::vector<int32_t>> at;
    for (size_t k = 0; k < out.tokens.size(); ++k) {
      const auto& ids = out.allowed_tokens[k];
      EXPECT_TRUE(std::binary_search(ids.begin(), ids.end(), out.tokens[k])) << "seed " << seed << " token " << k;
      at[static_cast<int64_t>(seq.size())] = ids;
      seq.push_back(out.tokens[k]);
    }
    const int64_t T = static_cast<int64_t>(seq.size());
    auto ids = torch::tensor(seq, torch::kInt64).unsqueeze(0);
    auto mask = torch::ones({1, T}, torch::kBool);
    auto pos = torch::arange(T, torch::kInt64).unsqueeze(0);
    torch::NoGradGuard ng;
    const std::vector<std::map<int64_t, std::vector<int32_t>>> rows{at};
    model::LogprobOptions o;
    o.allowed = &rows;
    const auto masked = model::logprobs_and_entropy(m, ids, mask, pos, o);
    const auto free = model::logprobs_and_entropy(m, ids, mask, pos);
    const int64_t p0 = static_cast<int64_t>(r.prompt.size());
    for (size_t k = 0; k < out.tokens.size(); ++k) {
      const int64_t c = p0 + static_cast<int64_t>(k);
      EXPECT_NEAR(masked.logprobs[0][c].item<double>(), out.logprobs[k], 1e-4) << "seed " << seed << " token " << k;
      EXPECT_NEAR(masked.entropy[0][c].item<double>(), out.entropies[k], 1e-4) << "seed " << seed << " token " << k;
      unmasked_gap = std::max(unmasked_gap, std::abs(free.logprobs[0][c].item<double>() - out.logprobs[k]));
    }
  }
  EXPECT_GT(unmasked_gap, 0.1) << "the unmasked policy's log-probs should differ from the masked ones";
}

TEST(GenerationEngine, StopRegexEndsAtItsFirstMatchAcrossTokens) {
  auto m = tiny_model();
  auto t = tok();
  GenerationEngine e(m, t, small_options());
  auto free_run = e.submit(greedy(prompt_of(6, 3), 40)).get();
  const std::string bytes = bytes_of(*t, free_run.tokens);
  ASSERT_GE(bytes.size(), 14u);
  // A lazy match between two ASCII pieces of the free run (the text between
  // them may hold any bytes): it ends at the first `b` after the first `a`.
  auto ascii_pair = [&](size_t from) {
    for (size_t i = from; i + 1 < bytes.size(); ++i)
      if (std::isalnum(static_cast<unsigned char>(bytes[i])) && std::isalnum(static_cast<unsigned char>(bytes[i + 1])))
        return i;
    return std::string::npos;
  };
  const size_t ia = ascii_pair(1);
  ASSERT_NE(ia, std::string::npos) << bytes;
  const size_t ib = ascii_pair(ia + 4);
  ASSERT_NE(ib, std::string::npos) << bytes;
  const std::string a = bytes.substr(ia, 2), b = bytes.substr(ib, 2);
  const size_t begin = bytes.find(a), end = bytes.find(b, begin + a.size()) + b.size();
  const auto expect = tokens_through(*t, free_run.tokens, end);
  auto req = greedy(prompt_of(6, 3), 40);
  req.stop_regex = "(?s)\\Q" + a + "\\E.*?\\Q" + b + "\\E";
  auto r = e.submit(req).get();
  EXPECT_EQ(r.finish_reason, FinishReason::kStopString);
  EXPECT_EQ(r.tokens, expect);
  EXPECT_EQ(r.text, bytes.substr(0, end));
  req.include_stop_string = false;
  EXPECT_EQ(e.submit(req).get().text, bytes.substr(0, begin));
  // A pattern that does not compile fails the request, not the engine.
  req.stop_regex = "(";
  EXPECT_THROW(e.submit(req).get(), ConfigError);
  EXPECT_EQ(e.submit(greedy(prompt_of(6, 3), 40)).get().tokens, free_run.tokens);
}

TEST(GenerationEngine, SameSeedSameTokensRegardlessOfBatchComposition) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  GenerationRequest r;
  r.prompt = prompt_of(8, 4);
  r.max_new_tokens = 25;
  r.sampling.seed = 7;
  r.sampling.top_p = 0.95;
  auto alone = e.submit(r).get();
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 4; ++i) {
    auto o = r;
    o.prompt = prompt_of(5 + i, 10 + i);
    o.sampling.seed = 100 + i;
    batch.push_back(o);
  }
  batch.insert(batch.begin() + 2, r);
  auto with_others = e.generate_batch(batch);
  EXPECT_EQ(with_others[2].tokens, alone.tokens);
  auto other_seed = r;
  other_seed.sampling.seed = 8;
  EXPECT_NE(e.submit(other_seed).get().tokens, alone.tokens);
}

TEST(GenerationEngine, DeterministicBatchIsBitIdenticalAcrossRuns) {
  auto m = tiny_model();
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 5; ++i) {
    GenerationRequest r;
    r.prompt = prompt_of(4 + 3 * i, i);
    r.max_new_tokens = 10;
    r.sampling.seed = i;
    reqs.push_back(r);
  }
  GenerationEngine e1(m, tok(), small_options()), e2(m, tok(), small_options());
  auto a = e1.generate_batch(reqs), b = e2.generate_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens);
    EXPECT_EQ(a[i].logprobs, b[i].logprobs);  // bitwise
  }
}

TEST(GenerationEngine, RequestsBeyondTheKvBudgetWaitAndComplete) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options(/*slots=*/2));
  EXPECT_EQ(e.num_slots(), 2);
  std::vector<std::future<GenerationResult>> futs;
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 7; ++i) {
    reqs.push_back(greedy(prompt_of(5 + i, 20 + i), 10));
    futs.push_back(e.submit(reqs.back()));
  }
  int waited = 0;
  for (size_t i = 0; i < futs.size(); ++i) {
    auto r = futs[i].get();
    EXPECT_EQ(r.tokens, greedy_without_cache(m, reqs[i].prompt, 10)) << i;
    waited += r.queue_seconds > 0 ? 1 : 0;
  }
  EXPECT_GT(waited, 0);
}

TEST(GenerationEngine, DeterministicBatchLargerThanTheKvBudgetCompletes) {
  // More requests than slots: members wait for a slot freed (or kept and
  // evicted) by earlier members of the same batch, even once nothing is active.
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options(/*slots=*/2));
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 6; ++i) {
    reqs.push_back(greedy(prompt_of(5 + i, 40 + i), 8));
    if (i % 2) reqs.back().cache_key = "episode-" + std::to_string(i);  // finished ones are kept
  }
  auto batch = std::async(std::launch::async, [&] { return e.generate_batch(reqs); });
  ASSERT_EQ(batch.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "deterministic batch hangs";
  auto results = batch.get();
  ASSERT_EQ(results.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(results[i].tokens, greedy_without_cache(m, reqs[i].prompt, 8)) << i;
}

TEST(GenerationEngine, TwoHundredConcurrentRequestsFromSixteenThreadsAllCorrect) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options(16));
  std::vector<std::vector<int32_t>> expect(10);
  for (int p = 0; p < 10; ++p) expect[p] = greedy_without_cache(m, prompt_of(3 + p, p), 8);
  std::atomic<int> ok{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 200; i += 16) {
        const int p = i % 10;
        auto r = e.submit(greedy(prompt_of(3 + p, p), 8)).get();
        (r.tokens == expect[p] ? ok : bad).fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ(bad.load(), 0);
}

TEST(GenerationEngine, GroupSamplesPrefillTheSharedPromptOnce) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  std::vector<GenerationRequest> group;
  for (int g = 0; g < 4; ++g) {
    GenerationRequest r;
    r.prompt = prompt_of(30, 5);
    r.cache_key = "group-0";
    r.max_new_tokens = 6;
    r.sampling.seed = g;
    group.push_back(r);
  }
  auto res = e.generate_batch(group);
  EXPECT_EQ(res[0].cached_prompt_tokens, 0);
  for (int g = 1; g < 4; ++g) EXPECT_EQ(res[g].cached_prompt_tokens, 29) << g;
  // Same tokens as without sharing (a fork must not change the computation).
  for (int g = 0; g < 4; ++g) {
    auto solo = group[g];
    solo.cache_key.clear();
    EXPECT_EQ(e.submit(solo).get().tokens, res[g].tokens) << g;
  }
}

TEST(GenerationEngine, NextTurnReusesThePreviousTurnsCache) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  auto first = greedy(prompt_of(10, 6), 8);
  first.cache_key = "episode-1";
  auto r1 = e.submit(first).get();
  auto second = first;
  second.prompt.insert(second.prompt.end(), r1.tokens.begin(), r1.tokens.end());
  for (int32_t obs : {'o', 'b', 's'}) second.prompt.push_back(obs);
  auto r2 = e.submit(second).get();
  // K/V exist for the first prompt and all generated tokens but the last.
  EXPECT_EQ(r2.cached_prompt_tokens, 10 + static_cast<int64_t>(r1.tokens.size()) - 1);
  EXPECT_EQ(r2.tokens, greedy_without_cache(m, second.prompt, 8));
  e.release("episode-1");
  auto flush = e.submit(greedy(prompt_of(3, 0), 1)).get();
  (void)flush;
  EXPECT_EQ(e.stats().kept, 0);
}

TEST(GenerationEngine, WeightUpdateUnderLockIsSeenByTheNextRequestAndDropsStaleCache) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  auto req = greedy(prompt_of(12, 7), 10);
  req.cache_key = "ep";
  auto before = e.submit(req).get();
  {
    auto lock = e.lock_weights();
    torch::NoGradGuard g;
    for (auto& p : m->parameters()) p.mul_(-1.0);  // an "optimizer step"
  }
  auto after = e.submit(req).get();
  EXPECT_EQ(after.cached_prompt_tokens, 0);  // stale K/V not reused
  EXPECT_EQ(after.tokens, greedy_without_cache(m, req.prompt, 10));
  EXPECT_NE(after.tokens, before.tokens);
}

TEST(GenerationEngine, EosLengthAndContextLimitFinishReasons) {
  auto m = tiny_model();
  auto opts = small_options();
  opts.max_seq_len = 16;
  opts.kv_budget_tokens = 64;
  auto first = greedy_without_cache(m, prompt_of(5, 8), 1)[0];
  GenerationEngine e(m, tok(), opts, {first});  // first greedy token acts as EOS
  auto r = e.submit(greedy(prompt_of(5, 8), 10)).get();
  EXPECT_EQ(r.finish_reason, FinishReason::kEos);
  EXPECT_EQ(r.tokens, std::vector<int32_t>{first});
  EXPECT_EQ(r.text, "");
  r = e.submit(greedy(prompt_of(6, 9), 3)).get();
  if (r.finish_reason != FinishReason::kEos) {
    EXPECT_EQ(r.finish_reason, FinishReason::kLength);
    EXPECT_EQ(r.tokens.size(), 3u);
  }
  r = e.submit(greedy(prompt_of(12, 9), 50)).get();  // 12 + 4 reaches max_seq_len 16
  if (r.finish_reason != FinishReason::kEos) {
    EXPECT_EQ(r.finish_reason, FinishReason::kContextLimit);
    EXPECT_EQ(r.tokens.size(), 4u);
  }
  r = e.submit(greedy(prompt_of(16, 9), 5)).get();
  EXPECT_EQ(r.finish_reason, FinishReason::kContextLimit);
  EXPECT_TRUE(r.tokens.empty());
}

TEST(GenerationEngine, BusySecondsCountDecodeStepsNotIdleTime) {
  using namespace std::chrono_literals;
  GenerationEngine e(tiny_model(), tok(), small_options(), {-1});
  EXPECT_EQ(e.stats().busy_seconds, 0.0);
  const auto t0 = std::chrono::steady_clock::now();
  e.generate_batch({greedy(prompt_of(20, 1), 30), greedy(prompt_of(9, 2), 30)});
  std::this_thread::sleep_for(50ms);  // the loop adds a step's time just after delivering its results
  const double busy = e.stats().busy_seconds;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(busy, 0.0);
  EXPECT_LT(busy, wall - 0.04) << "the idle sleep is not busy time";
  // Idle: no request, no step, the counter stands still.
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(e.stats().busy_seconds, busy);
  e.submit(greedy(prompt_of(5, 3), 5)).get();
  std::this_thread::sleep_for(50ms);
  EXPECT_GT(e.stats().busy_seconds, busy);
}

// `r` fails its future with a ConfigError whose message holds `needle`.
void expect_refused(GenerationEngine& e, const GenerationRequest& r, const std::string& needle) {
  try {
    e.submit(r).get();
    FAIL() << "expected ConfigError containing " << needle;
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
  }
}

TEST(GenerationEngine, InvalidRequestsFailTheirFutureWithAMessage) {
  auto m = tiny_model();
  GenerationEngine e(m, tok(), small_options());
  auto expect_error = [&](const GenerationRequest& r, const std::string& needle) { expect_refused(e, r, needle); };
  expect_error(greedy({}, 4), "empty prompt");
  expect_error(greedy({1, 2, 999}, 4), "prompt token 2 = 999");
  auto r = greedy({1, 2}, 4);
  r.sampling.top_p = 1.5;
  expect_error(r, "top_p");
  // The engine keeps working after rejected requests.
  EXPECT_EQ(e.submit(greedy({1, 2}, 3)).get().tokens.size(), 3u);
}

// Text-level requests (stop strings, a stop regex, allowed texts) read the
// generated bytes: an engine without a tokenizer refuses them by name rather
// than ignoring them, and still serves plain requests.
TEST(GenerationEngine, TextLevelRequestsWithoutATokenizerFailWithAMessage) {
  auto m = tiny_model();
  GenerationEngine e(m, nullptr, small_options());
  auto expect_error = [&](const GenerationRequest& r, const std::string& needle) { expect_refused(e, r, needle); };
  auto r = greedy({1, 2}, 4);
  r.stop_strings = {"ab"};
  expect_error(r, "stop strings need an engine with a tokenizer");
  r = greedy({1, 2}, 4);
  r.stop_regex = "a+";
  expect_error(r, "a stop regex needs an engine with a tokenizer");
  r = greedy({1, 2}, 4);
  r.allowed_texts = {"look"};
  expect_error(r, "allowed_texts need an engine with a tokenizer");
  EXPECT_EQ(e.submit(greedy({1, 2}, 3)).get().tokens.size(), 3u);
}

TEST(GenerationEngine, BudgetSmallerThanOneSequenceIsAConfigError) {
  auto opts = small_options();
  opts.kv_budget_tokens = 100;  // < max_seq_len 128
  try {
    GenerationEngine e(tiny_model(), tok(), opts);
    FAIL();
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("engine.kv_budget_tokens (100)"), std::string::npos) << err.what();
  }
}

// engine.static_decode_shapes: decode steps padded to power-of-two rows
// (pad rows in a scratch slot) and to a multiple of keys change nothing but
// rounding: the same greedy tokens (those of uncached decoding) and log-probs
// within float noise, while the batch shrinks from 5 rows to 1 as requests
// finish (padded to 8, 4, 2).
// Five greedy requests (prompts of 3 to 39 tokens, 6 to 26 new tokens: a
// batch that prefills, decodes many rows and ends with one) through engines
// a and b: the same tokens, also those of uncached decoding, and log-probs
// and entropies within float rounding.
void expect_same_greedy_generations(model::TransformerLM& m, GenerationEngine& a_engine, GenerationEngine& b_engine) {
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 5; ++i) reqs.push_back(greedy(prompt_of(3 + 9 * i, i), 6 + 5 * i));
  auto a = a_engine.generate_batch(reqs), b = b_engine.generate_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens) << "request " << i;
    EXPECT_EQ(a[i].tokens, greedy_without_cache(m, reqs[i].prompt, reqs[i].max_new_tokens)) << "request " << i;
    ASSERT_EQ(a[i].logprobs.size(), b[i].logprobs.size());
    for (size_t t = 0; t < a[i].logprobs.size(); ++t) {
      EXPECT_NEAR(a[i].logprobs[t], b[i].logprobs[t], 1e-5) << "request " << i << " token " << t;
      EXPECT_NEAR(a[i].entropies[t], b[i].entropies[t], 1e-5) << "request " << i << " token " << t;
    }
  }
}

TEST(GenerationEngine, StaticDecodeShapesGiveTheSameTokensAndLogprobs) {
  auto m = tiny_model();
  auto o = small_options();
  o.static_decode_shapes = true;
  GenerationEngine padded(m, tok(), o), plain(m, tok(), small_options());
  EXPECT_EQ(padded.num_slots(), plain.num_slots() - 1);  // one slot holds the pad rows
  expect_same_greedy_generations(m, padded, plain);
  EXPECT_GT(padded.stats().pad_rows, 0);
  EXPECT_EQ(plain.stats().pad_rows, 0);
}

// engine.fused_kernels (on by default, float32 CPU) against the ATen ops:
// the same greedy tokens (also uncached decoding's), log-probs and entropies
// within float rounding, over a batch that prefills, decodes many rows and
// ends with a lone row.
TEST(GenerationEngine, FusedKernelsGiveTheSameTokensAndLogprobsAsTheAtenOps) {
  auto m = tiny_model();
  auto o = small_options();
  o.fused_kernels = false;
  GenerationEngine fused(m, tok(), small_options()), aten(m, tok(), o);
  expect_same_greedy_generations(m, fused, aten);
}

TEST(GenerationEngine, StaticDecodeShapesWithOneSlotIsAConfigError) {
  auto m = tiny_model();
  auto o = small_options(/*slots=*/1);
  o.static_decode_shapes = true;
  try {
    GenerationEngine e(m, tok(), o);
    FAIL() << "no error";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("static_decode_shapes needs 2 KV slots"), std::string::npos) << err.what();
  }
}

TEST(GenerationEngine, StaticDecodeRowsArePowersOfTwoFromTwo) {
  EXPECT_EQ(static_decode_rows(1), 2);
  EXPECT_EQ(static_decode_rows(2), 2);
  EXPECT_EQ(static_decode_rows(3), 4);
  EXPECT_EQ(static_decode_rows(5), 8);
  EXPECT_EQ(static_decode_rows(64), 64);
  EXPECT_EQ(static_decode_rows(65), 128);
}
