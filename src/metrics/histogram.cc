#include "metrics/histogram.h"

#include <algorithm>

namespace crescent::metrics {
namespace {

constexpr uint64_t kLatencyBoundsNs[] = {
    1'000,         2'500,         5'000,         10'000,        25'000,      50'000,
    100'000,       250'000,       500'000,       1'000'000,     2'500'000,   5'000'000,
    10'000'000,    25'000'000,    50'000'000,    100'000'000,   250'000'000, 500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};

constexpr uint64_t kSizeBounds[] = {uint64_t{1} << 8,  uint64_t{1} << 10, uint64_t{1} << 12,
                                    uint64_t{1} << 14, uint64_t{1} << 16, uint64_t{1} << 18,
                                    uint64_t{1} << 20, uint64_t{1} << 22, uint64_t{1} << 24,
                                    uint64_t{1} << 26, uint64_t{1} << 28, uint64_t{1} << 30};

}  // namespace

std::span<const uint64_t> LatencyBoundsNs() { return kLatencyBoundsNs; }
std::span<const uint64_t> SizeBounds() { return kSizeBounds; }

Histogram::Histogram(std::span<const uint64_t> bounds) : bounds_(bounds.begin(), bounds.end()) {
  const bool ascending =
      std::adjacent_find(bounds_.begin(), bounds_.end(),
                         [](uint64_t a, uint64_t b) { return a >= b; }) == bounds_.end();
  if (bounds_.empty() || !ascending) bounds_ = {UINT64_MAX};
  sum_slot_ = bounds_.size() + 1;
  lines_per_shard_ = (sum_slot_ + 8) / 8;
  lines_ = std::make_unique<Line[]>(lines_per_shard_ * kShards);  // zeroed, line-aligned
}

size_t Histogram::BucketOf(uint64_t value) const {
  return static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                             bounds_.begin());
}

size_t Histogram::ThreadShard() {
  static std::atomic<size_t> next{0};
  thread_local const size_t shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot s;
  s.bounds = bounds_;
  s.counts.assign(bounds_.size() + 1, 0);
  for (size_t shard = 0; shard < kShards; ++shard) {
    for (size_t b = 0; b <= bounds_.size(); ++b) {
      s.counts[b] += Slot(shard, b).load(std::memory_order_relaxed);
    }
    s.sum += Slot(shard, sum_slot_).load(std::memory_order_relaxed);
  }
  for (uint64_t c : s.counts) s.count += c;
  return s;
}

double HistogramSnapshot::Quantile(double q) const {
  if (count == 0 || bounds.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(count);
  uint64_t below = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0 || static_cast<double>(below + counts[b]) < rank) {
      below += counts[b];
      continue;
    }
    if (b == bounds.size()) return static_cast<double>(bounds.back());
    const double lo = b == 0 ? 0.0 : static_cast<double>(bounds[b - 1]);
    const double hi = static_cast<double>(bounds[b]);
    const double within = (rank - static_cast<double>(below)) / static_cast<double>(counts[b]);
    return lo + (hi - lo) * std::clamp(within, 0.0, 1.0);
  }
  return static_cast<double>(bounds.back());
}

void HistogramSnapshot::Merge(const HistogramSnapshot& other) {
  if (counts.empty()) {
    *this = other;
    return;
  }
  if (other.bounds != bounds) return;  // different families: nothing sensible to add
  for (size_t b = 0; b < counts.size(); ++b) counts[b] += other.counts[b];
  sum += other.sum;
  count += other.count;
}

}  // namespace crescent::metrics
