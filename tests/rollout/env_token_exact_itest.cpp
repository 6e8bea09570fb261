// Token-exactness of trajectories on the four real envs (ALFWorld, WebShop,
// Deep Search, code tool), in every context mode (inline: the tool envs): a
// tiny random policy plays
// episodes through the real GenerationEngine and RolloutPool, and a recording
// Generator in between keeps every request and result. The trajectory must
// reconstruct exactly what the engine consumed and produced (no text is ever
// re-tokenised), its training rows must carry loss mask 1 exactly on those
// generated tokens with the engine's behaviour log-probs, the trainer's
// recomputation (model::logprobs_and_entropy) must agree with them, and an
// observation over the token budget must show the truncation marker.
#include <gtest/gtest.h>

#include <iostream>
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "agentrl/envs/alfworld/alfworld_env.h"
#include "agentrl/envs/codetool/codetool_env.h"
#include "agentrl/envs/deepsearch/deepsearch_env.h"
#include "agentrl/envs/registry.h"
#include "agentrl/envs/webshop/webshop_env.h"
#include "agentrl/model/logprobs.h"
#include "agentrl/rollout/batch_builder.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/rollout/rollout_pool.h"
#include "rollout/rollout_test_support.h"

namespace agentrl::rollout {
namespace {

namespace fs = std::filesystem;
using testing::ByteTokenizer;

// Engine log-probs come from cached, ragged-batch decoding; the trainer's
// from one uncached forward over the padded row. Both are float32 on the
// same weights, so they agree to rounding: 1e-4 (nats) absolute.
constexpr double kLogprobTolerance = 1e-4;
// bf16 weights: both sides compute the lm head in fp32 (logits_fp32 and
// logprobs_and_entropy), so what differs is the bf16 trunk's rounding of a
// cached ragged batch vs one padded forward. Measured 2026-12-03 (max / mean
// nats): alfworld and webshop 5e-7 / 1e-7, deepsearch 0.042 / 0.007, codetool
// 0.073 / 0.017 — a bf16 hidden state carries ~0.4% relative error, the
// size of these differences on this sharp random policy.
constexpr double kBf16LogprobTolerance = 0.1;
constexpr double kBf16MeanLogprobTolerance = 0.03;
const char* const kTruncationMarker = "...[observation truncated]";

// Passes requests through to the engine and records each one with its result.
class RecordingGenerator : public Generator {
 public:
  struct Call {
    GenerationRequest request;
    GenerationResult result;
  };
  explicit RecordingGenerator(Generator& inner) : inner_(inner) {}

  std::future<GenerationResult> submit(GenerationRequest request) override {
    auto inner = std::make_shared<std::future<GenerationResult>>(inner_.submit(request));
    // Deferred: runs on the caller's get(), which the pool's episode thread
    // calls right away, so requests still reach the engine concurrently.
    return std::async(std::launch::deferred, [this, request, inner] {
      GenerationResult r = inner->get();
      record(request, r);
      return r;
    });
  }
  std::vector<GenerationResult> generate_batch(std::vector<GenerationRequest> requests) override {
    auto results = inner_.generate_batch(requests);
    for (size_t i = 0; i < requests.size(); ++i) record(requests[i], results[i]);
    return results;
  }
  void release(const std::string& cache_key) override { inner_.release(cache_key); }

  // Calls of one episode (GenerationRequest::order identifies it), in order.
  std::vector<Call> calls_of(int64_t order) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = calls_.find(order);
    return it == calls_.end() ? std::vector<Call>{} : it->second;
  }

