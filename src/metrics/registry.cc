#include "metrics/registry.h"

#include <algorithm>

namespace crescent::metrics {

uint64_t MetricsRegistry::Add(Collector collector) {
  std::lock_guard lock(mu_);
  collectors_.emplace_back(next_id_, std::move(collector));
  return next_id_++;
}

void MetricsRegistry::Remove(uint64_t id) {
  std::lock_guard lock(mu_);
  std::erase_if(collectors_, [id](const auto& c) { return c.first == id; });
}

std::string MetricsRegistry::Render() const {
  TextWriter w;
  std::lock_guard lock(mu_);
  for (const auto& [id, collect] : collectors_) collect(w);
  return w.Take();
}

}  // namespace crescent::metrics
