#include "agentrl/model/sampler.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "agentrl/core/error.h"

#include "simd.h"  // AGENTRL_ALWAYS_INLINE, -Wpsabi (this file's vectors are 4 doubles)

namespace agentrl::model {
namespace {

// The exponentials of a row (its log-sum-exp, entropy and tempered masses)
// in double precision, four at a time (GCC/Clang vector extensions): a
// scalar std::exp per id was most of the sampler's time (64 rows of 4096 ids:
// ~1.4 ms a step, more than the tiny model's forward at batch 1).
typedef double vd __attribute__((vector_size(32)));
typedef int64_t vl __attribute__((vector_size(32)));
constexpr int kLanes = 4;

AGENTRL_ALWAYS_INLINE vd splat(double x) { return vd{} + x; }
AGENTRL_ALWAYS_INLINE vd load4(const float* p) { return vd{p[0], p[1], p[2], p[3]}; }
AGENTRL_ALWAYS_INLINE double lane_sum(vd v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// exp(x) for x <= 0, lane-wise, within a few ulp of std::exp: n = round(x /
// ln 2) by the 1.5 * 2^52 trick, r = x - n ln 2 in two steps (Cody-Waite),
// e^r by its degree-13 Taylor polynomial on |r| <= ln2/2 (truncation below
// 1e-17 relative), times 2^n built in the exponent bits. Below -708 (where
// std::exp leaves the normal doubles) the result is 0: no double sum that
// holds the row max's e^0 = 1 can see it, and a zero mass is never drawn.
AGENTRL_ALWAYS_INLINE vd exp_le0(vd x) {
  const vd low = splat(-708.0), shift = splat(6755399441055744.0);  // 1.5 * 2^52
  const vl under = x < low;
  vl xb, lb;
  std::memcpy(&xb, &x, sizeof x);
  std::memcpy(&lb, &low, sizeof low);
  xb = (xb & ~under) | (lb & under);
  std::memcpy(&x, &xb, sizeof x);
  const vd t = x * 1.4426950408889634 + shift;
  const vd n = t - shift;  // in [-1021, 0]
  const vd r = (x - n * 0.6931471803691238) - n * 1.9082149292705877e-10;
  vd p = splat(1.0 / 6227020800.0);
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  vl tb;
  std::memcpy(&tb, &t, sizeof t);
  const vl bits = (tb - 0x4338000000000000LL + 1023) << 52;  // 2^n
  vd scale;
  std::memcpy(&scale, &bits, sizeof bits);
  const vd e = p * scale;
  vl eb;
  std::memcpy(&eb, &e, sizeof e);
  eb &= ~under;
  vd out;
  std::memcpy(&out, &eb, sizeof eb);
  return out;
}

void validate(const SamplerParams& p) {
  if (!(p.temperature >= 0)) throw ConfigError("sampling temperature must be >= 0, got " + std::to_string(p.temperature));
  if (!(p.top_p > 0 && p.top_p <= 1)) throw ConfigError("sampling top_p must be in (0, 1], got " + std::to_string(p.top_p));
  if (p.top_k < 0) throw ConfigError("sampling top_k must be >= 0, got " + std::to_string(p.top_k));
}

// Candidate ids sorted by descending logit (ties: lower id first), truncated
// by top-k and then by top-p on the tempered distribution `q` (unnormalised,
// total mass q_total). Sorting is partial: only as many ids as top-p needs.
std::vector<int32_t> truncated_candidates(const float* z, int64_t V, const double* q, double q_total,
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

// A row's raw distribution statistics (double): max logit and its first id,
// log-sum-exp and entropy = lse - E_p[z].
struct RowStats {
  double max = 0, lse = 0, entropy = 0;
  int32_t argmax = 0;
};

// The max and its first id (ties: the lower id), checked finite.
void row_max(const float* z, int64_t V, RowStats& st) {
  double m = -INFINITY;
  int32_t argmax = 0;
  for (int64_t j = 0; j < V; ++j) {
    if (z[j] > m) {
      m = z[j];
      argmax = static_cast<int32_t>(j);
    }
  }
  if (!std::isfinite(m)) throw Error("sampler: non-finite logits (max = " + std::to_string(m) + ")");
  st.max = m;
  st.argmax = argmax;
}

// sum_j e_j and sum_j e_j z_j with e_j = exp(z_j - max), over the ids
// [0, V - V % 4): the vector body, inlined into a plain and an AVX2 + FMA
// copy (chosen at run time).
AGENTRL_ALWAYS_INLINE void exp_sums_body(const float* z, int64_t V, double max, double& se, double& sez) {
  const vd m = splat(max);
  vd se4{}, sez4{};
  for (int64_t j = 0; j + kLanes <= V; j += kLanes) {
    const vd zj = load4(z + j);
    const vd e = exp_le0(zj - m);
    se4 += e;
    sez4 += e * zj;
  }
  se = lane_sum(se4), sez = lane_sum(sez4);
}

AGENTRL_ALWAYS_INLINE void tempered_body(const float* z, int64_t V, double max, double temperature, double* q) {
  const vd m = splat(max), inv = splat(1.0 / temperature);
  for (int64_t j = 0; j + kLanes <= V; j += kLanes) {
    const vd e = exp_le0((load4(z + j) - m) * inv);
    std::memcpy(q + j, &e, sizeof e);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) void exp_sums_avx2(const float* z, int64_t V, double max, double& se,
                                                       double& sez) {
  exp_sums_body(z, V, max, se, sez);
}
__attribute__((target("avx2,fma"))) void tempered_avx2(const float* z, int64_t V, double max, double temperature,
                                                       double* q) {
  tempered_body(z, V, max, temperature, q);
}
#else
void exp_sums_avx2(const float* z, int64_t V, double max, double& se, double& sez) {
  exp_sums_body(z, V, max, se, sez);
}
void tempered_avx2(const float* z, int64_t V, double max, double temperature, double* q) {
  tempered_body(z, V, max, temperature, q);
}
#endif

RowStats row_stats(const float* z, int64_t V) {
  RowStats st;
  row_max(z, V, st);
  double se = 0, sez = 0;
  if (detail::simd::have_avx2_fma()) exp_sums_avx2(z, V, st.max, se, sez);
  else exp_sums_body(z, V, st.max, se, sez);
  for (int64_t j = V - V % kLanes; j < V; ++j) {
    const double e = std::exp(static_cast<double>(z[j]) - st.max);
    se += e;
    sez += e * z[j];
  }
  st.lse = st.max + std::log(se);
  st.entropy = st.lse - sez / se;
  return st;
}

// q_j = exp((z_j - max) / temperature) for every id.
void tempered_masses(const float* z, int64_t V, double max, double temperature, double* q) {
  if (detail::simd::have_avx2_fma()) tempered_avx2(z, V, max, temperature, q);
  else tempered_body(z, V, max, temperature, q);
  for (int64_t j = V - V % kLanes; j < V; ++j) q[j] = std::exp((static_cast<double>(z[j]) - max) / temperature);
}

// The token of one row given its statistics.
SampledToken draw(const float* z, int64_t V, const SamplerParams& params, Rng& rng, const RowStats& st) {
  SampledToken out;
  out.entropy = static_cast<float>(st.entropy);
  int32_t token = st.argmax;
  if (params.temperature > 0) {
    std::vector<double> masses(static_cast<size_t>(V));  // the tempered mass of every id
    tempered_masses(z, V, st.max, params.temperature, masses.data());
    const double* q = masses.data();
    double total = 0;
    for (int64_t j = 0; j < V; ++j) total += q[j];
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
  out.logprob = static_cast<float>(static_cast<double>(z[token]) - st.lse);
  return out;
}

}  // namespace

SampledToken sample_token(const float* z, int64_t V, const SamplerParams& params, Rng& rng) {
  validate(params);
  return draw(z, V, params, rng, row_stats(z, V));
}

std::vector<SampledToken> sample_rows(const torch::Tensor& logits, const std::vector<SamplerParams>& params,
                                      std::vector<Rng*>& rngs) {
  auto l = logits.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  const int64_t S = l.size(0), V = l.size(1);
  TORCH_CHECK(static_cast<int64_t>(params.size()) == S && static_cast<int64_t>(rngs.size()) == S,
              "sample_rows: one params/rng per row");
  for (const auto& p : params) validate(p);
  std::vector<SampledToken> out(static_cast<size_t>(S));
  const float* base = l.data_ptr<float>();
  at::parallel_for(0, S, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      out[i] = draw(base + i * V, V, params[i], *rngs[i], row_stats(base + i * V, V));
    }
  });
  return out;
}

namespace {

// Per-row parameters as [S] tensors on `device` (float64 / int64).
struct RowParams {
  torch::Tensor temperature, top_k, top_p, uniform, greedy, truncated;
  bool any_sampled = false, any_truncated = false, all_truncated = true;
};

RowParams row_params(const std::vector<SamplerParams>& params, std::vector<Rng*>& rngs, int64_t V,
                     torch::Device device) {
  const auto S = static_cast<int64_t>(params.size());
  std::vector<double> t(S), p(S), u(S);
  std::vector<int64_t> k(S);
  std::vector<uint8_t> trunc(S);
  RowParams r;
  for (int64_t i = 0; i < S; ++i) {
    validate(params[i]);
    const bool sampled = params[i].temperature > 0;
    trunc[i] = sampled && ((params[i].top_k > 0 && params[i].top_k < V) || params[i].top_p < 1.0);
    r.any_sampled |= sampled;
    r.any_truncated |= trunc[i] != 0;
    r.all_truncated &= !sampled || trunc[i] != 0;
    t[i] = params[i].temperature;
    k[i] = (params[i].top_k > 0 && params[i].top_k < V) ? params[i].top_k : V;
    p[i] = params[i].top_p;
    u[i] = params[i].temperature > 0 ? rngs[i]->uniform() : 0.0;  // one draw per sampled token, as sample_token
  }
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  r.truncated = torch::tensor(std::vector<int64_t>(trunc.begin(), trunc.end()), torch::kInt64).to(device).gt(0);
  r.temperature = torch::tensor(t, f64).to(device);
  r.top_p = torch::tensor(p, f64).to(device);
  r.uniform = torch::tensor(u, f64).to(device);
  r.top_k = torch::tensor(k, torch::kInt64).to(device);
  r.greedy = r.temperature.le(0);
  return r;
}

// Inverse CDF over the candidates in id order: the first id whose cumulative
// tempered mass exceeds u * total, moved back to the last id with mass.
torch::Tensor draw_in_id_order(const torch::Tensor& q, const torch::Tensor& u) {
  const int64_t V = q.size(1);
  auto cdf = q.cumsum(1);
  auto target = (u * cdf.select(1, V - 1)).unsqueeze(1);
  auto token = cdf.le(target).sum(1).clamp_max(V - 1);  // ids whose cdf <= target come before it
  auto ids = torch::arange(V, q.options().dtype(torch::kInt64)).expand_as(q);
  auto last_with_mass = std::get<0>(torch::where(q.gt(0), ids, torch::zeros_like(ids)).cummax(1));
  return last_with_mass.gather(1, token.unsqueeze(1)).squeeze(1);
}

// Top-k, then top-p on the tempered mass, over the candidates sorted by
// descending logit (stable: lower id first on ties), then inverse CDF.
torch::Tensor draw_truncated(const torch::Tensor& z, const torch::Tensor& q, const RowParams& r) {
  const int64_t V = q.size(1);
  auto sorted = std::get<1>(z.sort(/*stable=*/true, /*dim=*/1, /*descending=*/true));
  auto qs = q.gather(1, sorted);
  auto rank = torch::arange(V, r.top_k.options()).unsqueeze(0);
  qs = qs * rank.lt(r.top_k.unsqueeze(1)).to(qs.scalar_type());
  auto cum = qs.cumsum(1);
  auto need = (r.top_p * cum.select(1, V - 1)).unsqueeze(1);
  // Keep the smallest prefix whose mass reaches top_p: rank i is kept while
  // the mass before it is below the need (all of them when top_p = 1).
  auto before = cum - qs;
  auto keep = before.lt(need).logical_or(r.top_p.ge(1.0).unsqueeze(1));
  qs = qs * keep.to(qs.scalar_type());
  auto pos = draw_in_id_order(qs, r.uniform);
  return sorted.gather(1, pos.unsqueeze(1)).squeeze(1);
}

}  // namespace

std::vector<SampledToken> sample_rows_on_device(const torch::Tensor& logits, const std::vector<SamplerParams>& params,
                                                std::vector<Rng*>& rngs) {
  torch::NoGradGuard no_grad;
  const int64_t S = logits.size(0), V = logits.size(1);
  TORCH_CHECK(static_cast<int64_t>(params.size()) == S && static_cast<int64_t>(rngs.size()) == S,
              "sample_rows_on_device: one params/rng per row");
  if (S == 0) return {};
  const auto r = row_params(params, rngs, V, logits.device());
  // Raw distribution statistics in double: lse and entropy = lse - E_p[z].
  auto z = logits.detach().to(torch::kFloat32).to(torch::kFloat64);
  auto m = std::get<0>(z.max(1, /*keepdim=*/true));
  auto lse = z.logsumexp(1);
  auto entropy = lse - (torch::softmax(z, 1) * z).sum(1);
  auto token = z.argmax(1);  // greedy: the first maximal id
  if (r.any_sampled) {
    auto temp = torch::where(r.greedy, torch::ones_like(r.temperature), r.temperature).unsqueeze(1);
    auto q = ((z - m) / temp).exp();
    // Rows without truncation draw in id order, the others over sorted candidates.
    torch::Tensor drawn;
    if (!r.any_truncated) drawn = draw_in_id_order(q, r.uniform);
    else if (r.all_truncated) drawn = draw_truncated(z, q, r);
    else drawn = torch::where(r.truncated, draw_truncated(z, q, r), draw_in_id_order(q, r.uniform));
    token = torch::where(r.greedy, token, drawn);
  }
  auto logprob = z.gather(1, token.unsqueeze(1)).squeeze(1) - lse;
  // The one device -> host transfer: token, logprob, entropy and the row max.
  auto packed = torch::stack({token.to(torch::kFloat64), logprob, entropy, m.squeeze(1)}).to(torch::kCPU);
  auto a = packed.accessor<double, 2>();
  for (int64_t i = 0; i < S; ++i)
    if (!std::isfinite(a[3][i])) throw Error("sampler: non-finite logits (max = " + std::to_string(a[3][i]) + ")");
  std::vector<SampledToken> out(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) {
    out[i].token = static_cast<int32_t>(a[0][i]);
    out[i].logprob = static_cast<float>(a[1][i]);
    out[i].entropy = static_cast<float>(a[2][i]);
  }
  return out;
}

}  // namespace agentrl::model
