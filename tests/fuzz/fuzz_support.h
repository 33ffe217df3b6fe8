// Shared by the fuzz targets in this directory: a reader that carves typed
// fields out of the fuzzer's bytes, and FUZZ_CHECK, which aborts on a broken
// invariant in every build (assert() is compiled out of the release tree, where
// the corpus replay also runs).
//
// The reader never fails: past the end it yields zeros and empty strings, so a
// target can take what it needs from an input of any length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#define FUZZ_CHECK(cond)                                                                     \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace crescent::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - pos_; }

  // sizeof(T) bytes, little-endian; missing bytes read as 0.
  template <typename T>
  T Take() {
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      if (pos_ < size_) v |= uint64_t{data_[pos_++]} << (8 * i);
    }
    return static_cast<T>(v);
  }

  // A string of at most max_len bytes, its length taken from one input byte.
  std::string TakeString(size_t max_len) {
    size_t n = Take<uint8_t>();
    n = n > max_len ? max_len : n;
    n = n > remaining() ? remaining() : n;
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

  // Copies exactly n bytes into out, zero-filled past the end of the input.
  void TakeBytes(uint8_t* out, size_t n) {
    size_t have = n > remaining() ? remaining() : n;
    if (have > 0) std::memcpy(out, data_ + pos_, have);
    std::memset(out + have, 0, n - have);
    pos_ += have;
  }

  std::string_view Rest() {
    std::string_view rest(reinterpret_cast<const char*>(data_ + pos_), remaining());
    pos_ = size_;
    return rest;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace crescent::fuzz
