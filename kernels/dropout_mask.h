// The dropout mask as a function of a seed and an element's (or a
// channel's) global index: a counter-based hash (SplitMix64's finaliser),
// so a tensor split any way over any ranks gets the same mask as on one
// process, no rank draws from a generator, and backward recomputes the
// mask instead of storing it. Pure, header only.
//
//   keep(seed, index, p)       // true with probability 1 - p
//   dropout_uniform(seed, index)  // in [0, 1), 53 bits
#ifndef DISTCONV_KERNELS_DROPOUT_MASK_H_
#define DISTCONV_KERNELS_DROPOUT_MASK_H_

#include <cstdint>

namespace distconv {

// What one draw of the mask covers (torch.nn's Dropout, Dropout2d/3d).
enum class DropoutKind {
  kElements,  // each element on its own (Dropout)
  kChannels,  // each channel of each sample whole (Dropout2d, Dropout3d)
};

// SplitMix64's output function of a 64-bit state.
inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A uniform number in [0, 1) for (seed, index): the index's hash keyed by
// the seed's.
inline double dropout_uniform(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t h = splitmix64(splitmix64(seed) ^ index);
  return static_cast<double>(h >> 11) * 0x1p-53;
}

// Whether the element or channel `index` is kept, with probability 1 - p.
inline bool dropout_keep(std::uint64_t seed, std::uint64_t index, double p) {
  return dropout_uniform(seed, index) >= p;
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_DROPOUT_MASK_H_
