// libFuzzer target for the safetensors header parser.
//
// Build (clang, libclang-rt for libFuzzer):
//   CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DAGENTRL_FUZZ=ON
//   ninja -C build-fuzz safetensors_fuzz
// or, without building the rest of the project (the parser is torch-free):
//   clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -Iinclude \
//     tests/fuzz/safetensors_fuzz.cpp -o safetensors_fuzz
//   ./build-fuzz/safetensors_fuzz -max_total_time=300 corpus/
//
// The input is the start of a file: the first byte chooses how much data
// the "file" claims to have beyond the buffer (0..255 bytes), the rest is
// parsed as the file's leading bytes. The parser must either return a
// header whose tensors all lie inside the file, or throw FormatError; any
// other exception, crash, or ASan report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "agentrl/core/error.h"
#include "agentrl/model/safetensors_header.h"

// The parser is compiled into this translation unit, not taken from the
// model library: libFuzzer needs coverage instrumentation of the code under
// test, and the CMake fuzz target builds only this file with
// -fsanitize=fuzzer (the layer libraries are uninstrumented). Its symbols
// take precedence over the library's copy.
#include "../../src/model/safetensors_header.cpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint64_t extra = data[0];
  const uint8_t* bytes = data + 1;
  const size_t n = size - 1;
  try {
    agentrl::model::StHeader h = agentrl::model::parse_safetensors_header(bytes, n, n + extra, "fuzz.safetensors");
    const uint64_t data_size = n + extra - h.data_offset();
    uint64_t covered = 0;
    for (const auto& t : h.tensors) {
      if (t.end > data_size || t.begin > t.end) std::abort();  // validated header lies about the file
      covered += t.end - t.begin;
    }
    if (covered != data_size) std::abort();
  } catch (const agentrl::FormatError&) {
  }
  return 0;
}
