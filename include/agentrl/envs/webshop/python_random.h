// Bit-exact reimplementation of CPython's `random` module (MT19937) for the
// calls WebShop makes: seed(int), random(), getrandbits(k), shuffle(list),
// sample(population, k) and uniform(a, b).
//
// WebShop fixes its goal order with `random.seed(233); random.shuffle(goals)`
// (web_agent_text_env.py SimServer.__init__); its test / eval / train splits
// are slices of that order, so reproducing the split needs exactly CPython's
// generator and shuffle algorithm (Lib/random.py, Modules/_randommodule.c):
//   seed(n): init_by_array with the 32-bit words of |n|, least significant
//            first (one word 0 for n = 0);
//   random(): (a * 2^26 + b) / 2^53 with a = genrand >> 5, b = genrand >> 6;
//   getrandbits(k <= 32): genrand >> (32 - k); larger k: 32-bit words, least
//            significant first, the last one shifted;
//   _randbelow(n): k = bit_length(n), draw getrandbits(k) until < n;
//   shuffle: for i = n-1 .. 1: j = _randbelow(i + 1), swap(x[i], x[j]);
//   sample: the pool algorithm when n <= setsize, else the set algorithm.
//
// Thread-safety: a PyRandom is not synchronised; one per user.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentrl::envs::webshop {

class PyRandom {
 public:
  explicit PyRandom(uint64_t seed = 0) { this->seed(seed); }

  void seed(uint64_t n);
  uint32_t genrand_uint32();
  double random();
  uint64_t getrandbits(int k);  // 0 < k <= 64
  uint64_t randbelow(uint64_t n);  // n > 0
  double uniform(double a, double b) { return a + (b - a) * random(); }

  template <class T>
  void shuffle(std::vector<T>& x) {
    for (size_t i = x.size(); i-- > 1;) {
      size_t j = static_cast<size_t>(randbelow(i + 1));
      std::swap(x[i], x[j]);
    }
  }

  // random.sample(population, k); requires k <= population.size().
  template <class T>
  std::vector<T> sample(const std::vector<T>& population, size_t k) {
    const size_t n = population.size();
    if (k > n) throw std::invalid_argument("sample larger than population");
    std::vector<T> result(k);
    if (n <= sample_setsize(k)) {
      std::vector<T> pool(population);
      for (size_t i = 0; i < k; ++i) {
        size_t j = static_cast<size_t>(randbelow(n - i));
        result[i] = pool[j];
        pool[j] = pool[n - i - 1];
      }
    } else {
      std::unordered_set<size_t> selected;
      for (size_t i = 0; i < k; ++i) {
        size_t j = static_cast<size_t>(randbelow(n));
        while (selected.count(j)) j = static_cast<size_t>(randbelow(n));
        selected.insert(j);
        result[i] = population[j];
      }
    }
    return result;
  }

 private:
  // CPython: setsize = 21, plus 4 ** ceil(log(3k, 4)) when k > 5.
  static size_t sample_setsize(size_t k);
  void init_genrand(uint32_t s);
  void init_by_array(const std::vector<uint32_t>& key);

  std::array<uint32_t, 624> mt_{};
  int mti_ = 625;
};

}  // namespace agentrl::envs::webshop
