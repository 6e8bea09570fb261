// The fused CPU kernels of the engine's cached forward (infer_kernels.h)
// against the ATen ops they replace: each kernel alone (RoPE and the KV
// writes bit for bit, the norms, SiLU gate and decode attention within float
// rounding), bad shapes, and TransformerLM::forward_cached with fused_cpu on
// and off over steps of every kind (prefill chunks, a lone decode row, many
// decode rows, a mix) for the qwen2, qwen3 and llama layouts.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <string>

#include "../../src/model/infer_kernels.h"
#include "agentrl/model/attention.h"
#include "agentrl/model/kv_cache.h"
#include "agentrl/model/norm.h"
#include "agentrl/model/rope.h"
#include "tiny_model.h"

using namespace agentrl::model;
using agentrl::model::test_util::max_abs_diff;
using agentrl::model::test_util::random_ids;
using agentrl::model::test_util::tiny_args;
using agentrl::model::test_util::tiny_model;
namespace kern = agentrl::model::detail;

namespace {

ModelArgs rope_args() {
  ModelArgs a = tiny_args();
  a.rope_theta = 10000.0;
  return a;
}

}  // namespace

TEST(InferKernels, RopeEqualsTheAtenRotationBitForBit) {
  torch::manual_seed(3);
  const int64_t N = 7, heads = 3, D = 16;
  auto x = torch::randn({N, heads, D}) * 3;
  auto pos = torch::tensor({0, 1, 5, 17, 100, 2047, 40000}, torch::kInt64);
  auto inv = rope_inv_freq(rope_args(), D, torch::kFloat32);
  auto [cos, sin] = rope_cos_sin(pos, inv, torch::kFloat32);  // [N, D]
  auto want = apply_rope(x, cos.unsqueeze(-2), sin.unsqueeze(-2));
  auto got = x.clone();
  kern::rope_(got, cos, sin);
  EXPECT_TRUE(torch::equal(got, want)) << max_abs_diff(got, want);
}

TEST(InferKernels, NormsAndSiluGateMatchTheAtenOps) {
  torch::manual_seed(4);
  for (int64_t H : {5, 8, 64, 131}) {
    auto x = torch::randn({6, H}) * 4, a = torch::randn({6, H}), w = 1 + 0.3 * torch::randn({H});
    auto want = agentrl::model::rms_norm(x, w, 1e-6);
    EXPECT_LT(max_abs_diff(kern::rms_norm(x, w, 1e-6), want), 1e-6 * want.abs().max().item<double>()) << H;
    auto h = x.clone();
    auto y = kern::add_rms_norm_(h, a, w, 1e-6);
    EXPECT_TRUE(torch::equal(h, x + a)) << "the residual add is one float add per element";
    auto want2 = agentrl::model::rms_norm(x + a, w, 1e-6);
    EXPECT_LT(max_abs_diff(y, want2), 1e-6 * want2.abs().max().item<double>()) << H;
    auto g = torch::randn({3, H}) * 6, u = torch::randn({3, H});
    auto want3 = torch::silu(g) * u;
    EXPECT_LT(max_abs_diff(kern::silu_mul(g, u), want3), 1e-6 * want3.abs().max().item<double>()) << H;
  }
  // Leading dims are rows: a [N, heads, D] tensor is normed per head (Qwen3's q/k norms).
  auto q = torch::randn({4, 3, 8}), w = torch::rand({8}) + 0.5;
  EXPECT_LT(max_abs_diff(kern::rms_norm(q, w, 1e-6), agentrl::model::rms_norm(q, w, 1e-6)), 1e-5);
}

// The vectorised SiLU gate over many parallel chunks (with ragged tails) and
// over the whole float range: saturated ends, zero, and arguments whose exp
// underflows.
TEST(InferKernels, SiluMulEqualsAtenAcrossChunksAndTheFloatRange) {
  auto g = torch::linspace(-120, 120, 100003), u = torch::randn({100003});
  auto want = torch::silu(g) * u;
  auto got = kern::silu_mul(g, u);
  EXPECT_LT(max_abs_diff(got, want), 1e-6 * want.abs().max().item<double>());
  const auto rel = ((got - want).abs() / want.abs().clamp_min(1e-30)).masked_select(want.abs() > 1e-30);
  EXPECT_LT(rel.max().item<double>(), 2e-6) << "every element within a few float roundings";
  auto edge = torch::tensor({-1e30f, -88.0f, -0.0f, 0.0f, 1e-30f, 88.0f, 1e30f});
  auto ones = torch::ones({7});
  EXPECT_LT(max_abs_diff(kern::silu_mul(edge, ones), torch::silu(edge)), 1e-6 * 1e30);
  EXPECT_EQ(kern::silu_mul(edge, ones)[6].item<float>(), 1e30f);
  EXPECT_EQ(kern::silu_mul(edge, ones)[0].item<float>(), 0.0f);
}

