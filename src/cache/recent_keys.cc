#include "cache/recent_keys.h"

#include <algorithm>

namespace crescent::cache {
namespace {

constexpr int kProbes = 8;
constexpr uint64_t kBitsPerKey = 16;

uint64_t WordsFor(uint64_t window) { return std::max<uint64_t>(1, window * kBitsPerKey / 64); }

}  // namespace

RecentKeys::RecentKeys(uint64_t window)
    : window_(std::max<uint64_t>(1, window)),
      current_window_(window_),
      current_(WordsFor(window_)) {}

bool RecentKeys::Test(const std::vector<uint64_t>& bits, uint64_t hash) {
  if (bits.empty()) return false;
  const uint64_t n = bits.size() * 64;
  // Double hashing from the two halves of one well-mixed hash.
  const uint64_t step = (hash >> 32) | 1;
  uint64_t h = hash;
  for (int i = 0; i < kProbes; ++i, h += step) {
    const uint64_t bit = h % n;
    if (!(bits[bit / 64] >> (bit % 64) & 1)) return false;
  }
  return true;
}

void RecentKeys::Set(std::vector<uint64_t>& bits, uint64_t hash) {
  const uint64_t n = bits.size() * 64;
  const uint64_t step = (hash >> 32) | 1;
  uint64_t h = hash;
  for (int i = 0; i < kProbes; ++i, h += step) {
    const uint64_t bit = h % n;
    bits[bit / 64] |= uint64_t{1} << (bit % 64);
  }
}

bool RecentKeys::Contains(uint64_t hash) const {
  return Test(current_, hash) || Test(previous_, hash);
}

void RecentKeys::Add(uint64_t hash) {
  if (Test(current_, hash)) return;  // already there (or a false positive): no new key
  Set(current_, hash);
  // Full by its own design: a filter sized for a smaller window never takes
  // more keys than it was sized for, whatever the window has grown to.
  if (++added_ >= current_window_) Rotate();
}

void RecentKeys::Resize(uint64_t window) { window_ = std::max<uint64_t>(1, window); }

void RecentKeys::Rotate() {
  previous_.swap(current_);
  current_.assign(WordsFor(window_), 0);
  current_window_ = window_;
  added_ = 0;
}

}  // namespace crescent::cache
