#include "agentrl/text/chat_template.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "tokenizer_config.h"

namespace agentrl::text {

ChatTemplate::ChatTemplate(std::shared_ptr<const Tokenizer> tokenizer) : tok_(std::move(tokenizer)) {}

void ChatTemplate::append_text(const std::string& text, std::vector<TokenId>& out) const {
  if (text.empty()) return;
  auto ids = tok_->encode(text, /*add_special_tokens=*/false, /*parse_special=*/false);
  out.insert(out.end(), ids.begin(), ids.end());
}

TokenId ChatTemplate::required_token(const std::string& piece) const {
  auto id = tok_->piece_to_id(piece);
  if (!id) throw ConfigError("chat template '" + name() + "' needs the token " + piece + ", which the tokenizer lacks");
  return *id;
}

namespace {
void check_role(const ChatMessage& m, size_t i) {
  if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool") {
    throw FormatError("chat message " + std::to_string(i) + " has role '" + m.role +
                      "' (expected system, user, assistant or tool)");
  }
}

using strings::trim;

bool is_tool(const std::vector<ChatMessage>& m, size_t i) { return i < m.size() && m[i].role == "tool"; }
}  // namespace

void ChatTemplate::render_range(const std::vector<ChatMessage>& messages, RenderedChat& out) const {
  for (size_t i = 0; i < messages.size(); ++i) {
    check_role(messages[i], i);
    if (messages[i].role != "assistant") {
      render_message(messages, i, out.ids);
      continue;
    }
    auto header = assistant_header();
    out.ids.insert(out.ids.end(), header.begin(), header.end());
    TokenSpan span;
    span.begin = out.ids.size();
    append_text(messages[i].content, out.ids);
    span.end = out.ids.size() + 1;  // + the stop token
    out.ids.insert(out.ids.end(), end_tokens_.begin(), end_tokens_.end());
    out.assistant_spans.push_back(span);
  }
}

RenderedChat ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  RenderedChat out;
  out.ids = conversation_start();
  render_range(messages, out);
  if (add_generation_prompt) {
    auto header = assistant_header();
    out.ids.insert(out.ids.end(), header.begin(), header.end());
  }
  return out;
}

std::vector<TokenId> ChatTemplate::prompt_tokens(const std::vector<ChatMessage>& messages) const {
  return render(messages, true).ids;
}

std::vector<TokenId> ChatTemplate::assistant_end_tokens() const { return end_tokens_; }

std::vector<TokenId> ChatTemplate::close_assistant_turn(const std::vector<TokenId>& generated) const {
  if (!generated.empty() && generated.back() == end_tokens_.front()) {
    return std::vector<TokenId>(end_tokens_.begin() + 1, end_tokens_.end());
  }
  return end_tokens_;
}

std::vector<TokenId> ChatTemplate::continuation_tokens(const std::vector<ChatMessage>& new_messages) const {
  RenderedChat out;
  render_range(new_messages, out);
  auto header = assistant_header();
  out.ids.insert(out.ids.end(), header.begin(), header.end());
  return out.ids;
}

std::vector<TokenId> ChatTemplate::stop_token_ids() const { return stop_ids_; }

