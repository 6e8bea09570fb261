// Seeded, portable random number streams with serialisable state.
//
// Every random draw in agentrl goes through an Rng owned by the component that
// draws (task sampler, env episode, sampler of one request), never through a
// global generator, so results do not depend on thread timing. The algorithm
// is xoshiro256** seeded through SplitMix64: the same seed gives the same
// sequence on every platform and standard library (std::uniform_*_distribution
// is implementation-defined, so it is not used).
//
// Thread-safety: an Rng is not synchronised; give each thread its own stream
// (derive with `fork`).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace agentrl {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);

  uint64_t next_u64();
  // Uniform integer in [lo, hi] (inclusive). Requires lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi);
  // Uniform double in [0, 1).
  double uniform();
  // Standard normal (Box-Muller, no cached second value so state stays simple).
  double normal();
  // A new independent stream derived from this one and `salt`; does not
  // advance this stream.
  Rng fork(uint64_t salt) const;

  // State as text ("xoshiro256ss:<hex>:<hex>:<hex>:<hex>") and back.
  std::string state() const;
  void set_state(const std::string& state);  // throws agentrl::FormatError

  bool operator==(const Rng& other) const { return s_ == other.s_; }

 private:
  std::array<uint64_t, 4> s_;
};

// Mixes values into a seed (for per-episode / per-sample seeds).
uint64_t mix_seed(uint64_t a, uint64_t b);

}  // namespace agentrl
