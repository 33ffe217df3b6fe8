#include "common/keyed_hash.h"

#include <sodium.h>

#include <cstdlib>

namespace crescent {

namespace {

void StoreLittle64(uint64_t w, unsigned char* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(w >> (8 * i));
}

uint64_t LoadLittle64(const unsigned char* p) {
  uint64_t w = 0;
  for (int i = 0; i < 8; ++i) w |= uint64_t{p[i]} << (8 * i);
  return w;
}

static_assert(crypto_shorthash_KEYBYTES == 16 && crypto_shorthash_BYTES == 8);

}  // namespace

KeyedHash KeyedHash::Random() {
  // The generator is the only source here: a key that could be guessed would
  // make every grant guessable, and nothing sensible can go on without one.
  if (sodium_init() < 0) std::abort();
  KeyedHash h;
  randombytes_buf(h.key_.data(), h.key_.size());
  return h;
}

KeyedHash::KeyedHash(uint64_t k0, uint64_t k1) {
  StoreLittle64(k0, key_.data());
  StoreLittle64(k1, key_.data() + 8);
}

uint64_t KeyedHash::Hash(uint64_t word) const {
  unsigned char in[8];
  StoreLittle64(word, in);
  return Hash(std::span<const unsigned char>(in));
}

uint64_t KeyedHash::Hash(std::span<const unsigned char> bytes) const {
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, bytes.data(), bytes.size(), key_.data());
  return LoadLittle64(out);
}

}  // namespace crescent
