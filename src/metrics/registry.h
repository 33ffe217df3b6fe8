// MetricsRegistry: the collectors one /metrics endpoint renders, in the order
// they were added. A process adds one per part it runs (the master engine, the
// gRPC server, a store node) and removes it before that part goes away.
//
// Concurrency: mu_ guards the list and is held while rendering, so Remove()
// returns only once no rendering can still call the removed collector.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metrics/text_writer.h"

namespace crescent::metrics {

class MetricsRegistry {
 public:
  using Collector = std::function<void(TextWriter&)>;
  uint64_t Add(Collector collector);
  void Remove(uint64_t id);
  std::string Render() const;

 private:
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;
  std::vector<std::pair<uint64_t, Collector>> collectors_;
};

}  // namespace crescent::metrics
