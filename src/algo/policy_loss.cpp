// ppo_clip policy loss and verl's loss aggregation modes (see policy_loss.h).
//
// Per token (advantage A, ratio rho = exp(clamp(log pi - log pi_old, +-20))):
//   l1 = -A rho,  l2 = -A clip(rho, 1 - eps_low, 1 + eps_high),  l = max(l1, l2)
//   dual clip (A < 0 only): l = min(l, -c A)
//   TIS: l *= w, w = min(exp(log pi_old - log pi_behaviour), cap), detached
// loss = agg(l) + beta agg(KL(pi || pi_ref)) - entropy_coef agg(H)
#include <algorithm>
#include <cmath>
#include <vector>

#include "agentrl/algo/policy_loss.h"
#include "agentrl/core/error.h"

namespace agentrl::algo {
namespace {

void check_same_shape(const torch::Tensor& t, const torch::Tensor& ref, const char* name) {
  if (!t.defined()) throw Error(std::string("policy loss: input ") + name + " is required but undefined");
  if (t.sizes() != ref.sizes()) {
    throw Error(std::string("policy loss: ") + name + " has shape " + c10::str(t.sizes()) + ", expected " +
                c10::str(ref.sizes()));
  }
}

// Mean over loss tokens as a float64 0-d tensor (0 when there is none): the
// float32 masked sum divided in double by the token count.
torch::Tensor masked_mean_value(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& count) {
  return (x.detach() * mask).sum().to(torch::kFloat64) / count.clamp_min(1.0);
}

}  // namespace

torch::Tensor aggregate_loss(const torch::Tensor& loss, const torch::Tensor& mask, const std::string& mode,
                             double tokens, double sequences, double norm_length) {
  const auto m = mask.to(loss.scalar_type());
  if (mode == "token-mean") {
    const double n = tokens > 0 ? tokens : m.sum().item<double>();
    // No loss token anywhere: a zero that still carries the graph.
    return (loss * m).sum() / std::max(n, 1.0);
  }
  const double rows = sequences > 0 ? sequences : static_cast<double>(loss.size(0));
  if (mode == "seq-mean-token-sum") return (loss * m).sum(-1).sum() / std::max(rows, 1.0);
  if (mode == "seq-mean-token-mean") {
    auto per_row = (loss * m).sum(-1) / m.sum(-1).clamp_min(1.0);
    return per_row.sum() / std::max(rows, 1.0);
  }
  if (mode == "seq-mean-token-sum-norm") {
    const double len = norm_length > 0 ? norm_length : static_cast<double>(loss.size(-1));
    return (loss * m).sum() / len;
  }
  throw ConfigError("actor.loss_agg: unknown aggregation mode '" + mode +
                    "'; expected token-mean, seq-mean-token-sum, seq-mean-token-mean or seq-mean-token-sum-norm");
}

std::map<std::string, double> metrics_to_host(const std::map<std::string, torch::Tensor>& metrics) {
  std::map<std::string, double> out;
  if (metrics.empty()) return out;
  std::vector<torch::Tensor> values;
  for (const auto& kv : metrics) values.push_back(kv.second.to(torch::kFloat64).reshape({}));
  const auto host = torch::stack(values).to(torch::kCPU);
  const double* v = host.data_ptr<double>();
  size_t i = 0;
  for (const auto& kv : metrics) out[kv.first] = v[i++];
  return out;
}

MetricCombine metric_combine(const std::string& name) {
  if (name == "pg_loss" || name == "kl_loss" || name == "entropy_loss" || name == "choice_mass_loss" || name == "tokens")
    return MetricCombine::kSum;
  if (name == "ratio_max") return MetricCombine::kMax;
  if (name == "kl_coef") return MetricCombine::kValue;
  return MetricCombine::kTokenMean;
}

std::vector<std::string> policy_loss_metric_names(const ActorConfig& cfg, bool with_entropy) {
  std::vector<std::string> names{"pg_loss", "clip_frac_high", "clip_frac_low", "approx_kl",
                                 "ratio_mean", "ratio_max", "low_prob_frac", "tokens"};
  if (cfg.dual_clip > 0) names.push_back("dual_clip_frac");
  if (cfg.tis_cap > 0) names.insert(names.end(), {"tis_clip_frac", "tis_weight_mean"});
  if (cfg.kl.enabled && cfg.kl.use_as == "loss") names.insert(names.end(), {"kl", "kl_loss", "kl_coef"});
  if (cfg.entropy_coef != 0) names.push_back("entropy_loss");
  if (cfg.choice_mass_coef != 0) names.insert(names.end(), {"choice_mass_loss", "choice_mass_nll"});
  if (with_entropy) names.push_back("entropy");
  return names;
}

PolicyLossOutput compute_policy_loss(const PolicyLossInputs& in, const ActorConfig& cfg) {
  if (cfg.loss != "ppo_clip") throw ConfigError("actor.loss: unknown policy loss '" + cfg.loss + "'; expected ppo_clip");
  if (cfg.dual_clip != 0 && cfg.dual_clip <= 1.0) {
    throw ConfigError("actor.dual_clip = " + std::to_string(cfg.dual_clip) + ": expected 0 (off) or a value > 1");
  }
  if (!in.logprobs.defined() || in.logprobs.dim() != 2) throw Error("policy loss: logprobs must be an [N, T] tensor");
  const auto& lp = in.logprobs;
  check_same_shape(in.old_logprobs, lp, "old_logprobs");
  check_same_shape(in.advantages, lp, "advantages");
  check_same_shape(in.loss_mask, lp, "loss_mask");
  const auto dtype = lp.scalar_type();
  const auto mask = in.loss_mask.to(dtype);
  const auto adv = in.advantages.to(dtype).detach();
  const auto old_lp = in.old_logprobs.to(dtype).detach();
  const auto local_tokens = mask.detach().sum().to(torch::kFloat64);
  // The padded width of a micro-batch (prompt included) depends on which rows
  // it holds: as the divisor it would give a row a weight that depends on its
  // micro-batch, the length bias Dr.GRPO removes. verl divides by a constant.
  if (cfg.loss_agg == "seq-mean-token-sum-norm" && cfg.loss_agg_norm_length <= 0)
    throw ConfigError("actor.loss_agg: seq-mean-token-sum-norm needs a constant divisor: set "
                      "actor.loss_agg_norm_length (e.g. the longest response the rollout allows)");
  const double agg_norm = static_cast<double>(cfg.loss_agg_norm_length);
  auto agg = [&](const torch::Tensor& x) {
    return aggregate_loss(x, mask, cfg.loss_agg, in.global_tokens, in.global_sequences, agg_norm);
  };

  PolicyLossOutput out;
  auto& mt = out.metric_tensors;
  const auto log_ratio = torch::clamp(lp - old_lp, -20.0, 20.0);
  const auto ratio = torch::exp(log_ratio);
  const auto l1 = -adv * ratio;
  const auto l2 = -adv * torch::clamp(ratio, 1.0 - cfg.clip_low, 1.0 + cfg.clip_high);
  auto per_token = torch::max(l1, l2);
  const auto neg = (adv < 0).to(dtype);
  if (cfg.dual_clip > 0) {
    const auto l3 = -adv * cfg.dual_clip;
    mt["dual_clip_frac"] = masked_mean_value(((per_token > l3).to(dtype) * neg), mask, local_tokens);
    per_token = torch::where(adv < 0, torch::min(per_token, l3), per_token);
  }
  if (cfg.tis_cap > 0) {
    check_same_shape(in.behaviour_logprobs, lp, "behaviour_logprobs (actor.tis_cap > 0)");
    auto w = torch::exp(torch::clamp(old_lp - in.behaviour_logprobs.to(dtype).detach(), -20.0, 20.0));
    mt["tis_clip_frac"] = masked_mean_value((w > cfg.tis_cap).to(dtype), mask, local_tokens);
    w = w.clamp_max(cfg.tis_cap);
    mt["tis_weight_mean"] = masked_mean_value(w, mask, local_tokens);
    per_token = per_token * w;
  }
  out.pg_loss = agg(per_token);
  out.loss = out.pg_loss;
  {
    torch::NoGradGuard ng;
    const auto r = ratio.detach();
    mt["clip_frac_high"] = masked_mean_value(((r > 1.0 + cfg.clip_high).to(dtype) * (adv > 0).to(dtype)), mask, local_tokens);
    mt["clip_frac_low"] = masked_mean_value(((r < 1.0 - cfg.clip_low).to(dtype) * neg), mask, local_tokens);
    mt["approx_kl"] = masked_mean_value(-log_ratio.detach(), mask, local_tokens);
    mt["ratio_mean"] = masked_mean_value(r, mask, local_tokens);
    // SimpleTIR (arXiv 2509.02479, sec. 3) traces gradient-norm spikes to
    // tokens the policy sampled at a very low probability.
    mt["low_prob_frac"] = masked_mean_value((old_lp < std::log(kLowProbThreshold)).to(dtype), mask, local_tokens);
    // 0 without loss tokens (every entry masked to 0).
    mt["ratio_max"] = r.numel() == 0 ? torch::zeros({}, local_tokens.options())
                                     : torch::where(mask > 0, r, torch::zeros_like(r)).max().to(torch::kFloat64);
    mt["pg_loss"] = out.pg_loss.detach().to(torch::kFloat64);
    mt["tokens"] = local_tokens;
  }
  if (cfg.kl.enabled && cfg.kl.use_as == "loss") {
    check_same_shape(in.ref_logprobs, lp, "ref_logprobs (actor.kl.use_as = loss)");
    const auto kl = kl_estimate(lp, in.ref_logprobs.to(dtype).detach(), cfg.kl.type);
    const auto kl_loss = agg(kl);
    const double coef = in.kl_coef >= 0 ? in.kl_coef : cfg.kl.coef;
    out.loss = out.loss + coef * kl_loss;
    mt["kl"] = masked_mean_value(kl, mask, local_tokens);
    mt["kl_loss"] = kl_loss.detach().to(torch::kFloat64);
    mt["kl_coef"] = torch::full({}, coef, local_tokens.options());
  }
  if (cfg.entropy_coef != 0) {
    check_same_shape(in.entropy, lp, "entropy (actor.entropy_coef != 0)");
    const auto ent_loss = agg(in.entropy.to(dtype));
    out.loss = out.loss - cfg.entropy_coef * ent_loss;
    mt["entropy_loss"] = ent_loss.detach().to(torch::kFloat64);
  }
  if (cfg.choice_mass_coef != 0) {
    check_same_shape(in.free_logprobs, lp, "free_logprobs (actor.choice_mass_coef != 0)");
    // -log(unmasked mass of the allowed ids) = log p_masked - log p_free.
    const auto nll = lp - in.free_logprobs.to(dtype);
    const auto mass_loss = agg(nll);
    out.loss = out.loss + cfg.choice_mass_coef * mass_loss;
    mt["choice_mass_loss"] = mass_loss.detach().to(torch::kFloat64);
    mt["choice_mass_nll"] = masked_mean_value(nll.detach(), mask, local_tokens);
  }
  if (in.entropy.defined() && in.entropy.sizes() == lp.sizes()) {
    mt["entropy"] = masked_mean_value(in.entropy.to(dtype), mask, local_tokens);
  }
  if (in.host_metrics) out.metrics = metrics_to_host(mt);
  return out;
}

torch::Tensor kl_estimate(const torch::Tensor& logprobs, const torch::Tensor& ref_logprobs, const std::string& type) {
  if (type == "k1") return logprobs - ref_logprobs;
  if (type == "k2") return 0.5 * (logprobs - ref_logprobs).square();
  if (type == "k3" || type == "low_var_kl") {
    const auto d = torch::clamp(ref_logprobs - logprobs, -20.0, 20.0);
    return torch::clamp(torch::exp(d) - d - 1.0, -10.0, 10.0);
  }
  throw ConfigError("actor.kl.type: unknown KL estimator '" + type + "'; expected k1, k2, k3 or low_var_kl");
}

torch::Tensor kl_per_row(const torch::Tensor& logprobs, const torch::Tensor& ref_logprobs,
                         const torch::Tensor& loss_mask, const std::string& type) {
  torch::NoGradGuard ng;
  return (kl_estimate(logprobs.detach(), ref_logprobs, type) * loss_mask.to(logprobs.scalar_type())).sum(-1);
}

double apply_kl_reward_penalty(std::vector<rollout::Trajectory>& trajectories, const rollout::TrainBatch& batch,
                               double coef, const std::string& type) {
  if (!batch.ref_logprobs.defined() || !batch.old_logprobs.defined() || !batch.loss_mask.defined()) {
    throw Error("KL reward penalty: the batch needs old_logprobs, ref_logprobs and loss_mask");
  }
  const auto rows = kl_per_row(batch.old_logprobs, batch.ref_logprobs, batch.loss_mask, type).to(torch::kCPU, torch::kFloat64);
  const double tokens = batch.loss_mask.sum().item<double>();
  std::vector<double> per_traj(trajectories.size(), 0.0);
  for (size_t r = 0; r < batch.trajectory_of_row.size(); ++r) {
    const int64_t t = batch.trajectory_of_row[r];
    if (t < 0 || t >= static_cast<int64_t>(trajectories.size())) {
      throw Error("KL reward penalty: row " + std::to_string(r) + " names trajectory " + std::to_string(t) + " of " +
                  std::to_string(trajectories.size()));
    }
    per_traj[static_cast<size_t>(t)] += rows[static_cast<int64_t>(r)].item<double>();
  }
  double total = 0;
  for (size_t i = 0; i < trajectories.size(); ++i) {
    trajectories[i].reward -= coef * per_traj[i];
    total += per_traj[i];
  }
  return tokens > 0 ? total / tokens : 0.0;
}

KlController::KlController(const KlConfig& config) : config_(config), value_(config.coef) {}

void KlController::update(double current_kl, double n_steps) {
  if (!config_.adaptive.enabled) return;
  const double error = std::clamp(current_kl / config_.adaptive.target - 1.0, -0.2, 0.2);
  value_ *= 1.0 + error * n_steps / config_.adaptive.horizon;
}

}  // namespace agentrl::algo
