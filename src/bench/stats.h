// Latency statistics for the benchmarks: nearest-rank percentiles over recorded
// samples, and the median of repeated runs. Pure functions, unit-tested.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace crescent::bench {

// Nearest-rank percentile (p in [0, 100]) of `samples`; 0 when empty. Sorts a copy.
double Percentile(std::vector<double> samples, double p);
// Median of `values` (mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

// Per-call latencies in microseconds, one recorder per client thread; merged
// after the run.
class LatencyRecorder {
 public:
  void Reserve(size_t n) { samples_.reserve(n); }
  void Add(double micros) { samples_.push_back(micros); }
  void Merge(const LatencyRecorder& other) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
  }
  size_t count() const { return samples_.size(); }
  double P50() const { return Percentile(samples_, 50); }
  double P99() const { return Percentile(samples_, 99); }
  const std::vector<double>& samples() const { return samples_; }

 private:
  std::vector<double> samples_;
};

}  // namespace crescent::bench
