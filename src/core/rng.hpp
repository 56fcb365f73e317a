// Seeded, portable random numbers.
//
// xoshiro256** (Blackman & Vigna) seeded through SplitMix64. Distributions are
// our own code (std:: distributions differ between standard libraries), so a
// seed gives the same stream on every machine. Independent streams are derived
// from (seed, stream name) so that adding a consumer does not shift others.
#pragma once

#include <cstdint>
#include <string_view>

namespace podnet {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1);
  // A stream independent of this one, keyed by a name (FNV-1a of the name mixed with the seed).
  Rng stream(std::string_view name) const;

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform integer in [0, n), unbiased (Lemire's method with rejection).
  uint64_t below(uint64_t n);
  // Exponential with the given rate (mean 1/rate).
  double exponential(double rate);

  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

// SplitMix64 finalizer: a good 64-bit mixing function (also used for hashing). Inline: routing calls it at
// every hop of every route, and the packet engine at every packet's ECMP choice.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace podnet
