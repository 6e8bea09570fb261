#include "agentrl/core/rng.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "agentrl/core/error.h"

namespace agentrl {
namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& w : s_) w = splitmix64(x);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span == 0) return static_cast<int64_t>(next_u64());  // full 64-bit range
  // Rejection sampling removes modulo bias.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t r;
  do {
    r = next_u64();
  } while (r >= limit);
  return lo + static_cast<int64_t>(r % span);
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }

double Rng::normal() {
  double u1 = uniform();
  double u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

Rng Rng::fork(uint64_t salt) const {
  uint64_t x = s_[0] ^ rotl(s_[1], 13) ^ rotl(s_[2], 29) ^ rotl(s_[3], 47) ^ (salt * 0xD1B54A32D192ED03ULL);
  return Rng(splitmix64(x));
}

std::string Rng::state() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "xoshiro256ss:%016llx:%016llx:%016llx:%016llx",
                static_cast<unsigned long long>(s_[0]), static_cast<unsigned long long>(s_[1]),
                static_cast<unsigned long long>(s_[2]), static_cast<unsigned long long>(s_[3]));
  return buf;
}

void Rng::set_state(const std::string& state) {
  unsigned long long a, b, c, d;
  char tail;
  if (std::sscanf(state.c_str(), "xoshiro256ss:%16llx:%16llx:%16llx:%16llx%c", &a, &b, &c, &d, &tail) != 4)
    throw FormatError("invalid RNG state '" + state + "' (expected xoshiro256ss:<4 hex words>)");
  // Validate before assigning so a bad state leaves the stream untouched.
  if (a == 0 && b == 0 && c == 0 && d == 0) throw FormatError("invalid RNG state: all-zero xoshiro state");
  s_ = {a, b, c, d};
}

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ULL + (a << 6) + (a >> 2));
  return splitmix64(x);
}

}  // namespace agentrl
