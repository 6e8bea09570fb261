// `agentrl tokenizer encode|decode|train`: thin wrappers over text/ (the
// logic and its tests live in text/token_ids_io.* and
// text/sentencepiece_tokenizer.*).
#include <iostream>
#include <sstream>

#include "agentrl/cli/command.h"
#include "agentrl/text/sentencepiece_tokenizer.h"
#include "agentrl/text/token_ids_io.h"
#include "agentrl/text/tokenizer.h"

namespace agentrl::cli {
namespace {

struct TokenizerArgs {
  std::string dir;
  std::string text;
  std::string ids;
  bool add_special = false;
  bool no_parse_special = false;
  bool skip_special = false;
  std::string input;
  int vocab_size = 0;
  std::string out;
  std::string model_type = "unigram";
};

void add_encode(CLI::App* group, TokenizerArgs& a) {
  auto* cmd = group->add_subcommand("encode", "Print token ids as one JSON array per input line (stdin or --text)");
  cmd->add_option("--tokenizer", a.dir, "model directory with tokenizer.json or tokenizer.model")->required();
  cmd->add_option("--text", a.text, "text to encode (default: each line of stdin)");
  cmd->add_flag("--add-special-tokens", a.add_special, "add BOS/EOS as the tokenizer's post-processor does");
  cmd->add_flag("--no-parse-special", a.no_parse_special, "treat special tokens written in the text as plain text");
  cmd->callback([&a, cmd] {
    auto tok = text::load_tokenizer(a.dir);
    text::EncodeOptions opt{a.add_special, !a.no_parse_special};
    if (cmd->count("--text")) {
      std::cout << text::ids_to_json(tok->encode(a.text, opt.add_special_tokens, opt.parse_special)) << "\n";
    } else {
      text::encode_lines(*tok, std::cin, std::cout, opt);
    }
  });
}

void add_decode(CLI::App* group, TokenizerArgs& a) {
  auto* cmd = group->add_subcommand("decode", "Decode JSON arrays of token ids (stdin lines or --ids) to text");
  cmd->add_option("--tokenizer", a.dir, "model directory with tokenizer.json or tokenizer.model")->required();
  cmd->add_option("--ids", a.ids, "a JSON array of ids, e.g. [9707,1879] (default: each line of stdin)");
  cmd->add_flag("--skip-special-tokens", a.skip_special, "drop special tokens from the output");
  cmd->callback([&a, cmd] {
    auto tok = text::load_tokenizer(a.dir);
    if (cmd->count("--ids")) {
      std::istringstream in(a.ids);
      text::decode_lines(*tok, in, std::cout, a.skip_special, "--ids");
    } else {
      text::decode_lines(*tok, std::cin, std::cout, a.skip_special);
    }
  });
}

void add_train(CLI::App* group, TokenizerArgs& a) {
  auto* cmd = group->add_subcommand("train", "Train a SentencePiece tokenizer (with ChatML special tokens) on a corpus");
  cmd->add_option("--input", a.input, "corpus, one sentence per line")->required();
  cmd->add_option("--vocab-size", a.vocab_size, "vocabulary size")->required();
  cmd->add_option("--out", a.out, "output directory (tokenizer.model, tokenizer_config.json)")->required();
  cmd->add_option("--model-type", a.model_type, "unigram or bpe")->check(CLI::IsMember({"unigram", "bpe"}));
  cmd->callback([&a] {
    text::SentencePieceTrainOptions opt;
    opt.model_type = a.model_type;
    text::train_sentencepiece(a.input, a.vocab_size, a.out, opt);
    auto tok = text::load_tokenizer(a.out);
    std::cout << "wrote " << a.out << "/tokenizer.model (vocab " << tok->vocab_size() << ")\n";
  });
}

CommandRegistrar reg(40, [](CLI::App& root) {
  static TokenizerArgs args;
  CLI::App* g = group(root, "tokenizer", "Encode, decode and train tokenizers");
  add_encode(g, args);
  add_decode(g, args);
  add_train(g, args);
});

}  // namespace
}  // namespace agentrl::cli
