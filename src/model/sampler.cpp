#include "agentrl/model/sampler.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "agentrl/core/error.h"

namespace agentrl::model {
namespace {

void validate(const SamplerParams& p) {
  if (!(p.temperature >= 0)) throw ConfigError("sampling temperature must be >= 0, got " + std::to_string(p.temperature));
  if (!(p.top_p > 0 && p.top_p <= 1)) throw ConfigError("sampling top_p must be in (0, 1], got " + std::to_string(p.top_p));
  if (p.top_k < 0) throw ConfigError("sampling top_k must be >= 0, got " + std::to_string(p.top_k));
}

// Candidate ids sorted by descending logit (ties: lower id first), truncated
// by top-k and then by top-p on the tempered distribution `q` (unnormalised,
// total mass q_total). Sorting is partial: only as many ids as top-p needs.
std::vector<int32_t> truncated_candidates(const float* z, int64_t V, const std::vector<double>& q, double q_total,
                                          const SamplerParams& p) {
  std::vector<int32_t> ids(static_cast<size_t>(V));
  std::iota(ids.begin(), ids.end(), 0);
  auto before = [z](int32_t a, int32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); };
  int64_t limit = (p.top_k > 0 && p.top_k < V) ? p.top_k : V;
  if (limit < V) {
    std::nth_element(ids.begin(), ids.begin() + limit, ids.end(), before);
    ids.resize(static_cast<size_t>(limit));
    double mass = 0;
    for (int32_t id : ids) mass += q[id];
    q_total = mass;
  }
  if (p.top_p >= 1.0) {
    std::sort(ids.begin(), ids.end(), before);
    return ids;
  }
  // Smallest prefix (in descending order) whose mass reaches top_p
  // (HF TopPLogitsWarper keeps the same set up to ties at the boundary).
  const double need = p.top_p * q_total;
  int64_t sorted = std::min<int64_t>(static_cast<int64_t>(ids.size()), 256);
  for (;;) {
    std::partial_sort(ids.begin(), ids.begin() + sorted, ids.end(), before);
    double acc = 0;
    for (int64_t i = 0; i < sorted; ++i) {
      acc += q[ids[i]];
      if (acc >= need) {
        ids.resize(static_cast<size_t>(i + 1));
        return ids;
      }
    }
    if (sorted == static_cast<int64_t>(ids.size())) return ids;  // rounding: keep all
    sorted = std::min<int64_t>(static_cast<int64_t>(ids.size()), sorted * 8);
  }
}

}  // namespace

SampledToken sample_token(const float* z, int64_t V, const SamplerParams& params, Rng& rng) {
  validate(params);
  // Raw distribution statistics in double: lse and entropy = lse - E_p[z].
  double m = -INFINITY;
  int32_t argmax = 0;
  for (int64_t j = 0; j < V; ++j) {
    if (z[j] > m) {
      m = z[j];
      argmax = static_cast<int32_t>(j);
    }
  }
  if (!std::isfinite(m)) throw Error("sampler: non-finite logits (max = " + std::to_string(m) + ")");
  double se = 0, sez = 0;
  for (int64_t j = 0; j < V; ++j) {
    const double e = std::exp(static_cast<double>(z[j]) - m);
    se += e;
    sez += e * z[j];
  }
  const double lse = m + std::log(se);
  SampledToken out;
  out.entropy = static_cast<float>(lse - sez / se);
  int32_t token = argmax;
  if (params.temperature > 0) {
    std::vector<double> q(static_cast<size_t>(V));
    double total = 0;
    for (int64_t j = 0; j < V; ++j) {
      q[j] = std::exp((static_cast<double>(z[j]) - m) / params.temperature);
      total += q[j];
    }
    const double u = rng.uniform();
    if ((params.top_k > 0 && params.top_k < V) || params.top_p < 1.0) {
      auto ids = truncated_candidates(z, V, q, total, params);
      double mass = 0;
      for (int32_t id : ids) mass += q[id];
      double acc = 0, target = u * mass;
      token = ids.back();
      for (int32_t id : ids) {
        acc += q[id];
        if (acc > target) {
          token = id;
          break;
        }
      }
    } else {
      // No truncation: inverse CDF in id order.
      double acc = 0, target = u * total;
      token = static_cast<int32_t>(V - 1);
      for (int64_t j = 0; j < V; ++j) {
        acc += q[j];
        if (acc > target) {
          token = static_cast<int32_t>(j);
          break;
        }
      }
      while (q[token] == 0 && token > 0) --token;  // never land on a zero-mass tail token
    }
  }
  out.token = token;
  out.logprob = static_cast<float>(static_cast<double>(z[token]) - lse);
  return out;
}

std::vector<SampledToken> sample_rows(const torch::Tensor& logits, const std::vector<SamplerParams>& params,
                                      std::vector<Rng*>& rngs) {
  auto l = logits.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  const int64_t S = l.size(0), V = l.size(1);
  TORCH_CHECK(static_cast<int64_t>(params.size()) == S && static_cast<int64_t>(rngs.size()) == S,
              "sample_rows: one params/rng per row");
  std::vector<SampledToken> out(static_cast<size_t>(S));
  const float* base = l.data_ptr<float>();
  at::parallel_for(0, S, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = sample_token(base + i * V, V, params[i], *rngs[i]);
  });
  return out;
}

}  // namespace agentrl::model
