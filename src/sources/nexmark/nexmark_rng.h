// The generator's random numbers: SplitMix64 with the draws docs/nexmark.md describes.
//
// One Rng per event, seeded from the event id, so that any event can be generated alone. The
// draws must stay bit-identical to the reference (nexmark_ref.py): they define the data.
// Not thread-safe (a value type; use one per thread).
#pragma once

#include <cstdint>

namespace sluice::nexmark {

inline constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  // The RNG of event `event_id`: seeded seed ^ (event_id * golden mod 2^64).
  static Rng ForEvent(uint64_t seed, int64_t event_id) {
    return Rng(seed ^ (static_cast<uint64_t>(event_id) * kGolden));
  }

  uint64_t Next64() {
    state_ += kGolden;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, m) for m >= 0: ((next64 >> 32) * m) >> 32, computed in 128 bits so that it
  // equals the reference's big-integer result for every m (also m >= 2^32). NextInt(0) == 0.
  int64_t NextInt(int64_t m) {
    __extension__ using U128 = unsigned __int128;
    const U128 product = static_cast<U128>(Next64() >> 32) * static_cast<uint64_t>(m);
    return static_cast<int64_t>(product >> 32);
  }

  // Uniform in [0, 1): (next64 >> 11) * 2^-53 (exact).
  double NextDouble() { return static_cast<double>(Next64() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace sluice::nexmark
