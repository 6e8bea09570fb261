// Reading and writing the safetensors weight format.
//
// Format (https://github.com/huggingface/safetensors, README "Format"):
//   8 bytes   N, unsigned little-endian 64-bit: size of the header
//   N bytes   JSON object: {"__metadata__": {str: str}?,
//                           "<name>": {"dtype": "F32", "shape": [..],
//                                      "data_offsets": [begin, end]}, ...}
//             (writers pad it with spaces to a multiple of 8 bytes)
//   rest      the data section; offsets are relative to its start, tensors are
//             row-major little-endian, and together they cover it exactly
//             (no holes, no overlap, no trailing bytes).
// A sharded checkpoint is a `model.safetensors.index.json`
// ({"metadata": {"total_size": n}, "weight_map": {name: shard file}}) next
// to its shard files.
//
// Users: model/hf_checkpoint.* (load_state_dict, save_pretrained), the
// `agentrl model` commands, tests/fuzz/safetensors_fuzz.cpp.
//
// Reading memory-maps each file (MAP_PRIVATE): a 7B checkpoint is not read
// into RAM up front, tensors are views over the mapping (copy-on-write, so a
// write to a view never reaches the file) and copying them into parameters
// costs no intermediate full copy. Every header is validated before any data
// is touched: a malformed file throws FormatError naming the file and the
// tensor, and never causes an out-of-bounds read.
//
// Thread-safety: a SafetensorsFile / SafetensorsSet is immutable after open;
// its const methods may be called concurrently. save_safetensors is safe to
// call concurrently for different paths.
#pragma once

#include <torch/torch.h>

#include "agentrl/model/safetensors_header.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace agentrl::model {

torch::Dtype st_dtype_to_torch(StDtype d);
// Throws FormatError for torch dtypes safetensors cannot store here.
StDtype st_dtype_from_torch(torch::Dtype d);

// One memory-mapped .safetensors file.
class SafetensorsFile {
 public:
  // Maps and validates `path`. Throws IoError (cannot open/map) or FormatError.
  static std::shared_ptr<const SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const StHeader& header() const { return header_; }
  // nullptr if absent.
  const StTensorInfo* find(const std::string& name) const;
  // CPU tensor with the stored dtype and shape. A view over the mapping (it
  // keeps the mapping alive) when the data is suitably aligned, otherwise an
  // aligned copy. Throws FormatError if `name` is absent.
  torch::Tensor tensor(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  std::string path_;
  std::shared_ptr<void> mapping_;  // base of the mapping; unmaps on release
  uint64_t size_ = 0;
  StHeader header_;
  std::map<std::string, size_t> index_;  // name -> position in header_.tensors
};

// The tensors of a checkpoint: one file, or the shards of an index.
class SafetensorsSet {
 public:
  // `path` is a .safetensors file, a model.safetensors.index.json, or a
  // directory holding one of them (the index is preferred). Throws
  // ConfigError if a directory holds neither, IoError/FormatError otherwise
  // (an index naming a missing shard, a tensor its shard lacks, a shard path
  // leaving the directory, a tensor stored in two shards).
  static SafetensorsSet open(const std::string& path);

  // Sorted tensor names.
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return where_.count(name) > 0; }
  // Throws FormatError if absent.
  const StTensorInfo& info(const std::string& name) const;
  // See SafetensorsFile::tensor.
  torch::Tensor tensor(const std::string& name) const;
  // The file holding `name` (for messages).
  const std::string& file_of(const std::string& name) const;
  // __metadata__ of the first file.
  const std::map<std::string, std::string>& metadata() const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::map<std::string, size_t> where_;  // name -> index in files_
};

// Writes one .safetensors file atomically (temp file in the same directory,
// fsync, rename). Tensors are converted to `dtype` when it is given (floating
// tensors only; integer/bool tensors keep theirs), moved to CPU and made
// contiguous one at a time. The data section is ordered by element size
// (largest first) then name, as the reference writer does, so every tensor is
// aligned to its element size; the header is padded with spaces to a multiple
// of 8. Names must be unique and non-empty, and not "__metadata__".
// Throws IoError / FormatError.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {},
                      c10::optional<torch::Dtype> dtype = c10::nullopt);

// Bytes a tensor takes when stored with `dtype` (or its own dtype).
uint64_t stored_bytes(const torch::Tensor& t, c10::optional<torch::Dtype> dtype = c10::nullopt);

}  // namespace agentrl::model
