// Specifications of gradient (activation) checkpointing and of the model's
// analytic gradients against finite differences.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "agentrl/model/logprobs.h"
#include "tiny_model.h"

using namespace agentrl::model;
using namespace agentrl::model::test_util;

namespace {

torch::Tensor loss_of(TransformerLM& m, const torch::Tensor& ids, const torch::Tensor& mask) {
  auto pos = position_ids_from_mask(mask);
  LogprobOptions o;
  o.entropy_grad = true;
  o.chunk_tokens = 5;
  auto st = logprobs_and_entropy(m, ids, mask, pos, o);
  return st.logprobs.sum() + 0.1 * st.entropy.sum();
}

}  // namespace

TEST(GradientCheckpointing, GradientsEqualThePlainModel) {
  auto a = tiny_args("qwen3");
  a.num_hidden_layers = 3;
  auto ids = random_ids(2, 12, a.vocab_size, 31);
  auto mask = full_mask(2, 12);
  mask[0].narrow(0, 9, 3).fill_(false);
  std::map<std::string, torch::Tensor> plain;
  for (bool ckpt : {false, true}) {
    auto m = tiny_model(a, 3);
    m->set_gradient_checkpointing(ckpt);
    auto loss = loss_of(m, ids, mask);
    loss.backward();
    for (auto& p : m->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      if (!ckpt) {
        plain[p.key()] = p.value().grad().clone();
      } else {
        EXPECT_LT(max_abs_diff(p.value().grad(), plain[p.key()]), 1e-6) << p.key();
      }
    }
  }
}

TEST(GradientCheckpointing, ForwardValuesUnchanged) {
  auto a = tiny_args();
  auto m = tiny_model(a);
  auto ids = random_ids(1, 7, a.vocab_size, 32);
  auto mask = full_mask(1, 7), pos = position_ids_from_mask(mask);
  auto plain = m->forward_hidden(ids, pos, mask);
  m->set_gradient_checkpointing(true);
  auto ck = m->forward_hidden(ids, pos, mask);
  EXPECT_TRUE(ck.requires_grad());
  EXPECT_TRUE(torch::equal(plain, ck));
}

TEST(GradientCheck, AnalyticGradientsMatchCentralFiniteDifferencesInFloat64) {
  auto a = tiny_args("qwen2");
  a.vocab_size = 23;
  a.hidden_size = 16;
  a.intermediate_size = 24;
  auto m = tiny_model(a, 5, 0.3);
  m->to(torch::kFloat64);
  m->set_gradient_checkpointing(true);  // checks the recomputing backward too
  auto ids = random_ids(1, 6, a.vocab_size, 33);
  auto mask = full_mask(1, 6);
  loss_of(m, ids, mask).backward();
  const double eps = 1e-6;
  int checked = 0;
  torch::manual_seed(34);
  for (auto& p : m->named_parameters()) {
    auto flat = p.value().view({-1});
    auto grad = p.value().grad().view({-1});
    for (int r = 0; r < 3; ++r) {
      const int64_t i = torch::randint(flat.numel(), {1}).item<int64_t>();
      const double orig = flat[i].item<double>();
      double up, down;
      {
        torch::NoGradGuard g;
        flat[i] = orig + eps;
        up = loss_of(m, ids, mask).item<double>();
        flat[i] = orig - eps;
        down = loss_of(m, ids, mask).item<double>();
        flat[i] = orig;
      }
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(grad[i].item<double>(), numeric, 1e-6 * (1 + std::abs(numeric))) << p.key() << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 30);
}
