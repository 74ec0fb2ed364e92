// The tuner's random numbers: a seeded 64-bit Mersenne Twister with our own integer and real
// draws, so a seed gives the same sequence with every standard library (std::uniform_*_
// distribution is implementation-defined).
#ifndef PTO_TUNER_RNG_H_
#define PTO_TUNER_RNG_H_

#include <cassert>
#include <cstdint>
#include <random>

namespace pto::tuner {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  uint64_t Next() { return engine_(); }

  // Uniform in [0, n); n > 0. Rejection sampling, so there is no modulo bias.
  int64_t UniformIndex(int64_t n) {
    assert(n > 0);
    const uint64_t range = static_cast<uint64_t>(n);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x;
    do {
      x = engine_();
    } while (x >= limit);
    return static_cast<int64_t>(x % range);
  }

  // Uniform in [0, 1), 53 random bits.
  double UniformDouble() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  bool Bernoulli(double p) { return UniformDouble() < p; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_RNG_H_
