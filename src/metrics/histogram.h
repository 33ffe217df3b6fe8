// Histogram: a Prometheus histogram (cumulative buckets, sum, count) that many
// threads record into without a lock.
//
// Invariants:
//  - The bucket bounds are fixed at construction, strictly ascending, and an
//    implicit last bucket (+Inf) takes everything above the highest bound. A
//    value v falls in the first bucket whose bound is >= v (Prometheus' `le`).
//  - Values are unsigned integers in the metric's base unit scaled to an
//    integer (nanoseconds for latencies, bytes, keys); the exposition divides
//    by the family's scale (text_writer.h), so the sum is exact.
//  - Counts only grow. A snapshot's count is the sum of its buckets, so the
//    +Inf bucket always equals _count even while threads record.
//
// Concurrency: the counters are split over kShards cache-line-aligned shards;
// each thread records into the shard picked once per thread (round-robin), with
// relaxed fetch_adds: they are statistics, ordered with nothing. Recording is
// a binary search over the bounds plus two uncontended atomic adds in the
// common case. Snapshot() sums the shards; it may see a record's bucket
// increment without its sum (or the reverse), never a torn counter.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace crescent::metrics {

struct HistogramSnapshot {
  std::vector<uint64_t> bounds;  // upper bounds; +Inf is implicit
  std::vector<uint64_t> counts;  // per bucket (not cumulative), bounds.size() + 1 of them
  uint64_t sum = 0;
  uint64_t count = 0;

  // An estimate of the q-quantile (0 < q <= 1): linear within the bucket that
  // holds it; the highest bound when it lies in the +Inf bucket; 0 when empty.
  double Quantile(double q) const;
  // Adds another snapshot with the same bounds (for a family's total).
  void Merge(const HistogramSnapshot& other);
};

class Histogram {
 public:
  // `bounds` must be non-empty and strictly ascending (checked; an invalid
  // list is replaced by a single bound at the largest value).
  explicit Histogram(std::span<const uint64_t> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Record(uint64_t value) {
    const size_t shard = ThreadShard();
    Slot(shard, BucketOf(value)).fetch_add(1, std::memory_order_relaxed);
    Slot(shard, sum_slot_).fetch_add(value, std::memory_order_relaxed);
  }
  HistogramSnapshot Snapshot() const;
  std::span<const uint64_t> bounds() const { return bounds_; }

  static constexpr size_t kShards = 8;

 private:
  struct alignas(64) Line {
    std::atomic<uint64_t> slot[8]{};
  };
  size_t BucketOf(uint64_t value) const;
  std::atomic<uint64_t>& Slot(size_t shard, size_t i) const {
    return lines_[shard * lines_per_shard_ + i / 8].slot[i % 8];
  }
  static size_t ThreadShard();

  std::vector<uint64_t> bounds_;
  size_t sum_slot_ = 0;         // bounds_.size() + 1: after the +Inf bucket
  size_t lines_per_shard_ = 0;  // a shard's buckets and sum, on lines of its own
  std::unique_ptr<Line[]> lines_;
};

// Bucket sets shared by the servers and the client, so that dashboards can
// add histograms of different processes.
// Latencies in nanoseconds: 1 us to 10 s, 1-2.5-5 steps.
std::span<const uint64_t> LatencyBoundsNs();
// Object and transfer sizes in bytes: 256 B to 1 GiB, powers of 4.
std::span<const uint64_t> SizeBounds();

}  // namespace crescent::metrics