TEST(InferKernels, KvWriteEqualsIndexPut) {
  torch::manual_seed(5);
  auto K = torch::randn({4, 2, 10, 8}), V = torch::randn({4, 2, 10, 8});
  auto k = torch::randn({3, 2, 8}), v = torch::randn({3, 2, 8});
  const std::vector<int64_t> slots = {3, 0, 3}, positions = {9, 0, 4};
  auto K2 = K.clone(), V2 = V.clone();
  using torch::indexing::Slice;
  K2.index_put_({torch::tensor(slots), Slice(), torch::tensor(positions)}, k);
  V2.index_put_({torch::tensor(slots), Slice(), torch::tensor(positions)}, v);
  kern::kv_write(K, V, k, v, slots, positions);
  EXPECT_TRUE(torch::equal(K, K2));
  EXPECT_TRUE(torch::equal(V, V2));
  EXPECT_THROW(kern::kv_write(K, V, k, v, {3, 0, 4}, positions), c10::Error);  // slot 4 of 4
  EXPECT_THROW(kern::kv_write(K, V, k, v, slots, {9, 0, 10}), c10::Error);     // position 10 of 10
}

// D = 12: head sizes that are not a multiple of the kernel's 8 lanes.
TEST(InferKernels, DecodeAttentionMatchesTheAtenKernelAndIgnoresUnwrittenKeys) {
  for (const int64_t D : {16, 12}) {
    SCOPED_TRACE("D " + std::to_string(D));
    torch::manual_seed(6);
    const int64_t S = 5, Hkv = 2, cap = 40, Hq = 6;
    auto K = torch::randn({S, Hkv, cap, D}), V = torch::randn({S, Hkv, cap, D});
    const std::vector<int64_t> slots = {4, 1, 4, 0}, lengths = {1, 40, 17, 9};
    for (size_t b = 0; b < slots.size(); ++b) {  // past each row's length: garbage, even NaN
      K[slots[b]].narrow(1, lengths[b], cap - lengths[b]).fill_(std::numeric_limits<float>::quiet_NaN());
      V[slots[b]].narrow(1, lengths[b], cap - lengths[b]).fill_(std::numeric_limits<float>::quiet_NaN());
    }
    // slot 4 appears twice with different lengths: row 0 sees key 0 only.
    K[4].narrow(1, 1, 16).normal_();
    V[4].narrow(1, 1, 16).normal_();
    auto q = torch::randn({4, Hq, D}) * 2;
    auto slots_t = torch::tensor(slots), len_t = torch::tensor(lengths);
    auto hidden = torch::arange(cap).unsqueeze(0).ge(len_t.unsqueeze(1));  // [B, cap]
    auto want = decode_attention(q, K, V, slots_t, hidden, AttentionKernel::kEager);
    auto got = kern::decode_attention(q, K, V, slots, lengths);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_FALSE(got.isnan().any().item<bool>());
    EXPECT_LT(max_abs_diff(got, want), 1e-5);
    // A row with one key returns that key's value exactly.
    EXPECT_TRUE(torch::equal(got[0][0], V[4][0][0]));
    EXPECT_THROW(kern::decode_attention(q, K, V, slots, {1, 41, 17, 9}), c10::Error);  // past the capacity
    EXPECT_THROW(kern::decode_attention(q, K, V, slots, {0, 40, 17, 9}), c10::Error);  // no key at all
  }
}

TEST(InferKernels, OnlyCpuFloat32ContiguousTensorsApply) {
  auto x = torch::randn({4, 6});
  EXPECT_TRUE(kern::infer_kernels_apply({x}));
  EXPECT_FALSE(kern::infer_kernels_apply({x.to(torch::kFloat64)}));
  EXPECT_FALSE(kern::infer_kernels_apply({x.t()}));
  EXPECT_FALSE(kern::infer_kernels_apply({x, torch::Tensor()}));
  EXPECT_THROW(kern::rms_norm(x, torch::ones({5}), 1e-6), c10::Error);
  EXPECT_THROW(kern::silu_mul(x, torch::randn({4, 5})), c10::Error);
}

