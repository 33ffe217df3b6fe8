// CountingBloomFilter: the master's negative-lookup filter. A "no" from
// MayContain() is definite, so BatchQueryPrefix() can stop at a missing page
// without touching the index; a "yes" only means "look it up".
//
// Invariants:
//  - No false negatives. A key whose completed Add()s outnumber its Remove()s
//    is reported present, provided Remove() is only ever called for a key that
//    was added (adds happen-before the matching removes). Removing a key that
//    was never added may erase another key's counts: the caller must not.
//  - Saturation. Counters are 4 bits. A counter that reaches 15 is frozen: it
//    never increments past 15 and never decrements again, because it no longer
//    knows how many keys share it. A Remove() therefore never creates a false
//    negative; the cost is that a frozen counter stays set for good. A counter
//    at 0 is never decremented (no borrow into its neighbour), even on misuse.
//  - Sizing. From the expected number of keys n and target false-positive rate
//    p: m = ceil(-n ln p / ln^2 2) counters (rounded up to a whole word) and
//    k = round(m/n ln 2) probes, so the FPR at n live keys is about p.
//    n is clamped to >= 1, p to [kMinFalsePositiveRate, kMaxFalsePositiveRate]
//    (a NaN becomes the minimum), k to [1, kMaxHashes] and m to kMaxCounters.
//  - Probes. The k counter positions come from one 64-bit hash h of the key
//    (crescent::HashKey) by double hashing (Kirsch–Mitzenmacher):
//    g_i = h + i * (rotl(h, 32) | 1) mod 2^64, mapped onto [0, m) by the
//    multiply-shift range reduction. The *Hash() overloads take h directly so
//    the master hashes each key once.
//
// Concurrency: every method may be called from any number of threads at once;
// nothing blocks. Updates are per-counter CAS loops on 64-bit words holding 16
// counters each. A single Add() or Remove() is not atomic across its k
// counters, so a concurrent MayContain() of the same key may see it half-added
// (answering "no" before Add() returns is allowed) but never half-removed for a
// key that still has a completed Add() outstanding: each counter stays >= 1.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/hash.h"

namespace crescent::cache {

class CountingBloomFilter {
 public:
  static constexpr double kMinFalsePositiveRate = 1e-6;
  static constexpr double kMaxFalsePositiveRate = 0.5;
  static constexpr uint32_t kMaxHashes = 20;
  static constexpr uint64_t kMaxCounters = uint64_t{1} << 36;  // 32 GiB of counters.
  static constexpr uint32_t kCounterMax = 15;                  // Saturated value.

  CountingBloomFilter(uint64_t expected_keys, double false_positive_rate);
  CountingBloomFilter(const CountingBloomFilter&) = delete;
  CountingBloomFilter& operator=(const CountingBloomFilter&) = delete;

  void Add(std::string_view key) { AddHash(HashKey(key)); }
  void Remove(std::string_view key) { RemoveHash(HashKey(key)); }
  bool MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }

  void AddHash(uint64_t hash);
  void RemoveHash(uint64_t hash);
  // AddHash of each, in order; the counters of the keys a few places ahead are
  // loaded while these are updated (a filter far larger than the caches,
  // filled in bulk, waits on memory, not on its arithmetic).
  void AddHashes(std::span<const uint64_t> hashes);

  // Exits at the first zero counter; no allocation, no writes.
  bool MayContainHash(uint64_t hash) const {
    uint64_t g = hash;
    const uint64_t step = Step(hash);
    for (uint32_t i = 0; i < num_hashes_; ++i, g += step) {
      const uint64_t pos = Reduce(g);
      if (CounterOf(words_[pos >> 4].load(std::memory_order_relaxed), pos) == 0) return false;
    }
    return true;
  }

  // Theoretical FPR (1 - e^{-k c / m})^k for c = ApproximateCount(). O(1).
  double EstimatedFalsePositiveRate() const;
  // FPR from the measured fraction of non-zero counters, fill^k. Unlike the
  // estimate above it sees frozen counters and removes of absent keys. O(m).
  double MeasuredFalsePositiveRate() const;
  // Fraction of counters that are non-zero. O(m).
  double FillRatio() const;

  uint64_t num_counters() const { return num_counters_; }
  uint32_t num_hashes() const { return num_hashes_; }
  size_t memory_bytes() const { return words_.size() * sizeof(words_[0]); }
  uint64_t design_capacity() const { return design_capacity_; }
  double target_false_positive_rate() const { return target_fpr_; }
  // Adds minus removes, floored at 0. Approximate while updates are in flight.
  uint64_t ApproximateCount() const {
    const int64_t c = count_.load(std::memory_order_relaxed);
    return c > 0 ? static_cast<uint64_t>(c) : 0;
  }

 private:
  // Adds delta (+1 or -1) to each of the key's k counters.
  void Apply(uint64_t hash, int delta);
  void Prefetch(uint64_t hash) const;
  static uint64_t Step(uint64_t hash) { return ((hash << 32) | (hash >> 32)) | 1; }
  static uint32_t CounterOf(uint64_t word, uint64_t pos) { return (word >> ((pos & 15) * 4)) & 15; }
  // Maps a 64-bit value onto [0, m) without a division (Lemire's reduction).
  uint64_t Reduce(uint64_t g) const {
    __extension__ using U128 = unsigned __int128;
    return static_cast<uint64_t>((static_cast<U128>(g) * num_counters_) >> 64);
  }

  uint64_t design_capacity_;
  double target_fpr_;
  uint64_t num_counters_;  // m, a multiple of 16.
  uint32_t num_hashes_;    // k.
  // 16 counters per word, counter c in bits [4(c%16), 4(c%16)+4) of word c/16.
  // All accesses are relaxed: the filter publishes no other data, so no
  // ordering between different words is needed. What the no-false-negative
  // invariant does need is per-word coherence, which every atomic has: the
  // CAS that decrements for a Remove() follows, in the word's modification
  // order, the increment of the Add() that happened-before it, and a
  // MayContain() that happens-after an Add() reads that increment or later.
  std::vector<std::atomic<uint64_t>> words_;
  // Adds minus removes (relaxed: a statistic, read only for estimates).
  std::atomic<int64_t> count_{0};
};

}  // namespace crescent::cache
