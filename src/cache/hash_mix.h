// MixBits: splitmix64's finaliser, a bijection of 64-bit values whose output
// bits each depend on every input bit. The simulator's ids are dense small
// numbers and the master's history keys are already hashes; either way the
// samplers and filters of the learned and adaptive policies compare or index
// by these mixed bits.
#pragma once

#include <cstdint>

namespace crescent::cache {

inline uint64_t MixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace crescent::cache
