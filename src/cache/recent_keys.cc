#include "cache/recent_keys.h"

#include <algorithm>

namespace crescent::cache {
namespace {

// A blocked Bloom filter (Putze, Sanders and Singler, "Cache-, Hash- and
// Space-Efficient Bloom Filters", WEA'07): every probe of a key falls in the
// same 64-byte block, so an Add or a Contains costs one cache miss, not one
// per probe. 32 bits and 7 probes per key: about 0.003% false positives for
// a full filter (16 bits gave 0.1%, and the learned policy paid for them: a
// false positive rates a one-off page as reused, docs/adaptive.md).
constexpr uint64_t kBitsPerKey = 32;
constexpr int kProbes = 7;
constexpr uint64_t kBlockWords = 8;  // 512 bits

uint64_t WordsFor(uint64_t window) {
  const uint64_t words = std::max<uint64_t>(1, window * kBitsPerKey / 64);
  return (words + kBlockWords - 1) / kBlockWords * kBlockWords;
}

// The block's first word, and 9-bit probe offsets from other bits of the hash.
uint64_t BlockOf(uint64_t words, uint64_t hash) {
  const uint64_t blocks = words / kBlockWords;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * blocks) >> 64) * kBlockWords;
}

uint64_t ProbeBits(uint64_t hash) { return hash * 0x9e3779b97f4a7c15ull; }

}  // namespace

RecentKeys::RecentKeys(uint64_t window)
    : window_(std::max<uint64_t>(1, window)),
      current_window_(window_),
      current_(MakeFilter(WordsFor(window_))) {}

RecentKeys::Filter RecentKeys::MakeFilter(uint64_t words) {
  return {.block = ZeroedBlock(words * sizeof(uint64_t)), .words = words};
}

void RecentKeys::Prefetch(uint64_t hash) const {
  if (current_.words > 0) __builtin_prefetch(current_.data() + BlockOf(current_.words, hash));
}

bool RecentKeys::Test(const Filter& bits, uint64_t hash) {
  if (bits.words == 0) return false;
  const uint64_t* block = bits.data() + BlockOf(bits.words, hash);
  uint64_t probes = ProbeBits(hash);
  for (int i = 0; i < kProbes; ++i, probes >>= 9) {
    const uint64_t bit = probes & 511;
    if (!(block[bit / 64] >> (bit % 64) & 1)) return false;
  }
  return true;
}

void RecentKeys::Set(Filter& bits, uint64_t hash) {
  uint64_t* block = bits.data() + BlockOf(bits.words, hash);
  uint64_t probes = ProbeBits(hash);
  for (int i = 0; i < kProbes; ++i, probes >>= 9) {
    const uint64_t bit = probes & 511;
    block[bit / 64] |= uint64_t{1} << (bit % 64);
  }
}

bool RecentKeys::Contains(uint64_t hash) const {
  return Test(current_, hash) || Test(previous_, hash);
}

void RecentKeys::Add(uint64_t hash) {
  if (!retired_.block.empty()) ReleaseSome();
  if (Test(current_, hash)) return;  // already there (or a false positive): no new key
  Set(current_, hash);
  // Full by its own design: a filter sized for a smaller window never takes
  // more keys than it was sized for, whatever the window has grown to.
  if (++added_ >= current_window_) Rotate();
}

void RecentKeys::Resize(uint64_t window) { window_ = std::max<uint64_t>(1, window); }

void RecentKeys::Rotate() {
  // The previous filter retires: handed back a part per Add, not at once.
  retired_ = std::move(previous_);
  retired_done_ = 0;
  previous_ = std::move(current_);
  current_ = MakeFilter(WordsFor(window_));
  current_window_ = window_;
  added_ = 0;
}

void RecentKeys::ReleaseSome() {
  constexpr uint64_t kStep = 64 * 1024;
  const uint64_t bytes = retired_.block.bytes();
  if (!retired_.block.mapped() || retired_done_ + kStep >= bytes) {
    retired_ = Filter{};  // what is left is at most one step
    return;
  }
  retired_.block.Release(retired_done_, retired_done_ + kStep);
  retired_done_ += kStep;
}

}  // namespace crescent::cache
