// KeyedHash: SipHash-2-4 (Aumasson and Bernstein, 2012), a 64-bit
// pseudorandom function under a 128-bit secret key. Whoever does not hold the
// key cannot tell its outputs from random ones, nor relate two of them: seeing
// the hashes of some inputs says nothing of the hash of any other. The master
// names its grants with it (put tokens and placements, master_service.h), so
// that one grant reveals nothing of another.
//
// Hash(word) is the hash of the word's 8 little-endian bytes, inline for the
// hot paths (a few nanoseconds); Hash(bytes) takes any length. A KeyedHash is
// immutable once made: thread-safe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace crescent {

class KeyedHash {
 public:
  // A key of 16 random bytes from the kernel (getrandom), so that no two
  // processes, nor two objects of one, share one.
  static KeyedHash Random();
  // A known key: k0 is its first 8 bytes, k1 its last 8, each little-endian.
  KeyedHash(uint64_t k0, uint64_t k1) : k0_(k0), k1_(k1) {}

  uint64_t Hash(uint64_t word) const {
    State s(k0_, k1_);
    s.Compress(word);
    s.Compress(uint64_t{8} << 56);  // the last block: the length, no bytes left
    return s.Finish();
  }
  uint64_t Hash(std::span<const unsigned char> bytes) const;

 private:
  struct State {
    uint64_t v0, v1, v2, v3;
    State(uint64_t k0, uint64_t k1)
        : v0(k0 ^ 0x736f6d6570736575),
          v1(k1 ^ 0x646f72616e646f6d),
          v2(k0 ^ 0x6c7967656e657261),
          v3(k1 ^ 0x7465646279746573) {}
    void Round() {
      v0 += v1;
      v1 = std::rotl(v1, 13) ^ v0;
      v0 = std::rotl(v0, 32);
      v2 += v3;
      v3 = std::rotl(v3, 16) ^ v2;
      v0 += v3;
      v3 = std::rotl(v3, 21) ^ v0;
      v2 += v1;
      v1 = std::rotl(v1, 17) ^ v2;
      v2 = std::rotl(v2, 32);
    }
    void Compress(uint64_t m) {  // two rounds per 8-byte block
      v3 ^= m;
      Round();
      Round();
      v0 ^= m;
    }
    uint64_t Finish() {  // four rounds at the end
      v2 ^= 0xff;
      Round();
      Round();
      Round();
      Round();
      return v0 ^ v1 ^ v2 ^ v3;
    }
  };

  uint64_t k0_;
  uint64_t k1_;
};

}  // namespace crescent
