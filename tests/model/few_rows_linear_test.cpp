// The engine's few-row product (src/model/few_rows_linear.h) against
// torch::linear: every row count it takes, inner sizes with and without a
// tail beyond the 8 lanes, odd output counts, bias or none, both forms
// (lane and panel); within a form a row's output does not depend on the
// other rows of the call nor on the thread count (bit for bit); operands it
// does not take are refused.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "../../src/model/few_rows_linear.h"

namespace kern = agentrl::model::detail;

namespace {

// |y - x w^T - b| per output, over the sum of |x_k w_k| (+ |b|): the error
// bound of a float dot product in any summation order is a few ulps of it.
double worst_relative_error(const torch::Tensor& y, const torch::Tensor& x, const torch::Tensor& w,
                            const torch::Tensor& b) {
  auto x64 = x.to(torch::kFloat64), w64 = w.to(torch::kFloat64);
  auto ref = torch::matmul(x64, w64.t());
  auto scale = torch::matmul(x64.abs(), w64.abs().t());
  if (b.defined()) {
    ref = ref + b.to(torch::kFloat64);
    scale = scale + b.to(torch::kFloat64).abs();
  }
  return ((y.to(torch::kFloat64) - ref).abs() / (scale + 1e-30)).max().item<double>();
}

}  // namespace

TEST(FewRowsLinear, EqualsTorchLinearForEveryRowCountInnerTailAndBias) {
  torch::manual_seed(11);
  for (int64_t K : {1, 7, 8, 13, 64, 899}) {
    for (int64_t N : {1, 3, 5, 67}) {
      auto w = torch::randn({N, K});
      auto b = torch::randn({N});
      for (int64_t M = 1; M <= kern::kFewRowsMax; ++M) {
        auto x = torch::randn({M, K});
        for (bool with_bias : {false, true}) {
          const auto bias = with_bias ? b : torch::Tensor();
          ASSERT_TRUE(kern::few_rows_linear_applies(x, w, bias));
          auto y = kern::few_rows_linear(x, w, bias);
          ASSERT_EQ(y.sizes(), (std::vector<int64_t>{M, N}));
          EXPECT_LT(worst_relative_error(y, x, w, bias), 1e-5) << "M " << M << " K " << K << " N " << N;
          auto aten = torch::nn::functional::linear(x, w, bias);
          EXPECT_TRUE(torch::allclose(y, aten, 1e-4, 1e-4)) << "M " << M << " K " << K << " N " << N;
        }
      }
    }
  }
}

// Within each form (lane: up to kLaneFormMaxRows rows, panel: above) a
// row's bits do not depend on the other rows nor on the threads; the panel
// form also packs rows into 16- and 8-row panels, which must not matter.
TEST(FewRowsLinear, ARowsOutputIsTheSameBitsWhateverTheOtherRowsAndTheThreads) {
  torch::manual_seed(12);
  const int64_t K = 901, N = 1000;  // N over the parallel grain: several tasks
  auto w = torch::randn({N, K});
  auto b = torch::randn({N});
  auto x = torch::randn({kern::kFewRowsMax, K});
  const int threads = at::get_num_threads();
  auto lanes = kern::few_rows_linear(x.narrow(0, 0, kern::kLaneFormMaxRows).contiguous(), w, b);
  auto panels = kern::few_rows_linear(x, w, b);
  for (int64_t M = 1; M <= kern::kFewRowsMax; ++M) {
    const int64_t from = M <= kern::kLaneFormMaxRows ? kern::kLaneFormMaxRows - M : kern::kFewRowsMax - M;
    auto part = kern::few_rows_linear(x.narrow(0, from, M).contiguous(), w, b);
    const auto& all = M <= kern::kLaneFormMaxRows ? lanes : panels;
    EXPECT_TRUE(torch::equal(part, all.narrow(0, from, M))) << M << " rows from row " << from;
  }
  at::set_num_threads(1);
  auto one_thread = kern::few_rows_linear(x, w, b);
  auto one_thread_lanes = kern::few_rows_linear(x.narrow(0, 0, kern::kLaneFormMaxRows).contiguous(), w, b);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one_thread, panels));
  EXPECT_TRUE(torch::equal(one_thread_lanes, lanes));
}

TEST(FewRowsLinear, RefusesWhatItDoesNotTake) {
  auto w = torch::randn({4, 8});
  EXPECT_FALSE(kern::few_rows_linear_applies(torch::randn({kern::kFewRowsMax + 1, 8}), w, {}));
  EXPECT_FALSE(kern::few_rows_linear_applies(torch::randn({2, 7}), w, {}));
  EXPECT_FALSE(kern::few_rows_linear_applies(torch::randn({2, 8}, torch::kFloat64), w, {}));
  EXPECT_FALSE(kern::few_rows_linear_applies(torch::randn({8, 2}).t(), w, {}));  // not contiguous
  EXPECT_FALSE(kern::few_rows_linear_applies(torch::randn({2, 8}), w, torch::randn({5})));
  EXPECT_FALSE(kern::few_rows_linear_applies(torch::randn({1, 2, 8}), w, {}));
  try {
    kern::few_rows_linear(torch::randn({2, 7}), w, {});
    ADD_FAILURE() << "expected a c10::Error";
  } catch (const c10::Error& e) {
    const std::string msg = e.what_without_backtrace();
    EXPECT_NE(msg.find("few_rows_linear: x [2, 7], w [4, 8]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x [M <= 64, K], w [N, K], bias [N]"), std::string::npos) << msg;
  }
}