 private:
  void record(const GenerationRequest& req, const GenerationResult& res) {
    std::lock_guard<std::mutex> g(mu_);
    calls_[req.order].push_back({req, res});
  }
  Generator& inner_;
  mutable std::mutex mu_;
  std::map<int64_t, std::vector<Call>> calls_;
};

// A random policy that ends a good share of its turns on its own
// (<|im_end|>), so both ways a turn ends are covered (EOS: the template
// closes the turn with "\n" only; max_new_tokens: the template adds
// "<|im_end|>\n"). The lm-head row of <|im_end|> is set along the mean final
// hidden state, scaled until <|im_end|> has ~7% probability on random printable text.
model::TransformerLM tiny_policy() {
  model::TransformerLM m = testing::tiny_byte_policy(32, 64, /*seed=*/3, /*std=*/0.3);
  torch::NoGradGuard ng;
  torch::manual_seed(5);
  const int64_t T = 256;
  auto ids = torch::randint(32, 127, {1, T}, torch::TensorOptions().dtype(torch::kInt64));  // printable text
  auto pos = torch::arange(T, torch::TensorOptions().dtype(torch::kInt64)).unsqueeze(0);
  auto h = m->forward_hidden(ids, pos, torch::ones({1, T}, torch::TensorOptions().dtype(torch::kBool)))[0];
  auto dir = h.mean(0);
  dir = dir / dir.norm();
  auto w = m->lm_head_weight();
  double lo = 0, hi = 200;
  for (int it = 0; it < 40; ++it) {
    const double mid = (lo + hi) / 2;
    w[ByteTokenizer::kImEnd].copy_(mid * dir);
    const double p = torch::softmax(m->logits(h), -1).select(1, ByteTokenizer::kImEnd).mean().item<double>();
    (p < 0.07 ? lo : hi) = mid;
  }
  w[ByteTokenizer::kImEnd].copy_(lo * dir);
  return m;
}

fs::path scratch_dir(const std::string& env) {
  return fs::temp_directory_path() / ("agentrl_token_exact_" + std::to_string(::getpid()) + "_" + env);
}

// The env's suite, small, from its config section as the trainer builds it;
// nullptr when the env cannot run here (no sandbox for the code tool).
std::shared_ptr<envs::EnvSuite> small_suite(const std::string& env) {
  config::ExtensionSections sections;
  if (env == "alfworld") {
    auto& c = sections.as<envs::alfworld::AlfworldConfig>("alfworld");
    c.train_size = 8;
  } else if (env == "webshop") {
    auto& c = sections.as<envs::webshop::WebshopConfig>("webshop");
    c.num_products = 200;
    c.num_goals = 30;
    c.test_goals = 10;
    c.eval_goals = 10;
    c.index_dir = scratch_dir(env).string();
  } else if (env == "deepsearch") {
    auto& c = sections.as<envs::deepsearch::DeepSearchConfig>("deepsearch");
    c.world.options.people = 200;
    c.world.options.cities = 20;
    c.world.options.organisations = 40;
    c.world.options.works = 80;
    c.world.options.questions = 400;
    c.retriever.cache_dir = scratch_dir(env).string();
  } else if (env == "codetool" || env == "codetool_simpletir") {
    if (!envs::codetool::probe_sandbox(envs::codetool::SandboxConfig{}).available) return nullptr;
    auto& c = sections.as<envs::codetool::CodeToolConfig>("codetool");
    c.builtin_train = 4;
    c.builtin_test = 4;
    // SimpleTIR's protocol: turns end at the engine's stop regex.
    if (env == "codetool_simpletir") c.protocol = "simpletir";
    return envs::make_env_suite("codetool", sections);
  }
  return envs::make_env_suite(env, sections);
}

std::shared_ptr<AgentContext> agent_context(const std::string& env, const std::string& mode) {
  auto ctx = std::make_shared<AgentContext>();
  ctx->rollout.context_mode = mode;
  ctx->rollout.window_turns = 2;
  ctx->rollout.max_turns = 3;
  ctx->rollout.max_new_tokens = 12;
  ctx->rollout.max_context_tokens = 4096;
  ctx->rollout.observation_token_budget = 24;  // every env's first observation is longer
  ctx->rollout.episode_timeout_s = 60;
  // Lock-step (generate_batch) in full mode, throughput (submit) in window
  // mode: both engine paths are covered.
  ctx->rollout.deterministic = mode != "window";
  if (env != "alfworld" && env != "webshop") {  // the tool envs' configs: the observation is the prompt
    ctx->prompt.system = "";
    ctx->prompt.first_user = ctx->prompt.next_user = "{observation}";
  }
  ctx->tokenizer = std::make_shared<ByteTokenizer>();
  ctx->chat = text::ChatTemplate::create("chatml", ctx->tokenizer, "");
  ctx->sampling.temperature = 1.0;
  return ctx;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class EnvTokenExactness : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {
 protected:
  void SetUp() override {
    const auto& [env, mode, dtype] = GetParam();
    if (dtype == "bf16") policy_->to(torch::kBFloat16);
    suite_ = small_suite(env);
    if (!suite_) GTEST_SKIP() << env << ": bubblewrap sandbox unusable here";
    ctx_ = agent_context(env, mode);
    engine_ = std::make_unique<GenerationEngine>(policy_, ctx_->tokenizer, engine_options(),
                                                 ctx_->chat->stop_token_ids());
    recorder_ = std::make_unique<RecordingGenerator>(*engine_);
    std::vector<envs::Task> tasks;
    for (size_t i = 0; i < 2; ++i) tasks.push_back(suite_->tasks().get(suite_->train_split(), i));
    specs_ = make_group_episodes(tasks, 2, 11, 0);
    RolloutPool pool(*recorder_, suite_, ctx_);
    trajs_ = pool.run(specs_);
    ASSERT_EQ(trajs_.size(), specs_.size());
    for (const auto& t : trajs_) ASSERT_FALSE(t.failed) << t.episode_id << ": " << t.error;
  }
  void TearDown() override {
    engine_.reset();
    fs::remove_all(scratch_dir(std::get<0>(GetParam())));
  }
  static EngineOptions engine_options() {
    EngineOptions o;
    o.max_seq_len = 4096;
    o.kv_budget_tokens = 8 * o.max_seq_len;
    o.max_batch_size = 8;
    o.prefill_chunk_tokens = 4096;
    return o;
  }
  // One sequence per episode (full and inline modes).
  bool full() const { return std::get<1>(GetParam()) != "window"; }
  bool inline_mode() const { return std::get<1>(GetParam()) == "inline"; }
  std::vector<RecordingGenerator::Call> calls(size_t episode) const {
    const auto& s = specs_[episode];
    return recorder_->calls_of(s.group_id * 1000003 + s.sample_index);  // EpisodeRunner's request order
  }

  model::TransformerLM policy_ = tiny_policy();
  std::shared_ptr<envs::EnvSuite> suite_;
  std::shared_ptr<AgentContext> ctx_;
  std::unique_ptr<GenerationEngine> engine_;
  std::unique_ptr<RecordingGenerator> recorder_;
  std::vector<EpisodeSpec> specs_;
  std::vector<Trajectory> trajs_;
};

TEST_P(EnvTokenExactness, TrajectoryTokensAreExactlyWhatTheEngineConsumedAndProduced) {
  int eos_turns = 0, length_turns = 0, dropped_eos = 0;
  for (size_t e = 0; e < trajs_.size(); ++e) {
    const Trajectory& t = trajs_[e];
    const auto c = calls(e);
    ASSERT_FALSE(t.turns.empty()) << e;
    ASSERT_EQ(c.size(), t.turns.size()) << "one engine call per turn, episode " << e;
    std::vector<int32_t> before;  // full mode: the sequence before turn k
    for (size_t k = 0; k < t.turns.size(); ++k) {
      const Turn& turn = t.turns[k];
      const auto& prompt = c[k].request.prompt;
      EXPECT_EQ(prompt, full() ? concat(before, turn.context_tokens) : turn.context_tokens) << e << "/" << k;
      // Inline mode: a turn the episode continues after loses the
      // end-of-turn token it ended with (the tool output continues the
      // message); everything else is the engine's output as it came.
      auto tokens = c[k].result.tokens;
      auto logprobs = c[k].result.logprobs;
      auto entropies = c[k].result.entropies;
      if (inline_mode() && k + 1 < t.turns.size() && c[k].result.finish_reason == FinishReason::kEos) {
        EXPECT_EQ(tokens.back(), ByteTokenizer::kImEnd);
        tokens.pop_back(), logprobs.pop_back(), entropies.pop_back();
        ++dropped_eos;
      }
      EXPECT_EQ(turn.generated_tokens, tokens) << e << "/" << k;
      EXPECT_EQ(turn.logprobs, logprobs) << e << "/" << k;
      EXPECT_EQ(turn.entropies, entropies) << e << "/" << k;
      EXPECT_EQ(turn.response, c[k].result.text) << e << "/" << k;
      // Inline mode: a turn of nothing but <|im_end|> keeps no token.
      if (!inline_mode()) {
        ASSERT_FALSE(turn.generated_tokens.empty());
      }
      ASSERT_EQ(turn.logprobs.size(), turn.generated_tokens.size());
      ASSERT_EQ(turn.entropies.size(), turn.generated_tokens.size());
      if (!full()) {
        EXPECT_EQ(sequence_tokens(t, static_cast<int64_t>(k)), concat(prompt, turn.generated_tokens)) << e << "/" << k;
      }
      if (inline_mode() && k > 0) {
        // The env's output tokenised on its own (cut to the budget), with no
        // chat-turn tokens around it.
        auto spliced = ctx_->tokenizer->encode(turn.observation_before, false, false);
        if (spliced.size() > static_cast<size_t>(ctx_->rollout.observation_token_budget))
          spliced.resize(static_cast<size_t>(ctx_->rollout.observation_token_budget));
        EXPECT_EQ(turn.context_tokens, spliced) << e << "/" << k;
        for (int32_t id : turn.context_tokens) {
          EXPECT_NE(id, ByteTokenizer::kImStart) << e << "/" << k;
          EXPECT_NE(id, ByteTokenizer::kImEnd) << e << "/" << k;
        }
        // The previous turn's text runs on into the spliced output.
        if (!t.turns[k - 1].generated_tokens.empty()) {
          EXPECT_NE(t.turns[k - 1].generated_tokens.back(), ByteTokenizer::kImEnd) << e << "/" << k;
        }
      } else if (full() && k > 0) {
        // The template closes the previous turn: only "\n" after a generated
        // <|im_end|>, the whole "<|im_end|>\n" after a cut-off turn.
        const bool ended = t.turns[k - 1].generated_tokens.back() == ByteTokenizer::kImEnd;
        EXPECT_EQ(turn.context_tokens.at(0), ended ? '\n' : ByteTokenizer::kImEnd) << e << "/" << k;
      }
      eos_turns += c[k].result.finish_reason == FinishReason::kEos;
      length_turns += c[k].result.finish_reason == FinishReason::kLength;
      before = concat(concat(before, turn.context_tokens), turn.generated_tokens);
    }
    // Full mode: the training sequence is the last prompt plus its answer.
    if (full()) {
      EXPECT_EQ(sequence_tokens(t), concat(c.back().request.prompt, c.back().result.tokens)) << e;
    }
  }
  // Both ways a turn ends occur (tiny_policy's steered <|im_end|>).
  EXPECT_GT(eos_turns, 0);
  EXPECT_GT(length_turns, 0);
  // Deep Search goes on after an invalid turn (the code tool ends the
  // episode on one: a void turn), so there the dropped token must occur.
  if (inline_mode() && std::get<0>(GetParam()) == "deepsearch") {
    EXPECT_GT(dropped_eos, 0) << "the dropped end-of-turn token was not exercised";
  }
}

TEST_P(EnvTokenExactness, LossMaskIsOneExactlyOnGeneratedTokensWithBehaviourLogprobs) {
  auto batch = build_train_batch(trajs_);
  int64_t expected_rows = 0;
  for (const auto& t : trajs_) expected_rows += full() ? 1 : static_cast<int64_t>(t.turns.size());
  ASSERT_EQ(batch.rows(), expected_rows);
  for (int64_t n = 0; n < batch.rows(); ++n) {
    const Trajectory& t = trajs_[static_cast<size_t>(batch.trajectory_of_row[static_cast<size_t>(n)])];
    const int64_t row_turn = batch.turn_of_row[static_cast<size_t>(n)];
    auto ids = batch.input_ids[n];
    auto mask = batch.loss_mask[n];
    auto blp = batch.behaviour_logprobs[n];
    int64_t pos = 0;
    for (size_t k = 0; k < t.turns.size(); ++k) {
      if (!full() && static_cast<int64_t>(k) != row_turn) continue;
      const Turn& turn = t.turns[k];
      for (int32_t id : turn.context_tokens) {
        EXPECT_EQ(ids[pos].item<int64_t>(), id) << n << "@" << pos;
        EXPECT_EQ(mask[pos].item<float>(), 0.f) << "context token " << n << "@" << pos;
        ++pos;
      }
      for (size_t j = 0; j < turn.generated_tokens.size(); ++j, ++pos) {
        EXPECT_EQ(ids[pos].item<int64_t>(), turn.generated_tokens[j]) << n << "@" << pos;
        EXPECT_EQ(mask[pos].item<float>(), 1.f) << "generated token " << n << "@" << pos;
        EXPECT_EQ(blp[pos].item<float>(), turn.logprobs[j]) << n << "@" << pos;
      }
    }
    EXPECT_EQ(batch.attention_mask[n].sum().item<int64_t>(), pos) << "row " << n << " is exactly the sequence";
    EXPECT_EQ(mask.slice(0, pos).sum().item<float>(), 0.f) << "no loss on padding";
  }
}

TEST_P(EnvTokenExactness, TrainerRecomputedLogprobsMatchTheBehaviourLogprobs) {
  auto batch = build_train_batch(trajs_);
  torch::NoGradGuard ng;
  auto stats = model::logprobs_and_entropy(policy_, batch.input_ids, batch.attention_mask, batch.position_ids);
  auto on = batch.loss_mask > 0;
  ASSERT_GT(on.sum().item<int64_t>(), 0);
  const double lp_err = (stats.logprobs.masked_select(on) - batch.behaviour_logprobs.masked_select(on)).abs().max().item<double>();
  const double ent_err = (stats.entropy.masked_select(on) - batch.rollout_entropies.masked_select(on)).abs().max().item<double>();
  const double tol = std::get<2>(GetParam()) == "bf16" ? kBf16LogprobTolerance : kLogprobTolerance;
  EXPECT_LT(lp_err, tol);
  EXPECT_LT(ent_err, tol);
  RecordProperty("max_logprob_error", std::to_string(lp_err));
  const double lp_mean = (stats.logprobs.masked_select(on) - batch.behaviour_logprobs.masked_select(on)).abs().mean().item<double>();
  std::cout << "max |logprob error| " << lp_err << ", mean " << lp_mean << ", max |entropy error| " << ent_err
            << std::endl;
  EXPECT_LT(lp_mean, std::get<2>(GetParam()) == "bf16" ? kBf16MeanLogprobTolerance : kLogprobTolerance);
  // Not vacuous: sampled tokens of a random policy are far from certain.
  EXPECT_LT(batch.behaviour_logprobs.masked_select(on).mean().item<double>(), -1.0);
}

TEST_P(EnvTokenExactness, LongObservationIsTruncatedWithAVisibleMarker) {
  for (const auto& t : trajs_) {
    const Turn& first = t.turns.front();
    ASSERT_GT(ctx_->tokenizer->encode(first.observation_before, false, false).size(),
              static_cast<size_t>(ctx_->rollout.observation_token_budget));
    EXPECT_NE(first.user_message.find(kTruncationMarker), std::string::npos) << first.user_message;
    // The marker is in the tokens the model saw, not only in the display text.
    EXPECT_NE(ctx_->tokenizer->decode(first.context_tokens, false).find(kTruncationMarker), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealEnvs, EnvTokenExactness,
    ::testing::Combine(::testing::Values("alfworld", "webshop", "deepsearch", "codetool"),
                       ::testing::Values("full", "window"), ::testing::Values("fp32")),
    [](const auto& p) { return std::get<0>(p.param) + "_" + std::get<1>(p.param); });

// Inline mode (Search-R1, SimpleTIR): the tool envs' output spliced into the
// one assistant message.
INSTANTIATE_TEST_SUITE_P(
    ToolEnvsInline, EnvTokenExactness,
    ::testing::Combine(::testing::Values("deepsearch", "codetool", "codetool_simpletir"), ::testing::Values("inline"),
                       ::testing::Values("fp32", "bf16")),
    [](const auto& p) { return std::get<0>(p.param) + "_" + std::get<1>(p.param) + "_" + std::get<2>(p.param); });

// The same checks with bf16 weights (the GPU configs' dtype).
INSTANTIATE_TEST_SUITE_P(
    RealEnvsBf16, EnvTokenExactness,
    ::testing::Combine(::testing::Values("alfworld", "webshop", "deepsearch", "codetool"), ::testing::Values("full"),
                       ::testing::Values("bf16")),
    [](const auto& p) { return std::get<0>(p.param) + "_" + std::get<1>(p.param) + "_bf16"; });

}  // namespace
}  // namespace agentrl::rollout
