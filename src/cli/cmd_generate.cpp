// `agentrl generate`: try a model from the command line. Loads an HF model
// directory and its tokenizer, runs one request through the GenerationEngine
// and prints the generated text (and, with --json, tokens / log-probs /
// entropies / finish reason as one JSON object).
#include <nlohmann/json.hpp>

#include <iostream>

#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/core/jsonl.h"
#include "agentrl/model/hf_checkpoint.h"
#include "agentrl/rollout/generation_engine.h"
#include "agentrl/text/chat_template.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::cli {
namespace {

struct GenerateArgs {
  std::string model_dir, prompt, device = "auto", dtype = "float32", chat_template = "auto", attention = "auto";
  bool chat = false, greedy = false, json = false;
  int64_t max_new_tokens = 128, top_k = 0;
  double temperature = 1.0, top_p = 1.0;
  uint64_t seed = 0;
  std::vector<std::string> stop;
};

void run(const GenerateArgs& a) {
  const auto device = model::resolve_device(a.device);
  const auto kernel = model::resolve_attention_kernel(a.attention);
  auto pre = model::load_pretrained(a.model_dir, device, model::resolve_dtype(a.dtype));
  pre.model->set_attention_kernel(kernel);
  auto tok = text::load_tokenizer(a.model_dir);
  rollout::GenerationRequest req;
  std::vector<int32_t> eos;
  if (a.chat) {
    auto tmpl = text::ChatTemplate::create(a.chat_template, tok, a.model_dir);
    req.prompt = tmpl->prompt_tokens({{"user", a.prompt}});
    eos = tmpl->stop_token_ids();
  } else {
    req.prompt = tok->encode(a.prompt, /*add_special_tokens=*/true);
  }
  if (pre.args.eos_token_id >= 0) eos.push_back(static_cast<int32_t>(pre.args.eos_token_id));
  if (req.prompt.empty()) throw UsageError("generate: --prompt encodes to no tokens");
  req.max_new_tokens = a.max_new_tokens;
  req.sampling.temperature = a.greedy ? 0.0 : a.temperature;
  req.sampling.top_k = a.top_k;
  req.sampling.top_p = a.top_p;
  req.sampling.seed = a.seed;
  req.stop_strings = a.stop;
  rollout::EngineOptions opts;
  opts.max_seq_len = std::min<int64_t>(pre.args.max_position_embeddings,
                                       static_cast<int64_t>(req.prompt.size()) + a.max_new_tokens + 1);
  opts.kv_budget_tokens = opts.max_seq_len;
  opts.max_batch_size = 1;
  rollout::GenerationEngine engine(pre.model, tok, opts, eos);
  auto r = engine.submit(req).get();
  if (a.json) {
    nlohmann::json j;
    j["prompt_tokens"] = req.prompt.size();
    j["tokens"] = r.tokens;
    j["logprobs"] = r.logprobs;
    j["entropies"] = r.entropies;
    j["text"] = r.text;
    j["finish_reason"] = rollout::finish_reason_name(r.finish_reason);
    j["prefill_seconds"] = r.prefill_seconds;
    j["decode_seconds"] = r.decode_seconds;
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << r.text << "\n";
    std::cerr << "[" << r.tokens.size() << " tokens, finish: " << rollout::finish_reason_name(r.finish_reason)
              << ", prefill " << r.prefill_seconds << " s, decode " << r.decode_seconds << " s]\n";
  }
}

CommandRegistrar reg(40, [](CLI::App& root) {
  auto a = std::make_shared<GenerateArgs>();
  auto* cmd = root.add_subcommand("generate", "Generate text from a model directory (KV-cache engine)");
  cmd->add_option("--model", a->model_dir, "Hugging Face model directory")->required();
  cmd->add_option("--prompt", a->prompt, "prompt text")->required();
  cmd->add_flag("--chat", a->chat, "wrap the prompt as a user message of the chat template");
  cmd->add_option("--chat-template", a->chat_template, "chatml | llama3 | plain | auto");
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "tokens to generate at most")->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", a->temperature, "sampling temperature (0 = greedy)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", a->top_p, "nucleus sampling mass")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--top-k", a->top_k, "top-k sampling (0 = off)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", a->seed, "sampling seed");
  cmd->add_flag("--greedy", a->greedy, "greedy decoding");
  cmd->add_option("--stop", a->stop, "stop string (repeatable)");
  cmd->add_option("--device", a->device, "cpu | cuda | auto");
  cmd->add_option("--dtype", a->dtype, "float32 | bfloat16");
  cmd->add_option("--attention", a->attention, "attention kernel: auto | eager | sdpa (as model.attention)");
  cmd->add_flag("--json", a->json, "print tokens, log-probs, entropies as JSON");
  cmd->callback([a] { run(*a); });
});

}  // namespace
}  // namespace agentrl::cli
