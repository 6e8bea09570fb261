#include "agentrl/train/optim.h"

#include <cmath>
#include <filesystem>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/dist/zero_optimizer.h"

namespace fs = std::filesystem;

namespace agentrl::train {

std::unique_ptr<torch::optim::AdamW> make_adamw(torch::nn::Module& module, const OptimConfig& c,
                                                dist::ProcessGroup* shard_over) {
  return make_adamw(module.parameters(), c, shard_over);
}

std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<torch::Tensor>& params, const OptimConfig& c,
                                                dist::ProcessGroup* shard_over) {
  torch::optim::AdamWOptions o(c.lr);
  o.betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay);
  if (shard_over != nullptr && shard_over->world_size() > 1)
    return std::make_unique<dist::ShardedAdamW>(*shard_over, params, o);
  return std::make_unique<torch::optim::AdamW>(params, o);
}

std::vector<torch::Tensor> optimizer_parameters(const torch::optim::Optimizer& opt) {
  std::vector<torch::Tensor> out;
  for (const auto& g : opt.param_groups()) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

double lr_at(const OptimConfig& c, int64_t step, int64_t total_steps) {
  if (c.warmup_steps > 0 && step < c.warmup_steps)
    return c.lr * static_cast<double>(step + 1) / static_cast<double>(c.warmup_steps);
  if (c.schedule == "constant") return c.lr;
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - c.warmup_steps));
  const double progress = std::min(1.0, static_cast<double>(step - c.warmup_steps) / span);
  const double floor = c.lr * c.min_lr_ratio;
  if (c.schedule == "linear") return floor + (c.lr - floor) * (1.0 - progress);
  // cosine
  return floor + (c.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

void set_lr(torch::optim::Optimizer& opt, double lr) {
  for (auto& group : opt.param_groups()) group.options().set_lr(lr);
}

double clip_grad_norm(torch::nn::Module& module, double max_norm) {
  return clip_grad_norm(module.parameters(), max_norm, [](double x) { return x; });
}

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm,
                      const std::function<double(double)>& sum_over_ranks) {
  std::vector<torch::Tensor> grads, squares;
  for (const auto& p : params) {
    if (!p.grad().defined()) continue;
    grads.push_back(p.grad());
    squares.push_back(p.grad().detach().to(torch::kFloat64).pow(2).sum());
  }
  // One device -> host copy for all parameters (not one per parameter), then
  // the sum in parameter order on the host (the same fold as one .item() each).
  double sq = 0.0;
  if (!squares.empty()) {
    const auto host = torch::stack(squares).to(torch::kCPU);
    const double* v = host.data_ptr<double>();
    for (int64_t i = 0; i < host.numel(); ++i) sq += v[i];
  }
  const double norm = std::sqrt(sum_over_ranks(sq));
  if (max_norm > 0 && std::isfinite(norm) && norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (auto& g : grads) g.mul_(scale);
  }
  return norm;
}

namespace {

constexpr const char* kFullState = "optimizer.pt";
constexpr const char* kShardIndex = "optimizer_shards.json";

std::string shard_file(int rank) { return "optimizer_rank" + std::to_string(rank) + ".pt"; }

// The key of a parameter's entry in Optimizer::state(): LibTorch 1.x keys it
// by the TensorImpl address printed as a string (c10::guts::to_string, gone in
// 2.x), LibTorch 2.x by the address itself. Chosen by the map's key type, so
// the code compiles against both.
template <typename Opt>
auto optimizer_state_key(const Opt& opt, const torch::Tensor& p) {
  using Key = typename std::decay_t<decltype(opt.state())>::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream os;
    os << p.unsafeGetTensorImpl();
    return Key(os.str());
  } else {
    return Key(p.unsafeGetTensorImpl());
  }
}

}  // namespace

void materialize_optimizer_state(torch::optim::AdamW& opt) {
  torch::NoGradGuard no_grad;
  for (auto& group : opt.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (const auto& p : group.params()) {
      const auto key = optimizer_state_key(opt, p);
      if (opt.state().count(key)) continue;
      auto st = std::make_unique<torch::optim::AdamWParamState>();
      st->step(0);
      st->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      st->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      if (o.amsgrad()) st->max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      opt.state()[key] = std::move(st);
    }
  }
}

