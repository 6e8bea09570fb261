// Test doubles for the rollout layer: a byte-level tokenizer with ChatML
// specials, a counting env (and throwing / hanging variants), and a
// scripted generator that records every request it receives.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "agentrl/envs/env.h"
#include "agentrl/model/transformer.h"
#include "agentrl/rollout/agent_loop.h"
#include "agentrl/rollout/generator.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::testing {

// ids 0..255 = bytes; 256 <|im_start|>, 257 <|im_end|>, 258 <|endoftext|>.
class ByteTokenizer : public text::Tokenizer {
 public:
  static constexpr int32_t kImStart = 256, kImEnd = 257, kEot = 258;
  std::vector<text::TokenId> encode(std::string_view s, bool, bool parse_special) const override {
    std::vector<text::TokenId> out;
    for (size_t i = 0; i < s.size();) {
      if (parse_special) {
        bool hit = false;
        for (int32_t id : {kImStart, kImEnd, kEot}) {
          const std::string p = special(id);
          if (s.compare(i, p.size(), p) == 0) {
            out.push_back(id);
            i += p.size();
            hit = true;
            break;
          }
        }
        if (hit) continue;
      }
      out.push_back(static_cast<unsigned char>(s[i++]));
    }
    return out;
  }
  std::string decode(const std::vector<text::TokenId>& ids, bool skip_special) const override {
    std::string s;
    for (auto id : ids)
      if (!(skip_special && is_special(id))) s += token_bytes(id);
    return s;
  }
  std::string token_bytes(text::TokenId id) const override {
    return id < 256 ? std::string(1, static_cast<char>(id)) : special(id);
  }
  std::string id_to_piece(text::TokenId id) const override { return token_bytes(id); }
  std::optional<text::TokenId> piece_to_id(const std::string& p) const override {
    for (int32_t id : {kImStart, kImEnd, kEot})
      if (p == special(id)) return id;
    if (p.size() == 1) return static_cast<unsigned char>(p[0]);
    return std::nullopt;
  }
  int32_t vocab_size() const override { return 259; }
  bool is_special(text::TokenId id) const override { return id >= 256; }
  std::optional<text::TokenId> bos_id() const override { return std::nullopt; }
  std::optional<text::TokenId> eos_id() const override { return kImEnd; }
  std::optional<text::TokenId> pad_id() const override { return kEot; }

 private:
  static std::string special(int32_t id) {
    return id == kImStart ? "<|im_start|>" : id == kImEnd ? "<|im_end|>" : "<|endoftext|>";
  }
};

// An agent context over ByteTokenizer + ChatML in `mode` (full | window),
// with a roomy context limit and a 1 s episode timeout.
inline std::shared_ptr<rollout::AgentContext> make_byte_agent_context(const std::string& mode) {
  auto ctx = std::make_shared<rollout::AgentContext>();
  ctx->rollout.context_mode = mode;
  ctx->rollout.max_context_tokens = 100000;
  ctx->rollout.episode_timeout_s = 1.0;
  ctx->tokenizer = std::make_shared<ByteTokenizer>();
  ctx->chat = text::ChatTemplate::create("chatml", ctx->tokenizer, "");
  return ctx;
}

