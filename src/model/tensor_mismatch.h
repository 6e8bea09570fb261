// Internal to the model layer: how a weights file that does not fit a model
// is reported (hf_checkpoint.cpp for model weights, lora_peft.cpp for PEFT
// adapters): one FormatError that lists every missing, unexpected and
// wrongly shaped tensor, so a user fixes them all in one go.
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

namespace agentrl::model::detail {

// "[896, 151936]"
std::string shape_text(torch::IntArrayRef shape);

struct TensorMismatch {
  std::vector<std::string> missing, unexpected, wrong_shape;
  // Records `name` as wrongly shaped when the shapes differ ("name (<file_role>
  // [..], model [..])"); returns whether they matched.
  bool check_shape(const std::string& name, const std::string& file_role, torch::IntArrayRef file_shape,
                   torch::IntArrayRef model_shape);
  // Throws FormatError "<source>: <what> (N missing, N unexpected, N wrongly
  // shaped tensors)" with one line per tensor, when anything was recorded.
  void throw_if_any(const std::string& source, const std::string& what) const;
};

}  // namespace agentrl::model::detail
