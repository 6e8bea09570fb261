// CPython-compatible MT19937 (Matsumoto & Nishimura 1998, the 2002
// init_by_array seeding); see python_random.h for the mapping to Lib/random.py.
#include "agentrl/envs/webshop/python_random.h"

#include <cmath>

namespace agentrl::envs::webshop {
namespace {
constexpr int kN = 624;
constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpper = 0x80000000U;
constexpr uint32_t kLower = 0x7fffffffU;
}  // namespace

void PyRandom::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < kN; ++i) mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  mti_ = kN;
}

void PyRandom::init_by_array(const std::vector<uint32_t>& key) {
  init_genrand(19650218U);
  int i = 1, j = 0;
  const int len = static_cast<int>(key.size());
  for (int k = (kN > len ? kN : len); k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] + static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
    if (j >= len) j = 0;
  }
  for (int k = kN - 1; k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000U;
}

void PyRandom::seed(uint64_t n) {
  // CPython: key = 32-bit words of abs(n), least significant first; n = 0
  // gives the single word 0.
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(n & 0xffffffffU));
    n >>= 32;
  } while (n != 0);
  init_by_array(key);
}

uint32_t PyRandom::genrand_uint32() {
  static const uint32_t mag01[2] = {0U, kMatrixA};
  if (mti_ >= kN) {
    int kk = 0;
    for (; kk < kN - kM; ++kk) {
      uint32_t y = (mt_[kk] & kUpper) | (mt_[kk + 1] & kLower);
      mt_[kk] = mt_[kk + kM] ^ (y >> 1) ^ mag01[y & 1U];
    }
    for (; kk < kN - 1; ++kk) {
      uint32_t y = (mt_[kk] & kUpper) | (mt_[kk + 1] & kLower);
      mt_[kk] = mt_[kk + (kM - kN)] ^ (y >> 1) ^ mag01[y & 1U];
    }
    uint32_t y = (mt_[kN - 1] & kUpper) | (mt_[0] & kLower);
    mt_[kN - 1] = mt_[kM - 1] ^ (y >> 1) ^ mag01[y & 1U];
    mti_ = 0;
  }
  uint32_t y = mt_[mti_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

double PyRandom::random() {
  uint32_t a = genrand_uint32() >> 5, b = genrand_uint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t PyRandom::getrandbits(int k) {
  if (k <= 0 || k > 64) throw std::invalid_argument("getrandbits: k must be in 1..64");
  if (k <= 32) return genrand_uint32() >> (32 - k);
  // Words least significant first; the most significant word keeps only its
  // top (k - 32) bits.
  uint64_t low = genrand_uint32();
  uint64_t high = genrand_uint32() >> (64 - k);
  return low | (high << 32);
}

uint64_t PyRandom::randbelow(uint64_t n) {
  if (n == 0) throw std::invalid_argument("randbelow(0)");
  int k = 0;
  for (uint64_t v = n; v; v >>= 1) ++k;  // n.bit_length()
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

size_t PyRandom::sample_setsize(size_t k) {
  size_t setsize = 21;
  if (k > 5) {
    // 4 ** ceil(log(3k, 4)) computed as CPython does, in floating point.
    double e = std::ceil(std::log(static_cast<double>(k) * 3) / std::log(4.0));
    setsize += static_cast<size_t>(std::pow(4.0, e));
  }
  return setsize;
}

}  // namespace agentrl::envs::webshop
