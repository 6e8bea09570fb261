#include "agentrl/train/master_weights.h"

#include "agentrl/core/error.h"
#include "agentrl/model/safetensors.h"

namespace agentrl::train {

MasterWeights::MasterWeights(torch::nn::Module& module) {
  for (const auto& p : module.named_parameters()) {
    if (!p.value().requires_grad()) continue;  // frozen (the base of a LoRA model): not trained
    names_.push_back(p.key());
    model_params_.push_back(p.value());
  }
  for (const auto& p : model_params_)
    if (p.is_floating_point() && p.scalar_type() != torch::kFloat32) enabled_ = true;
  if (!enabled_) {
    masters_ = model_params_;
    return;
  }
  torch::NoGradGuard no_grad;
  masters_.reserve(model_params_.size());
  for (const auto& p : model_params_) {
    // A leaf of its own: the optimizer reads .grad(), nothing backpropagates into it.
    auto m = p.detach().to(torch::kFloat32).clone();
    masters_.push_back(m);
  }
}

void MasterWeights::accumulate_gradients() {
  if (!enabled_) return;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < model_params_.size(); ++i) {
    auto& p = model_params_[i];
    if (!p.grad().defined()) continue;
    auto& mg = masters_[i].mutable_grad();
    if (mg.defined()) mg.add_(p.grad().to(torch::kFloat32));
    else mg = p.grad().to(torch::kFloat32);
    p.mutable_grad() = torch::Tensor();  // released: the next backward writes a fresh one
  }
}

void MasterWeights::zero_grad() {
  torch::NoGradGuard no_grad;
  // Gradients that exist are zeroed, not released, as Module::zero_grad does:
  // the optimizer steps every parameter whose gradient is defined.
  for (auto& m : masters_)
    if (m.grad().defined()) m.mutable_grad().zero_();
  if (!enabled_) return;
  for (auto& p : model_params_)
    if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
}

void MasterWeights::copy_to_model() {
  if (!enabled_) return;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < model_params_.size(); ++i) model_params_[i].copy_(masters_[i]);
}

void MasterWeights::load(const std::map<std::string, torch::Tensor>& values) {
  for (size_t i = 0; i < names_.size(); ++i) {
    auto it = values.find(names_[i]);
    if (it == values.end()) throw FormatError("master weights: tensor '" + names_[i] + "' is missing");
    if (it->second.sizes() != masters_[i].sizes())
      throw FormatError("master weights: tensor '" + names_[i] + "' has shape " + c10::str(it->second.sizes()) +
                        ", the model's is " + c10::str(masters_[i].sizes()));
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < names_.size(); ++i) masters_[i].copy_(values.at(names_[i]));
  copy_to_model();
}

std::map<std::string, torch::Tensor> MasterWeights::named() const {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < names_.size(); ++i) out[names_[i]] = masters_[i];
  return out;
}

void load_master_weights(MasterWeights& masters, const std::string& model_dir) {
  if (!masters.enabled()) return;
  const auto st = model::SafetensorsSet::open(model_dir);
  std::map<std::string, torch::Tensor> values;
  for (const auto& name : masters.names()) {
    if (!st.contains(name)) continue;  // reported by load()
    if (st.info(name).dtype != model::StDtype::F32)
      throw FormatError(model_dir + ": tensor '" + name + "' is stored as " + model::st_dtype_name(st.info(name).dtype) +
                        ", so it holds no fp32 master weights (a mixed-precision checkpoint stores float32)");
    values[name] = st.tensor(name);
  }
  masters.load(values);
}

}  // namespace agentrl::train
