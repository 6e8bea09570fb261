#include "byte_level.h"

#include "utf8_util.h"

namespace agentrl::text::detail {

ByteLevelAlphabet::ByteLevelAlphabet() {
  char_to_byte_.fill(-1);
  auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); };
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + next++);
    append_utf8(cp, byte_to_char_[b]);
    char_to_byte_[cp] = static_cast<int16_t>(b);
  }
}

const ByteLevelAlphabet& ByteLevelAlphabet::get() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

std::string ByteLevelAlphabet::encode(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += byte_to_char_[static_cast<unsigned char>(c)];
  return out;
}

bool ByteLevelAlphabet::decode(std::string_view text, std::string& out) const {
  size_t i = 0;
  while (i < text.size()) {
    size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    uint32_t cp = decode_utf8(text, i, n);
    if (cp >= char_to_byte_.size() || char_to_byte_[cp] < 0) return false;
    out += static_cast<char>(char_to_byte_[cp]);
    i += n;
  }
  return true;
}

}  // namespace agentrl::text::detail
