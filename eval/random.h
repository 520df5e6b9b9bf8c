// Small, portable, seeded random numbers for the evaluation.
//
// std::uniform_*_distribution differ between standard libraries, so the
// evaluation draws everything from SplitMix64 and converts bits itself: the same
// seed gives the same split, subsample and model on every machine.
//
// Thread-safety: a SplitMix64 object is not thread-safe; the free functions are pure.
#ifndef GRAPHSIEVE_EVAL_RANDOM_H_
#define GRAPHSIEVE_EVAL_RANDOM_H_

#include <cstdint>

namespace graphsieve::eval {

// SplitMix64 finaliser: a bijective 64-bit mix.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform number in [0, 1) that depends only on (seed, stream, index).
inline double UnitFromIndex(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t bits = Mix64(Mix64(seed ^ Mix64(stream)) ^ index);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// Sequential generator (SplitMix64).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); n > 0. Lemire's multiply-shift (negligible bias for n << 2^64).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // Standard normal (Box-Muller, one value per call).
  double Normal();

 private:
  uint64_t state_;
};

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_RANDOM_H_
