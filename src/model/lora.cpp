// LoRA adapters (see lora.h).
#include "agentrl/model/lora.h"

#include <cmath>
#include <set>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/strings.h"

namespace agentrl::model {
namespace {

std::string last_component(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Every Dense of the model that runs through Dense::forward, with its module
// name, in module order. The token embedding and the LM head are Dense
// modules whose weights are read directly (a lookup table; the fp32 logits
// path), where an adapter would have no effect: they are not targets.
std::vector<std::pair<std::string, DenseImpl*>> dense_layers(torch::nn::Module& model) {
  std::vector<std::pair<std::string, DenseImpl*>> out;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    const std::string& name = item.key();
    if (strings::ends_with(name, "embed_tokens") || strings::ends_with(name, "lm_head")) continue;
    if (auto* d = item.value()->as<DenseImpl>()) out.emplace_back(name, d);
  }
  return out;
}

// PEFT's A: kaiming_uniform_(a = sqrt(5)) = uniform(-1/sqrt(in), 1/sqrt(in)),
// or with init "gaussian" normal(0, 1/r); one stream per layer keyed by its
// name (as TransformerLM::init_weights).
torch::Tensor draw_a(const std::string& name, int64_t rank, int64_t in, uint64_t seed, LoraInit init) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: portable, unlike std::hash
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  Rng rng = Rng(seed).fork(h);
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  const double stddev = 1.0 / static_cast<double>(rank);
  auto a = torch::empty({rank, in}, torch::TensorOptions().dtype(torch::kFloat32));
  float* p = a.data_ptr<float>();
  for (int64_t i = 0; i < rank * in; ++i)
    p[i] = static_cast<float>(init == LoraInit::kGaussian ? rng.normal() * stddev : (2.0 * rng.uniform() - 1.0) * bound);
  return a;
}

void check_targets(const std::vector<std::pair<std::string, DenseImpl*>>& layers, const LoraOptions& o) {
  std::set<std::string> present;
  for (const auto& [name, d] : layers) present.insert(last_component(name));
  for (const auto& t : o.target_modules)
    if (!present.count(t))
      throw ConfigError("model.lora.target_modules: '" + t + "' is not a linear layer of this model (its layers: " +
                        strings::join(std::vector<std::string>(present.begin(), present.end()), ", ") + ")");
  if (o.rank < 1) throw ConfigError("model.lora.rank: " + std::to_string(o.rank) + "; expected >= 1");
  if (!(o.alpha > 0)) throw ConfigError("model.lora.alpha: " + std::to_string(o.alpha) + "; expected > 0");
  if (!(o.dropout >= 0 && o.dropout < 1))
    throw ConfigError("model.lora.dropout: " + std::to_string(o.dropout) + "; expected in [0, 1)");
}

}  // namespace

int64_t attach_lora(TransformerLMImpl& model, const LoraOptions& o) {
  auto layers = dense_layers(model);
  check_targets(layers, o);
  std::set<std::string> targets(o.target_modules.begin(), o.target_modules.end());
  for (const auto& [name, d] : layers) {
    if (d->lora.A.defined()) throw ConfigError("model.lora: the model already has adapters (" + name + ")");
    if (!targets.count(last_component(name))) continue;
    const int64_t out = d->weight.size(0), in = d->weight.size(1);
    if (o.rank > std::min(in, out))
      throw ConfigError("model.lora.rank: " + std::to_string(o.rank) + " is larger than layer " + name + " [" +
                        std::to_string(out) + " x " + std::to_string(in) + "]; expected <= " +
                        std::to_string(std::min(in, out)));
  }
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.requires_grad_(false);
  const double scaling = o.use_rslora ? o.alpha / std::sqrt(static_cast<double>(o.rank)) : o.alpha / o.rank;
  int64_t adapted = 0;
  for (const auto& [name, d] : layers) {
    if (!targets.count(last_component(name))) continue;
    const auto opts = torch::TensorOptions().dtype(o.dtype).device(d->weight.device());
    const int64_t out = d->weight.size(0), in = d->weight.size(1);
    d->lora.A = d->register_parameter("lora_A", draw_a(name, o.rank, in, o.seed, o.init).to(opts));
    d->lora.B = d->register_parameter("lora_B", torch::zeros({out, o.rank}, opts));
    d->lora.scaling = scaling;
    d->lora.dropout = o.dropout;
    ++adapted;
  }
  return adapted;
}

std::vector<std::pair<std::string, torch::Tensor>> named_lora_parameters(torch::nn::Module& model) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [name, d] : dense_layers(model)) {
    if (!d->lora.A.defined()) continue;
    out.emplace_back(name + ".lora_A", d->lora.A);
    out.emplace_back(name + ".lora_B", d->lora.B);
  }
  return out;
}

std::vector<torch::Tensor> lora_parameters(torch::nn::Module& model) {
  std::vector<torch::Tensor> out;
  for (auto& [name, t] : named_lora_parameters(model)) out.push_back(t);
  return out;
}

void set_lora_enabled(torch::nn::Module& model, bool enabled) {
  for (const auto& [name, d] : dense_layers(model)) {
    if (!d->lora.A.defined()) continue;
    if (d->lora.merged) throw Error("LoRA: adapter of " + name + " is merged into the weights; unmerge it first");
    d->lora.enabled = enabled;
  }
}

namespace {
void shift_weights(torch::nn::Module& model, bool merge) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, d] : dense_layers(model)) {
    if (!d->lora.A.defined() || d->lora.merged == merge) continue;
    if (!d->lora.enabled) throw Error("LoRA: adapter of " + name + " is switched off; switch it on to merge it");
    // Delta in at least fp32 (fp64 for an fp64 model), rounded once into W.
    const auto dt = at::promote_types(d->weight.scalar_type(), torch::kFloat32);
    auto delta = torch::matmul(d->lora.B.to(dt), d->lora.A.to(dt)) * d->lora.scaling;
    auto w = d->weight.to(dt);
    d->weight.copy_(merge ? w + delta : w - delta);
    d->lora.merged = merge;
  }
}
}  // namespace

void merge_lora(torch::nn::Module& model) { shift_weights(model, true); }
void unmerge_lora(torch::nn::Module& model) { shift_weights(model, false); }

void fold_lora_into_base(torch::nn::Module& model, uint64_t seed) {
  merge_lora(model);
  torch::NoGradGuard no_grad;
  for (const auto& [name, d] : dense_layers(model)) {
    if (!d->lora.A.defined()) continue;
    // The init the adapters were attached with is not recorded; the default
    // (kaiming-uniform) A is PEFT's and, with B = 0, any A keeps the output.
    const int64_t rank = d->lora.A.size(0), in = d->lora.A.size(1);
    d->lora.A.copy_(draw_a(name, rank, in, seed, LoraInit::kDefault));
    d->lora.B.zero_();
    d->lora.merged = false;
  }
}

bool is_lora_parameter_name(const std::string& name) {
  return strings::ends_with(name, ".lora_A") || strings::ends_with(name, ".lora_B");
}

}  // namespace agentrl::model