// Counts up to a target: action "inc" adds one, anything else is invalid.
class CountingEnv : public envs::Env {
 public:
  enum class Fault { kNone, kThrowOnStep, kHangOnStep };
  // The fault hits episodes of task `faulty_task` only.
  explicit CountingEnv(Fault fault = Fault::kNone, int64_t faulty_task = -1)
      : fault_(fault), faulty_task_(faulty_task) {}
  std::string reset(const envs::Task& task, uint64_t) override {
    target_ = 2 + static_cast<int>(task.index % 3);
    count_ = 0;
    faulty_ = task.index == faulty_task_;
    return "count=0";
  }
  envs::StepResult step(const std::string& action) override {
    if (faulty_ && fault_ == Fault::kThrowOnStep) throw std::runtime_error("simulated env crash");
    if (faulty_ && fault_ == Fault::kHangOnStep) std::this_thread::sleep_for(std::chrono::seconds(3));
    envs::StepResult r;
    if (action == "inc") {
      ++count_;
    } else {
      r.info.invalid_action = true;
    }
    r.observation = "count=" + std::to_string(count_);
    r.done = count_ >= target_;
    r.info.success = r.done;
    r.info.score = r.done ? 1.0 : 0.0;
    r.reward = r.done ? 1.0 : 0.0;
    return r;
  }
  std::vector<std::string> admissible_actions() const override { return {"inc"}; }
  std::string task_description() const override { return "count to " + std::to_string(target_); }
  std::optional<std::string> expert_action() override {
    if (count_ >= target_) return std::nullopt;
    return std::string("inc");
  }
  int max_steps() const override { return 10; }

 private:
  Fault fault_;
  int64_t faulty_task_;
  bool faulty_ = false;
  int target_ = 0, count_ = 0;
};

class CountingTasks : public envs::TaskSource {
 public:
  std::vector<std::string> splits() const override { return {"train", "test"}; }
  size_t size(const std::string&) const override { return 6; }
  envs::Task get(const std::string& split, size_t i) const override {
    return {"task-" + std::to_string(i), split, static_cast<int64_t>(i), i % 2 ? "odd" : "even"};
  }
};

class CountingSuite : public envs::EnvSuite {
 public:
  // Episodes of task `faulty_task` get the fault.
  explicit CountingSuite(CountingEnv::Fault fault = CountingEnv::Fault::kNone, int64_t faulty_task = -1)
      : fault_(fault), faulty_task_(faulty_task) {}
  const std::string& name() const override { return name_; }
  const envs::TaskSource& tasks() const override { return tasks_; }
  std::unique_ptr<envs::Env> make_env() const override { return std::make_unique<CountingEnv>(fault_, faulty_task_); }
  std::string eval_split() const override { return "test"; }

 private:
  std::string name_ = "counting";
  CountingTasks tasks_;
  CountingEnv::Fault fault_;
  int64_t faulty_task_;
};

// Answers every request with `response` + <|im_end|>; records requests.
class ScriptedGenerator : public rollout::Generator {
 public:
  explicit ScriptedGenerator(std::string response = "<think>go</think><action>inc</action>")
      : response_(std::move(response)) {}
  std::future<rollout::GenerationResult> submit(rollout::GenerationRequest req) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests.push_back(req);
    }
    rollout::GenerationResult r;
    for (unsigned char c : response_) r.tokens.push_back(c);
    r.tokens.push_back(ByteTokenizer::kImEnd);
    r.text = response_;
    for (size_t i = 0; i < r.tokens.size(); ++i) {
      r.logprobs.push_back(-0.25f * static_cast<float>(i % 4));
      r.entropies.push_back(0.5f + 0.1f * static_cast<float>(i % 3));
    }
    r.finish_reason = rollout::FinishReason::kEos;
    std::promise<rollout::GenerationResult> p;
    p.set_value(r);
    return p.get_future();
  }
  std::mutex mu_;
  std::vector<rollout::GenerationRequest> requests;

 private:
  std::string response_;
};

// A randomly initialised Qwen2-style policy over ByteTokenizer's vocabulary
// (2 layers, GQA 4/2 heads, attention bias), in eval mode.
inline model::TransformerLM tiny_byte_policy(int64_t hidden, int64_t intermediate, uint64_t seed, double std) {
  model::ModelArgs a;
  a.model_type = "qwen2";
  a.vocab_size = ByteTokenizer().vocab_size();
  a.hidden_size = hidden;
  a.intermediate_size = intermediate;
  a.num_hidden_layers = 2;
  a.num_attention_heads = 4;
  a.num_key_value_heads = 2;
  a.attention_bias = true;
  model::TransformerLM m(a);
  m->init_weights(seed, std);
  m->eval();
  return m;
}

}  // namespace agentrl::testing
