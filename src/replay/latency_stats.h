// Latency summaries for the replay's phases: samples in microseconds, reduced to
// count, mean, p50, p99 and max. Percentiles are nearest-rank on the sorted
// samples (p-th percentile = the ceil(p/100 × n)-th smallest), so p50 and p99 are
// always samples that occurred. Pure.
#pragma once

#include <cstdint>
#include <vector>

namespace crescent::replay {

struct LatencySummary {
  uint64_t count = 0;
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

// Nearest-rank percentile of `sorted` (ascending); 0 when empty. p in (0, 100].
double Percentile(const std::vector<double>& sorted, double p);

// Sorts `samples` in place and summarises them.
LatencySummary Summarize(std::vector<double>& samples);

}  // namespace crescent::replay
