#include "bench/stats.h"

#include <algorithm>
#include <cmath>

namespace crescent::bench {

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // Nearest rank: the smallest sample with at least p% of samples at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  if (rank == 0) rank = 1;
  std::nth_element(samples.begin(), samples.begin() + static_cast<long>(rank - 1), samples.end());
  return samples[rank - 1];
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace crescent::bench