namespace {

// Collects the stop tokens that exist in the tokenizer, without duplicates.
std::vector<TokenId> existing_stops(const Tokenizer& tok, std::initializer_list<const char*> pieces) {
  std::vector<TokenId> ids;
  auto add = [&](std::optional<TokenId> id) {
    if (id && std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
  };
  for (const char* p : pieces) add(tok.piece_to_id(p));
  add(tok.eos_id());
  return ids;
}

class ChatMlTemplate final : public ChatTemplate {
 public:
  explicit ChatMlTemplate(std::shared_ptr<const Tokenizer> tok) : ChatTemplate(std::move(tok)) {
    im_start_ = required_token("<|im_start|>");
    im_end_ = required_token("<|im_end|>");
    end_tokens_ = {im_end_};
    append_text("\n", end_tokens_);
    stop_ids_ = existing_stops(*tok_, {"<|im_end|>", "<|endoftext|>"});
  }
  std::string name() const override { return "chatml"; }

 protected:
  void render_message(const std::vector<ChatMessage>& m, size_t i, std::vector<TokenId>& out) const override {
    if (m[i].role != "tool") {
      out.push_back(im_start_);
      append_text(m[i].role + "\n" + m[i].content, out);
      close(out);
      return;
    }
    // Qwen2.5/Qwen3: a run of tool messages is one user turn.
    std::string text;
    if (i == 0 || !is_tool(m, i - 1)) {
      out.push_back(im_start_);
      text = "user";
    }
    text += "\n<tool_response>\n" + m[i].content + "\n</tool_response>";
    append_text(text, out);
    if (!is_tool(m, i + 1)) close(out);
  }
  std::vector<TokenId> assistant_header() const override {
    std::vector<TokenId> ids{im_start_};
    append_text("assistant\n", ids);
    return ids;
  }

 private:
  void close(std::vector<TokenId>& out) const { out.insert(out.end(), end_tokens_.begin(), end_tokens_.end()); }
  TokenId im_start_ = 0, im_end_ = 0;
};

class Llama3Template final : public ChatTemplate {
 public:
  explicit Llama3Template(std::shared_ptr<const Tokenizer> tok) : ChatTemplate(std::move(tok)) {
    bos_ = tok_->bos_id() ? *tok_->bos_id() : required_token("<|begin_of_text|>");
    start_ = required_token("<|start_header_id|>");
    end_header_ = required_token("<|end_header_id|>");
    end_tokens_ = {required_token("<|eot_id|>")};
    stop_ids_ = existing_stops(*tok_, {"<|eot_id|>", "<|end_of_text|>", "<|eom_id|>"});
  }
  std::string name() const override { return "llama3"; }

 protected:
  std::vector<TokenId> conversation_start() const override { return {bos_}; }
  void render_message(const std::vector<ChatMessage>& m, size_t i, std::vector<TokenId>& out) const override {
    header(m[i].role == "tool" ? "ipython" : m[i].role, out);
    append_text("\n\n" + trim(m[i].content), out);
    out.insert(out.end(), end_tokens_.begin(), end_tokens_.end());
  }
  std::vector<TokenId> assistant_header() const override {
    std::vector<TokenId> ids;
    header("assistant", ids);
    append_text("\n\n", ids);
    return ids;
  }

 private:
  void header(const std::string& role, std::vector<TokenId>& out) const {
    out.push_back(start_);
    append_text(role, out);
    out.push_back(end_header_);
  }
  TokenId bos_ = 0, start_ = 0, end_header_ = 0;
};

class PlainTemplate final : public ChatTemplate {
 public:
  explicit PlainTemplate(std::shared_ptr<const Tokenizer> tok) : ChatTemplate(std::move(tok)) {
    if (!tok_->eos_id()) throw ConfigError("chat template 'plain' needs a tokenizer with an EOS token");
    end_tokens_ = {*tok_->eos_id()};
    append_text("\n\n", end_tokens_);
    stop_ids_ = {*tok_->eos_id()};
  }
  std::string name() const override { return "plain"; }

 protected:
  void render_message(const std::vector<ChatMessage>& m, size_t i, std::vector<TokenId>& out) const override {
    static const char* labels[][2] = {{"system", "System"}, {"user", "User"}, {"tool", "Tool"}};
    for (const auto& l : labels) {
      if (m[i].role == l[0]) append_text(std::string(l[1]) + ": " + m[i].content + "\n\n", out);
    }
  }
  std::vector<TokenId> assistant_header() const override {
    std::vector<TokenId> ids;
    append_text("Assistant:", ids);
    return ids;
  }
};

}  // namespace

std::string ChatTemplate::detect(const std::string& model_dir) {
  const std::string path = model_dir + "/tokenizer_config.json";
  auto cfg = detail::read_tokenizer_config(path);
  if (!cfg.present) throw ConfigError("cannot detect the chat template: " + path + " does not exist; set the template to chatml, llama3 or plain");
  if (cfg.chat_template.empty()) throw ConfigError("cannot detect the chat template: " + path + " has no chat_template; set the template to chatml, llama3 or plain");
  if (cfg.chat_template.find("<|im_start|>") != std::string::npos) return "chatml";
  if (cfg.chat_template.find("<|start_header_id|>") != std::string::npos) return "llama3";
  throw ConfigError("cannot detect the chat template: the chat_template in " + path +
                    " is neither ChatML (<|im_start|>) nor Llama-3 (<|start_header_id|>); set it to chatml, llama3 or plain");
}

std::unique_ptr<ChatTemplate> ChatTemplate::create(const std::string& name, std::shared_ptr<const Tokenizer> tokenizer,
                                                   const std::string& model_dir_for_auto) {
  if (!tokenizer) throw ConfigError("chat template '" + name + "' needs a tokenizer");
  std::string resolved = name;
  if (name == "auto") {
    if (model_dir_for_auto.empty()) throw ConfigError("chat template 'auto' needs the model directory to detect it from");
    resolved = detect(model_dir_for_auto);
  }
  if (resolved == "chatml") return std::make_unique<ChatMlTemplate>(std::move(tokenizer));
  if (resolved == "llama3") return std::make_unique<Llama3Template>(std::move(tokenizer));
  if (resolved == "plain") return std::make_unique<PlainTemplate>(std::move(tokenizer));
  throw ConfigError("unknown chat template '" + name + "' (expected chatml, llama3, plain or auto)");
}

}  // namespace agentrl::text
