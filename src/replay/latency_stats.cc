#include "replay/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace crescent::replay {

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  size_t idx = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  idx = std::min(idx, sorted.size() - 1);
  return sorted[idx];
}

LatencySummary Summarize(std::vector<double>& samples) {
  LatencySummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = samples.size();
  s.mean_us = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  s.p50_us = Percentile(samples, 50);
  s.p99_us = Percentile(samples, 99);
  s.max_us = samples.back();
  return s;
}

}  // namespace crescent::replay
