#include "tensor_mismatch.h"

#include <sstream>

#include "agentrl/core/error.h"

namespace agentrl::model::detail {

std::string shape_text(torch::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

bool TensorMismatch::check_shape(const std::string& name, const std::string& file_role, torch::IntArrayRef file_shape,
                                 torch::IntArrayRef model_shape) {
  if (file_shape == model_shape) return true;
  wrong_shape.push_back(name + " (" + file_role + " " + shape_text(file_shape) + ", model " + shape_text(model_shape) +
                        ")");
  return false;
}

void TensorMismatch::throw_if_any(const std::string& source, const std::string& what) const {
  if (missing.empty() && wrong_shape.empty() && unexpected.empty()) return;
  std::ostringstream msg;
  msg << source << ": " << what << " (" << missing.size() << " missing, " << unexpected.size() << " unexpected, "
      << wrong_shape.size() << " wrongly shaped tensors)";
  for (const auto& n : missing) msg << "\n  missing: " << n;
  for (const auto& n : unexpected) msg << "\n  unexpected: " << n;
  for (const auto& n : wrong_shape) msg << "\n  wrong shape: " << n;
  throw FormatError(msg.str());
}

}  // namespace agentrl::model::detail
