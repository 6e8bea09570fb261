// forward_cached with decode_kv_multiple and pad rows (what the engine sends
// under engine.static_decode_shapes): the real rows' outputs are unchanged,
// and two decode steps with a different number of real rows (same power of
// two) and different lengths (same multiple) run ops of equal shapes, the
// precondition for replaying one captured CUDA graph. The op shapes come from
// a RecordFunction observer over every ATen call the step makes.
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "agentrl/model/kv_cache.h"
#include "agentrl/model/transformer.h"
#include "tiny_model.h"

using namespace agentrl::model;
using namespace agentrl::model::test_util;

namespace {

thread_local std::vector<std::string>* g_ops = nullptr;

std::unique_ptr<at::ObserverContext> record_op(const at::RecordFunction& fn) {
  if (!g_ops) return nullptr;
  std::string s = fn.name();
  for (const auto& v : fn.inputs()) {
    if (!v.isTensor()) continue;
    s += " [";
    for (auto d : v.toTensor().sizes()) s += std::to_string(d) + ",";
    s += "]";
  }
  g_ops->push_back(s);
  return nullptr;
}

// Every ATen call `f` makes on this thread, as "name [sizes] [sizes]...".
std::vector<std::string> op_shapes(const std::function<void()>& f) {
  std::vector<std::string> ops;
  g_ops = &ops;
  auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(record_op).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  f();
  at::removeCallback(handle);
  g_ops = nullptr;
  return ops;
}

constexpr int64_t kCap = 64, kMultiple = 32, kScratch = 4;
const std::vector<int64_t> kLengths = {5, 9, 12, 20};  // cached tokens of slots 0-3

// A cache whose slots 0-3 hold prefixes of kLengths tokens of `seqs`.
void prefill(TransformerLM& m, KvCache& cache, const std::vector<torch::Tensor>& seqs) {
  for (size_t i = 0; i < kLengths.size(); ++i)
    m->forward_cached(seqs[i].narrow(0, 0, kLengths[i]), {{static_cast<int64_t>(i), 0, kLengths[i]}}, cache);
}

}  // namespace

TEST(StaticDecodeShapes, DecodeStepsWithinABucketRunOpsOfEqualShapesAndKeepTheRealRows) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  std::vector<torch::Tensor> seqs;
  for (int i = 0; i < 4; ++i) seqs.push_back(random_ids(1, 30, a.vocab_size, 40 + i)[0]);
  KvCache padded(a, 5, kCap, torch::kFloat32, torch::kCPU), plain(a, 5, kCap, torch::kFloat32, torch::kCPU);
  prefill(m, padded, seqs);
  prefill(m, plain, seqs);
  auto next = [&](int i, int64_t at) { return seqs[i].narrow(0, at, 1); };
  // Step A: slots 0-2 decode (3 real rows, longest 13), one pad row in the scratch slot.
  auto tok_a = torch::cat({next(0, 5), next(1, 9), next(2, 12)});
  const std::vector<CacheSegment> real_a = {{0, 5, 1}, {1, 9, 1}, {2, 12, 1}};
  auto seg_a = real_a;
  seg_a.push_back({kScratch, 0, 1});
  auto feed_a = torch::cat({tok_a, torch::zeros({1}, tok_a.options())});
  torch::Tensor h_a;
  auto ops_a = op_shapes([&] { h_a = m->forward_cached(feed_a, seg_a, padded, kMultiple); });
  // Step B: all four slots decode (4 real rows, longest 21): same power of two, same multiple of keys.
  auto tok_b = torch::cat({next(0, 6), next(1, 10), next(2, 13), next(3, 20)});
  auto ops_b = op_shapes([&] { m->forward_cached(tok_b, {{0, 6, 1}, {1, 10, 1}, {2, 13, 1}, {3, 20, 1}}, padded,
                                                 kMultiple); });
  ASSERT_GT(ops_a.size(), 20u);
  EXPECT_EQ(ops_a, ops_b);
  // The real rows of the padded step equal the unpadded step's.
  auto want = m->forward_cached(tok_a, real_a, plain);
  ASSERT_EQ(h_a.size(0), 4);
  EXPECT_LT(max_abs_diff(h_a.narrow(0, 0, 3), want), 1e-5);
  // Without the padding the two steps' shapes differ (rows 3 vs 4, keys 13 vs 21).
  auto ops_c = op_shapes([&] { m->forward_cached(tok_b, {{0, 6, 1}, {1, 10, 1}, {2, 13, 1}, {3, 20, 1}}, plain); });
  auto tok_d = torch::cat({next(0, 7), next(1, 11), next(2, 14)});
  auto ops_d = op_shapes([&] { m->forward_cached(tok_d, {{0, 7, 1}, {1, 11, 1}, {2, 14, 1}}, plain); });
  EXPECT_NE(ops_c, ops_d);
}

TEST(StaticDecodeShapes, KeysArePaddedToTheMultipleButNotPastTheCapacity) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  torch::NoGradGuard g;
  auto seq = random_ids(1, 60, a.vocab_size, 50)[0];
  KvCache padded(a, 2, 60, torch::kFloat32, torch::kCPU), plain(a, 2, 60, torch::kFloat32, torch::kCPU);
  for (auto* c : {&padded, &plain}) {
    m->forward_cached(seq.narrow(0, 0, 50), {{0, 0, 50}}, *c);
    m->forward_cached(seq.narrow(0, 0, 10), {{1, 0, 10}}, *c);
  }
  // 51 keys round up to 64 > capacity 60: capped, and the outputs stay equal.
  const std::vector<CacheSegment> step = {{0, 50, 1}, {1, 10, 1}};
  auto tok = torch::cat({seq.narrow(0, 50, 1), seq.narrow(0, 10, 1)});
  auto h = m->forward_cached(tok, step, padded, 32);
  EXPECT_LT(max_abs_diff(h, m->forward_cached(tok, step, plain)), 1e-5);
}
