#include "cache/counting_bloom_filter.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace crescent::cache {
namespace {

constexpr double kLn2 = 0.69314718055994530942;

double ClampFpr(double p) {
  if (!(p >= CountingBloomFilter::kMinFalsePositiveRate)) {  // Also catches NaN.
    return CountingBloomFilter::kMinFalsePositiveRate;
  }
  return std::min(p, CountingBloomFilter::kMaxFalsePositiveRate);
}

uint64_t OptimalCounters(uint64_t n, double p) {
  const double m = std::ceil(-static_cast<double>(n) * std::log(p) / (kLn2 * kLn2));
  const double capped = std::min(m, static_cast<double>(CountingBloomFilter::kMaxCounters));
  return std::max<uint64_t>(16, (static_cast<uint64_t>(capped) + 15) & ~uint64_t{15});
}

uint32_t OptimalHashes(uint64_t m, uint64_t n) {
  const double k = std::round(static_cast<double>(m) / static_cast<double>(n) * kLn2);
  return static_cast<uint32_t>(std::clamp(k, 1.0, double{CountingBloomFilter::kMaxHashes}));
}

// Applies `delta` (+1 or -1) to the counter at `pos` unless it is frozen (15)
// or, for a decrement, already 0. Relaxed: see the comment on words_.
void Update(std::atomic<uint64_t>& word, uint64_t pos, int delta) {
  const int shift = static_cast<int>(pos & 15) * 4;
  const uint64_t unit = uint64_t{1} << shift;
  uint64_t old = word.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t c = (old >> shift) & 15;
    if (c == CountingBloomFilter::kCounterMax || (delta < 0 && c == 0)) return;
    const uint64_t next = delta > 0 ? old + unit : old - unit;
    if (word.compare_exchange_weak(old, next, std::memory_order_relaxed)) return;
  }
}

}  // namespace

CountingBloomFilter::CountingBloomFilter(uint64_t expected_keys, double false_positive_rate)
    : design_capacity_(std::max<uint64_t>(expected_keys, 1)),
      target_fpr_(ClampFpr(false_positive_rate)),
      num_counters_(OptimalCounters(design_capacity_, target_fpr_)),
      num_hashes_(OptimalHashes(num_counters_, design_capacity_)),
      words_(num_counters_ / 16) {}

void CountingBloomFilter::AddHash(uint64_t hash) {
  Apply(hash, +1);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void CountingBloomFilter::RemoveHash(uint64_t hash) {
  Apply(hash, -1);
  count_.fetch_sub(1, std::memory_order_relaxed);
}

void CountingBloomFilter::AddHashes(std::span<const uint64_t> hashes) {
  constexpr size_t kAhead = 2;
  for (size_t i = 0; i < std::min(kAhead, hashes.size()); ++i) Prefetch(hashes[i]);
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (i + kAhead < hashes.size()) Prefetch(hashes[i + kAhead]);
    Apply(hashes[i], +1);
  }
  count_.fetch_add(static_cast<int64_t>(hashes.size()), std::memory_order_relaxed);
}

void CountingBloomFilter::Prefetch(uint64_t hash) const {
  uint64_t g = hash;
  const uint64_t step = Step(hash);
  for (uint32_t i = 0; i < num_hashes_; ++i, g += step) {
    __builtin_prefetch(&words_[Reduce(g) >> 4], 1);
  }
}

void CountingBloomFilter::Apply(uint64_t hash, int delta) {
  uint64_t g = hash;
  const uint64_t step = Step(hash);
  for (uint32_t i = 0; i < num_hashes_; ++i, g += step) {
    const uint64_t pos = Reduce(g);
    Update(words_[pos >> 4], pos, delta);
  }
}

double CountingBloomFilter::EstimatedFalsePositiveRate() const {
  const double k = num_hashes_;
  const double load = static_cast<double>(ApproximateCount()) / static_cast<double>(num_counters_);
  return std::pow(1.0 - std::exp(-k * load), k);
}

double CountingBloomFilter::MeasuredFalsePositiveRate() const {
  return std::pow(FillRatio(), static_cast<double>(num_hashes_));
}

double CountingBloomFilter::FillRatio() const {
  constexpr uint64_t kLowBits = 0x1111111111111111;  // Bit 0 of every counter.
  uint64_t nonzero = 0;
  for (const auto& w : words_) {
    const uint64_t v = w.load(std::memory_order_relaxed);
    // Fold each 4-bit counter onto its low bit: set iff the counter is non-zero.
    const uint64_t folded = (v | (v >> 1) | (v >> 2) | (v >> 3)) & kLowBits;
    nonzero += static_cast<uint64_t>(std::popcount(folded));
  }
  return static_cast<double>(nonzero) / static_cast<double>(num_counters_);
}

}  // namespace crescent::cache
