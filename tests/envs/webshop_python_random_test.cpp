// CPython random compatibility. Expected values: python3 (CPython 3.11)
//   random.seed(233); [random.getrandbits(32) for _ in range(3)] etc.
#include <gtest/gtest.h>

#include <numeric>

#include "agentrl/envs/webshop/python_random.h"

using agentrl::envs::webshop::PyRandom;

TEST(WebshopPyRandom, Seed233GetrandbitsMatchesCPython) {
  PyRandom r(233);
  EXPECT_EQ(r.getrandbits(32), 2931216007u);
  EXPECT_EQ(r.getrandbits(32), 3446561803u);
  EXPECT_EQ(r.getrandbits(32), 2698614761u);
}

TEST(WebshopPyRandom, RandomMatchesCPython) {
  PyRandom r(233);
  EXPECT_DOUBLE_EQ(r.random(), 0.6824769139473528);
  EXPECT_DOUBLE_EQ(r.random(), 0.6283202109809801);
}

TEST(WebshopPyRandom, SeedZeroAndMultiWordSeedsMatchCPython) {
  EXPECT_EQ(PyRandom(0).getrandbits(32), 3626764237u);
  EXPECT_EQ(PyRandom((1ULL << 40) + 5).getrandbits(32), 2166296868u);
}

TEST(WebshopPyRandom, GetrandbitsAbove32BitsMatchesCPython) {
  PyRandom r(11);
  EXPECT_EQ(r.getrandbits(40), 951130727789ULL);
  EXPECT_EQ(r.getrandbits(64), 15806332507635138087ULL);
}

TEST(WebshopPyRandom, ShuffleMatchesCPython) {
  PyRandom r(233);
  std::vector<int> x(20);
  std::iota(x.begin(), x.end(), 0);
  r.shuffle(x);
  EXPECT_EQ(x, (std::vector<int>{17, 18, 9, 2, 8, 19, 11, 10, 12, 0, 3, 4, 14, 13, 1, 6, 15, 7, 16, 5}));
}

TEST(WebshopPyRandom, ShuffleOfWebShopSizedGoalListMatchesCPython) {
  // 12087 = number of WebShop human goals.
  PyRandom r(233);
  std::vector<int> x(12087);
  std::iota(x.begin(), x.end(), 0);
  r.shuffle(x);
  EXPECT_EQ(std::vector<int>(x.begin(), x.begin() + 10),
            (std::vector<int>{8655, 10304, 6940, 2750, 3667, 2144, 3577, 9548, 8911, 10662}));
  EXPECT_EQ(x[500], 11550);
  EXPECT_EQ(x.back(), 11181);
}

TEST(WebshopPyRandom, SampleUsesPoolAndSetAlgorithmsLikeCPython) {
  PyRandom r(7);
  EXPECT_EQ(r.sample(std::vector<double>{10, 20, 30, 40}, 2), (std::vector<double>{30, 10}));
  std::vector<int> pop(100);
  std::iota(pop.begin(), pop.end(), 0);
  EXPECT_EQ(r.sample(pop, 10), (std::vector<int>{50, 83, 6, 9, 68, 12, 46, 74, 7, 64}));
}

TEST(WebshopPyRandom, UniformMatchesCPython) {
  PyRandom r(7);
  EXPECT_DOUBLE_EQ(r.uniform(10.5, 20.25), 13.657369457123334);
}
