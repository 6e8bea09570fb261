// GPT-2 byte-level alphabet (internal to the text layer).
//
// Byte-level BPE vocabularies (GPT-2, Qwen, Llama-3) store tokens over an
// alphabet of 256 printable code points, one per byte: bytes that are
// printable Latin-1 map to themselves, the other 68 bytes map to U+0100.. in
// byte order (GPT-2 encoder.py, bytes_to_unicode()). So a space is 'Ġ'
// (U+0120) and a newline 'Ċ' (U+010A).
//
// Thread-safety: the table is immutable after construction (a function-local
// static).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace agentrl::text::detail {

class ByteLevelAlphabet {
 public:
  static const ByteLevelAlphabet& get();

  // UTF-8 of the code point standing for byte b.
  const std::string& encode_byte(unsigned char b) const { return byte_to_char_[b]; }
  // Maps every byte of `bytes` to its code point (UTF-8 result).
  std::string encode(std::string_view bytes) const;
  // Inverse of encode; false if `text` holds a code point outside the
  // alphabet (then `out` is left partially written).
  bool decode(std::string_view text, std::string& out) const;

 private:
  ByteLevelAlphabet();
  std::array<std::string, 256> byte_to_char_;
  std::array<int16_t, 512> char_to_byte_;  // code points are < 0x144
};

}  // namespace agentrl::text::detail
