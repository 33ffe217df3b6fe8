// KeyedHash: SipHash-2-4 (Aumasson and Bernstein, 2012), libsodium's
// crypto_shorthash: a 64-bit pseudorandom function under a 128-bit secret
// key. Whoever does not hold the key cannot tell its outputs from random ones,
// nor relate two of them: seeing the hashes of some inputs says nothing of the
// hash of any other. The master names its grants with it (put tokens and
// placements, master_service.h), so that one grant reveals nothing of another.
//
// Hash(word) is the hash of the word's 8 little-endian bytes; Hash(bytes)
// takes any length. A KeyedHash is immutable once made: thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace crescent {

class KeyedHash {
 public:
  // A key of 16 random bytes from libsodium's generator (the kernel's), so
  // that no two processes, nor two objects of one, share one.
  static KeyedHash Random();
  // A known key: k0 is its first 8 bytes, k1 its last 8, each little-endian.
  KeyedHash(uint64_t k0, uint64_t k1);

  uint64_t Hash(uint64_t word) const;
  uint64_t Hash(std::span<const unsigned char> bytes) const;

 private:
  KeyedHash() = default;
  std::array<unsigned char, 16> key_{};
};

}  // namespace crescent
