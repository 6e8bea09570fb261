// Chat templates: render system/user/assistant/tool messages to token ids,
// and say which tokens are assistant-generated (the loss mask of rollouts
// and SFT).
//
// Templates (name, what it reproduces):
//   chatml  Qwen2.5/Qwen3: "<|im_start|>{role}\n{content}<|im_end|>\n";
//           tool messages become a user turn of <tool_response> blocks
//           (consecutive tool messages share one turn), as Qwen's templates do.
//           No default system prompt is inserted; Qwen3's <think> handling
//           of history is not applied (what the policy generated stays as is).
//   llama3  Llama-3: <|begin_of_text|>, then
//           "<|start_header_id|>{role}<|end_header_id|>\n\n{content|trim}<|eot_id|>";
//           the tool role is rendered as "ipython" (Llama-3.1 convention).
//   plain   "System: ...\n\nUser: ...\n\nTool: ...\n\nAssistant:{content}<eos>\n\n"
//           for tokenizers without a chat format; needs an EOS token.
//   auto    chosen from tokenizer_config.json's chat_template in the model
//           directory: "<|im_start|>" -> chatml, "<|start_header_id|>" -> llama3.
//
// Token exactness: ids are built piece by piece, never by re-tokenizing a
// rendered string, so an agent loop in "full" context mode can extend a
// conversation token by token and still equal a fresh render:
//   render(msgs + [assistant a] + more).ids ==
//     prompt_tokens(msgs) + encode(a) + assistant_end_tokens() + continuation_tokens(more)
// Text outside assistant content is tokenized between special tokens the way
// HF's apply_chat_template(tokenize=True) does (so prompts equal HF's); the
// assistant content is tokenized on its own (HF tokenizes "assistant\n" and
// the content together, which can differ at that boundary, e.g. when the
// content starts with a newline). Message content is encoded with
// parse_special=false: text from an environment cannot forge turn markers.
//
// Assistant spans: [first content token, the stop token that closes the
// turn] inclusive, i.e. the content plus <|im_end|> / <|eot_id|> / <eos>,
// but not the "\n" ChatML puts after <|im_end|> (the model never generates
// it). This is what HF's {% generation %} marks in TRL-style templates.
//
// Thread-safety: immutable after create(); all methods may be called
// concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/text/tokenizer.h"

namespace agentrl::text {

struct ChatMessage {
  std::string role;  // system | user | assistant | tool
  std::string content;
};

struct TokenSpan {
  size_t begin = 0, end = 0;  // [begin, end) token indices
  bool operator==(const TokenSpan& o) const { return begin == o.begin && end == o.end; }
};

struct RenderedChat {
  std::vector<TokenId> ids;
  std::vector<TokenSpan> assistant_spans;  // one per assistant message, in order
};

class ChatTemplate {
 public:
  virtual ~ChatTemplate() = default;
  ChatTemplate(const ChatTemplate&) = delete;
  ChatTemplate& operator=(const ChatTemplate&) = delete;

  // name: chatml | llama3 | plain | auto (auto reads
  // model_dir_for_auto/tokenizer_config.json). Throws ConfigError for an
  // unknown name, an undetectable template, or a tokenizer that lacks the
  // template's special tokens.
  static std::unique_ptr<ChatTemplate> create(const std::string& name, std::shared_ptr<const Tokenizer> tokenizer,
                                              const std::string& model_dir_for_auto = "");
  // "chatml" or "llama3" from model_dir/tokenizer_config.json; ConfigError
  // naming the file when there is no chat_template or it is not recognised.
  static std::string detect(const std::string& model_dir);

  // Throws FormatError for a message whose role is not one of the four.
  RenderedChat render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  // render(messages, true).ids.
  std::vector<TokenId> prompt_tokens(const std::vector<ChatMessage>& messages) const;
  // What closes an assistant turn, starting with the stop token
  // (ChatML: <|im_end|> "\n"; Llama-3: <|eot_id|>; plain: <eos> "\n\n").
  std::vector<TokenId> assistant_end_tokens() const;
  // Tokens to append after the policy generated `generated` for a turn: the
  // rest of assistant_end_tokens() when it stopped on its first token, all
  // of them otherwise (stopped on another stop token, or truncated).
  std::vector<TokenId> close_assistant_turn(const std::vector<TokenId>& generated) const;
  // Messages that follow an assistant turn (tool results, user), plus the
  // generation prompt of the next assistant turn.
  std::vector<TokenId> continuation_tokens(const std::vector<ChatMessage>& new_messages) const;
  // Tokens that end generation: <|im_end|>, <|endoftext|>, <|eot_id|>,
  // <|end_of_text|>, <|eom_id|>, the tokenizer's EOS (those that exist).
  std::vector<TokenId> stop_token_ids() const;
  virtual std::string name() const = 0;

 protected:
  explicit ChatTemplate(std::shared_ptr<const Tokenizer> tokenizer);

  // Tokens at the very start of a conversation (Llama-3's BOS).
  virtual std::vector<TokenId> conversation_start() const { return {}; }
  // Appends non-assistant message i; may look at its neighbours (tool runs).
  virtual void render_message(const std::vector<ChatMessage>& messages, size_t i, std::vector<TokenId>& out) const = 0;
  // The assistant header (= generation prompt).
  virtual std::vector<TokenId> assistant_header() const = 0;

  // Helpers for subclasses.
  void append_text(const std::string& text, std::vector<TokenId>& out) const;
  TokenId required_token(const std::string& piece) const;  // ConfigError if absent

  std::shared_ptr<const Tokenizer> tok_;
  std::vector<TokenId> end_tokens_;
  std::vector<TokenId> stop_ids_;

 private:
  void render_range(const std::vector<ChatMessage>& messages, RenderedChat& out) const;
};

}  // namespace agentrl::text
