// The safetensors header: its types and the validating parser, torch-free.
//
// Split from safetensors.h so that the parser (the part that reads untrusted
// bytes) can be fuzzed and reused without LibTorch; see safetensors.h for the
// format. Users: model/safetensors.cpp, tests/fuzz/safetensors_fuzz.cpp.
//
// Thread-safety: pure functions and plain value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace agentrl::model {

// safetensors dtype names, as written in the header.
enum class StDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

// "F32" -> StDtype::F32 ...; returns false for an unknown name.
bool st_dtype_from_name(const std::string& name, StDtype* out);
const char* st_dtype_name(StDtype d);
size_t st_dtype_size(StDtype d);

// One tensor entry of a header. Offsets are relative to the data section.
struct StTensorInfo {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
  int64_t numel() const;
};

struct StHeader {
  uint64_t header_size = 0;  // N
  std::map<std::string, std::string> metadata;
  std::vector<StTensorInfo> tensors;  // sorted by begin offset
  uint64_t data_offset() const { return 8 + header_size; }
};

// Parses and validates the header of a safetensors file whose first `size`
// bytes are at `data` (at least the 8-byte length plus the header; the data
// section need not be present) and whose total size is `file_size`. `name`
// is used in error messages. Throws FormatError for: a length that does not
// fit in the file, a header that is not a JSON object, a tensor entry with a
// missing/ill-typed key, an unknown dtype, shape x dtype size != end - begin,
// offsets outside the data section, overlapping or out-of-order offsets,
// holes, trailing bytes after the last tensor, a tensor name given twice,
// and JSON nested deeper than a header needs. Pure function, no I/O.
StHeader parse_safetensors_header(const uint8_t* data, size_t size, uint64_t file_size, const std::string& name);

}  // namespace agentrl::model