// One ragged cached step of every kind, the same calls with fused_cpu on and
// off: the final hidden states agree within float rounding and so do the
// caches (the keys and values that later steps read).
TEST(FusedCachedForward, EveryKindOfStepEqualsTheAtenPath) {
  for (const std::string type : {"qwen2", "qwen3", "llama"}) {
    auto a = tiny_args(type);
    auto m = tiny_model(a);
    torch::NoGradGuard g;
    KvCache fused(a, 4, 24, torch::kFloat32, torch::kCPU), plain(a, 4, 24, torch::kFloat32, torch::kCPU);
    auto seq = [&](int i, int64_t n) { return random_ids(1, n, a.vocab_size, 40 + i)[0]; };
    auto x = seq(0, 12), y = seq(1, 9), z = seq(2, 7);
    struct Step {
      torch::Tensor tokens;
      std::vector<CacheSegment> segs;
    };
    const std::vector<Step> steps = {
        {x.narrow(0, 0, 10), {{2, 0, 10}}},                                            // one prefill chunk
        {torch::cat({y.narrow(0, 0, 6), z.narrow(0, 0, 5)}), {{0, 0, 6}, {3, 0, 5}}},  // two chunks (a batch)
        {x.narrow(0, 10, 1), {{2, 10, 1}}},                                            // a lone decode row
        {torch::cat({x.narrow(0, 11, 1), y.narrow(0, 6, 1), z.narrow(0, 5, 1)}),       // decode rows only
         {{2, 11, 1}, {0, 6, 1}, {3, 5, 1}}},
        {torch::cat({y.narrow(0, 7, 2), z.narrow(0, 6, 1)}), {{0, 7, 2}, {3, 6, 1}}},  // a chunk and a decode row
    };
    for (size_t i = 0; i < steps.size(); ++i) {
      auto got = m->forward_cached(steps[i].tokens, steps[i].segs, fused, 1, /*fused_cpu=*/true);
      auto want = m->forward_cached(steps[i].tokens, steps[i].segs, plain, 1, /*fused_cpu=*/false);
      ASSERT_EQ(got.sizes(), want.sizes()) << type << " step " << i;
      EXPECT_LT(max_abs_diff(got, want), 2e-5) << type << " step " << i;
      for (int64_t l = 0; l < a.num_hidden_layers; ++l) {
        // Only written positions are compared: the rest of a slot is whatever the allocation held.
        for (const auto& s : steps[i].segs) {
          auto kf = fused.keys(l)[s.slot].narrow(1, 0, s.start + s.length);
          auto kp = plain.keys(l)[s.slot].narrow(1, 0, s.start + s.length);
          EXPECT_LT(max_abs_diff(kf, kp), 2e-5) << type << " step " << i << " layer " << l;
          auto vf = fused.values(l)[s.slot].narrow(1, 0, s.start + s.length);
          auto vp = plain.values(l)[s.slot].narrow(1, 0, s.start + s.length);
          EXPECT_LT(max_abs_diff(vf, vp), 2e-5) << type << " step " << i << " layer " << l;
        }
      }
    }
  }
}

// Steps of tens of rows run their layers split by rows, one range per
// intra-op thread (transformer.cpp, cached_layer_rows; ranges cut through
// segments): result and caches equal the ATen path's and the unsplit fused
// path's (one thread) within float rounding, for every layout, at 2 and 3
// threads.
TEST(FusedCachedForward, StepsSplitByRowsEqualTheAtenAndUnsplitPaths) {
  struct RestoreThreads {  // also when an ASSERT returns early
    int n = at::get_num_threads();
    ~RestoreThreads() { at::set_num_threads(n); }
  } restore;
  for (const std::string type : {"qwen2", "qwen3", "llama"}) {
    for (int threads : {2, 3}) {
      auto a = tiny_args(type);
      auto m = tiny_model(a);
      torch::NoGradGuard g;
      auto cache = [&] { return KvCache(a, 4, 64, torch::kFloat32, torch::kCPU); };
      KvCache split = cache(), unsplit = cache(), plain = cache();
      auto seq = [&](int i, int64_t n) { return random_ids(1, n, a.vocab_size, 90 + i)[0]; };
      auto x = seq(0, 40), y = seq(1, 40), z = seq(2, 40), w = seq(3, 30);
      struct Step {
        torch::Tensor tokens;
        std::vector<CacheSegment> segs;
      };
      const std::vector<Step> steps = {
          {torch::cat({x.narrow(0, 0, 20), y.narrow(0, 0, 17)}), {{0, 0, 20}, {1, 0, 17}}},  // 37 rows of prefill
          {torch::cat({x.narrow(0, 20, 1), y.narrow(0, 17, 12), z.narrow(0, 0, 30)}),        // decode, continued, new
           {{0, 20, 1}, {1, 17, 12}, {2, 0, 30}}},
          {torch::cat({x.narrow(0, 21, 1), y.narrow(0, 29, 11), z.narrow(0, 30, 10), w.narrow(0, 0, 30)}),  // 52
           {{0, 21, 1}, {1, 29, 11}, {2, 30, 10}, {3, 0, 30}}},
      };
      for (size_t i = 0; i < steps.size(); ++i) {
        at::set_num_threads(threads);
        auto got = m->forward_cached(steps[i].tokens, steps[i].segs, split, 1, /*fused_cpu=*/true);
        at::set_num_threads(1);
        auto one = m->forward_cached(steps[i].tokens, steps[i].segs, unsplit, 1, /*fused_cpu=*/true);
        auto want = m->forward_cached(steps[i].tokens, steps[i].segs, plain, 1, /*fused_cpu=*/false);
        ASSERT_EQ(got.sizes(), want.sizes()) << type << " step " << i;
        EXPECT_LT(max_abs_diff(got, want), 2e-5) << type << " threads " << threads << " step " << i;
        EXPECT_LT(max_abs_diff(got, one), 2e-5) << type << " threads " << threads << " step " << i;
        for (int64_t l = 0; l < a.num_hidden_layers; ++l) {
          for (const auto& s : steps[i].segs) {
            const int64_t n = s.start + s.length;
            EXPECT_LT(max_abs_diff(split.keys(l)[s.slot].narrow(1, 0, n), plain.keys(l)[s.slot].narrow(1, 0, n)),
                      2e-5)
                << type << " step " << i << " layer " << l;
            EXPECT_LT(
                max_abs_diff(split.values(l)[s.slot].narrow(1, 0, n), plain.values(l)[s.slot].narrow(1, 0, n)), 2e-5)
                << type << " step " << i << " layer " << l;
          }
        }
      }
    }
  }
}