void stage_optimizer_state(const torch::optim::AdamW& opt, const CheckpointManager& manager, int64_t step) {
  const auto* sharded = dynamic_cast<const dist::ShardedAdamW*>(&opt);
  if (sharded == nullptr) return;
  const fs::path dir = manager.staging_dir(step);
  fs::create_directories(dir);
  torch::save(*sharded, (dir / shard_file(sharded->rank())).string());
  sharded->process_group().barrier();
}

void write_optimizer_state(const torch::optim::AdamW& opt, const CheckpointManager& manager, int64_t step,
                           const std::string& dir) {
  const auto* sharded = dynamic_cast<const dist::ShardedAdamW*>(&opt);
  if (sharded == nullptr) {
    torch::save(opt, (fs::path(dir) / kFullState).string());
    return;
  }
  const int world = sharded->world_size();
  nlohmann::json index;
  index["world_size"] = world;
  std::vector<int64_t> counts(static_cast<size_t>(world), 0);
  for (int owner : sharded->owners()) ++counts[static_cast<size_t>(owner)];
  index["parameters_per_rank"] = counts;
  for (int r = 0; r < world; ++r) {
    const fs::path staged = fs::path(manager.staging_dir(step)) / shard_file(r);
    if (!fs::exists(staged))
      throw IoError("optimizer shard of rank " + std::to_string(r) + " is missing from " + staged.string() +
                    " (the checkpoint directory must be on a file system shared by all ranks)");
    fs::rename(staged, fs::path(dir) / shard_file(r));
  }
  write_file_atomic((fs::path(dir) / kShardIndex).string(), index.dump(2));
}

void load_optimizer_state(torch::optim::AdamW& opt, const std::string& checkpoint_dir) {
  const fs::path dir(checkpoint_dir);
  auto* sharded = dynamic_cast<dist::ShardedAdamW*>(&opt);
  const bool has_shards = fs::exists(dir / kShardIndex);
  if (!has_shards && sharded == nullptr) {
    torch::load(opt, (dir / kFullState).string());
    return;
  }
  const int world = sharded != nullptr ? sharded->world_size() : 1;
  if (!has_shards) {
    // The whole state (written by one process): each rank keeps its share.
    // Optimizer state is keyed by the parameter tensor, which both optimizers
    // share.
    torch::optim::AdamW full(sharded->all_parameters(), torch::optim::AdamWOptions());
    torch::load(full, (dir / kFullState).string());
    for (const auto& p : sharded->owned_parameters()) {
      const auto key = optimizer_state_key(full, p);
      auto it = full.state().find(key);
      if (it != full.state().end()) sharded->state()[key] = it->second->clone();
    }
    return;
  }
  const auto index = nlohmann::json::parse(read_file((dir / kShardIndex).string()));
  const int saved_world = index.at("world_size").get<int>();
  if (saved_world != world || sharded == nullptr)
    throw ConfigError("checkpoint " + checkpoint_dir + " holds optimizer state sharded over " +
                      std::to_string(saved_world) + " ranks (dist.shard_optimizer), and this run has " +
                      std::to_string(world) + (world == 1 ? " process" : " processes") +
                      ": a sharded checkpoint resumes only with the world size that wrote it (agentrl launch "
                      "--nproc-per-node " + std::to_string(saved_world) + ")");
  const auto counts = index.at("parameters_per_rank").get<std::vector<int64_t>>();
  const auto mine = static_cast<int64_t>(sharded->owned_parameters().size());
  if (counts.at(static_cast<size_t>(sharded->rank())) != mine)
    throw ConfigError("checkpoint " + checkpoint_dir + ": rank " + std::to_string(sharded->rank()) + " owned " +
                      std::to_string(counts.at(static_cast<size_t>(sharded->rank()))) +
                      " parameters when it was written and owns " + std::to_string(mine) +
                      " now (a different model?)");
  torch::load(opt, (dir / shard_file(sharded->rank())).string());
}

}  // namespace agentrl::train
