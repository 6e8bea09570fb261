// Reading tokenizer_config.json and other JSON files of a model directory
// (internal to the text layer).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "added_tokens.h"

namespace agentrl::text::detail {

// Parses a JSON file. Throws IoError if it cannot be read and FormatError
// naming the file and byte offset if it is not valid JSON.
nlohmann::json read_json_file(const std::string& path);

// What agentrl uses from HF's tokenizer_config.json.
struct TokenizerConfigFile {
  bool present = false;
  std::optional<std::string> bos_token, eos_token, pad_token, unk_token;
  std::optional<bool> add_bos_token, add_eos_token;
  std::string chat_template;                // "" when absent
  std::vector<AddedToken> added_tokens;     // from "added_tokens_decoder"
};

// Reads `path`; a missing file gives present=false. Token roles may be
// strings or {"content": ...} objects (transformers' AddedToken form).
TokenizerConfigFile read_tokenizer_config(const std::string& path);

bool file_exists(const std::string& path);

}  // namespace agentrl::text::detail