// A fused step of more rows than one block (512): the step runs block after
// block, a long segment split between blocks; the result and the caches are
// the ATen path's, which runs the step at once.
TEST(FusedCachedForward, AStepOfManyRowsInBlocksEqualsTheAtenPath) {
  auto a = tiny_args("qwen2");
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  KvCache fused(a, 5, 720, torch::kFloat32, torch::kCPU), plain(a, 5, 720, torch::kFloat32, torch::kCPU);
  auto seq = [&](int i, int64_t n) { return random_ids(1, n, a.vocab_size, 70 + i)[0]; };
  auto v = seq(0, 700), w = seq(1, 300), x = seq(2, 400), y = seq(3, 2), z = seq(4, 250);
  // Earlier tokens of v and y in the cache: the big step continues them.
  for (auto* c : {&fused, &plain}) {
    m->forward_cached(torch::cat({v.narrow(0, 0, 100), y.narrow(0, 0, 1)}), {{0, 0, 100}, {3, 0, 1}}, *c, 1,
                      c == &fused);
  }
  // 1551 rows: blocks of 512 split v's 600 new rows and w's and x's.
  const std::vector<CacheSegment> segs = {{0, 100, 600}, {1, 0, 300}, {3, 1, 1}, {2, 0, 400}, {4, 0, 250}};
  auto tokens = torch::cat({v.narrow(0, 100, 600), w, y.narrow(0, 1, 1), x, z});
  auto got = m->forward_cached(tokens, segs, fused, 1, /*fused_cpu=*/true);
  auto want = m->forward_cached(tokens, segs, plain, 1, /*fused_cpu=*/false);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_LT(max_abs_diff(got, want), 2e-5);
  for (int64_t l = 0; l < a.num_hidden_layers; ++l) {
    for (const auto& s : segs) {
      const int64_t n = s.start + s.length;
      EXPECT_LT(max_abs_diff(fused.keys(l)[s.slot].narrow(1, 0, n), plain.keys(l)[s.slot].narrow(1, 0, n)), 2e-5)
          << "layer " << l << " slot " << s.slot;
      EXPECT_LT(max_abs_diff(fused.values(l)[s.slot].narrow(1, 0, n), plain.values(l)[s.slot].narrow(1, 0, n)), 2e-5)
          << "layer " << l << " slot " << s.slot;
    }
  }
  // Bad steps fail with the one-step path's messages, before any block writes
  // the cache: too few tokens, and a segment of no tokens.
  auto fails_with = [&](const torch::Tensor& t, const std::vector<CacheSegment>& s, const std::string& message) {
    auto before = fused.keys(0).clone();
    try {
      m->forward_cached(t, s, fused, 1, true);
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
    // As bits: unwritten cache memory may hold NaNs, which never equal themselves.
    EXPECT_TRUE(torch::equal(fused.keys(0).view(torch::kInt32), before.view(torch::kInt32))) << message;
  };
  fails_with(tokens.narrow(0, 0, 1550), segs, "forward_cached: token count != sum of lengths");
  auto with_empty = segs;
  with_empty.push_back({0, 700, 0});
  fails_with(tokens, with_empty, "forward_cached: segment exceeds the KV slot capacity");
}
