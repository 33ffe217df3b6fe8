#include "common/keyed_hash.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace crescent {

namespace {

uint64_t LoadLittle64(const unsigned char* p, size_t n) {  // n <= 8 bytes
  uint64_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= uint64_t{p[i]} << (8 * i);
  return w;
}

}  // namespace

KeyedHash KeyedHash::Random() {
  unsigned char key[16];
  size_t got = 0;
  while (got < sizeof key) {
    const ssize_t n = getrandom(key + got, sizeof key - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      // The kernel's generator is the only source here: a key that could be
      // guessed would make every grant guessable. Linux has had getrandom
      // since 3.17; nothing sensible can go on without it.
      std::abort();
    }
  }
  return KeyedHash(LoadLittle64(key, 8), LoadLittle64(key + 8, 8));
}

uint64_t KeyedHash::Hash(std::span<const unsigned char> bytes) const {
  State s(k0_, k1_);
  const size_t whole = bytes.size() / 8 * 8;
  for (size_t at = 0; at < whole; at += 8) s.Compress(LoadLittle64(bytes.data() + at, 8));
  const uint64_t last = LoadLittle64(bytes.data() + whole, bytes.size() - whole);
  s.Compress(last | (uint64_t{bytes.size() & 0xff} << 56));
  return s.Finish();
}

}  // namespace crescent
