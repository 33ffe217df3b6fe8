#include "sim/cluster_scale.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>

namespace crescent::sim {

Trace ScaleTrace(const Trace& trace, uint32_t copies) {
  copies = std::max<uint32_t>(copies, 1);
  Trace out;
  out.source = trace.source;
  if (copies > 1) out.source += " x" + std::to_string(copies);
  const uint64_t distinct = trace.distinct_blocks();
  const uint64_t key_stride =
      trace.block_keys.empty()
          ? 0
          : *std::max_element(trace.block_keys.begin(), trace.block_keys.end()) + 1;
  out.block_keys.reserve(distinct * copies);
  for (uint32_t c = 0; c < copies; ++c) {
    for (uint64_t key : trace.block_keys) out.block_keys.push_back(key + c * key_stride);
  }
  // The trace's requests by timestamp (file order on a tie), each followed by
  // its copies: every copy keeps the trace's order, and copy order breaks ties.
  const size_t n = trace.requests.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return trace.requests[a].timestamp_ms < trace.requests[b].timestamp_ms;
  });
  out.requests.reserve(n * copies);
  out.blocks.reserve(trace.blocks.size() * copies);
  for (size_t k : order) {
    const TraceRequest& request = trace.requests[k];
    const std::span<const BlockId> ids = trace.BlocksOf(request);
    for (uint32_t c = 0; c < copies; ++c) {
      TraceRequest r = request;
      r.first_block = out.blocks.size();
      for (BlockId b : ids) out.blocks.push_back(static_cast<BlockId>(b + c * distinct));
      out.requests.push_back(r);
    }
  }
  return out;
}

NodeLoadPolicy::NodeLoadPolicy(std::unique_ptr<cache::EvictionPolicy> inner, uint32_t nodes)
    : inner_(std::move(inner)), loads_(std::max<uint32_t>(nodes, 1)) {}

void NodeLoadPolicy::Insert(cache::ObjectId id, uint64_t size, const cache::InsertInfo& info) {
  // The master's rule: most free space first, the lowest index on a tie. With
  // equal nodes and equal pages, that is the node holding the fewest.
  uint32_t best = 0;
  for (uint32_t n = 1; n < loads_.size(); ++n) {
    if (loads_[n].held < loads_[best].held) best = n;
  }
  if (id >= node_of_.size()) node_of_.resize(std::max<size_t>(id + 1, node_of_.size() * 2));
  node_of_[id] = best;
  NodeLoad& load = loads_[best];
  ++load.written;
  load.held_peak = std::max(load.held_peak, ++load.held);
  inner_->Insert(id, size, info);
}

void NodeLoadPolicy::Access(cache::ObjectId id) {
  if (id < node_of_.size() && inner_->Contains(id)) ++loads_[node_of_[id]].read;
  inner_->Access(id);
}

void NodeLoadPolicy::Release(cache::ObjectId id) {
  if (id < node_of_.size()) --loads_[node_of_[id]].held;
}

void NodeLoadPolicy::Remove(cache::ObjectId id) {
  if (inner_->Contains(id)) Release(id);
  inner_->Remove(id);
}

std::optional<cache::ObjectId> NodeLoadPolicy::Evict(const cache::SpareFn& spare) {
  std::optional<cache::ObjectId> victim = inner_->Evict(spare);
  if (victim) Release(*victim);
  return victim;
}

Skew NodeLoadPolicy::SkewOf(uint64_t NodeLoad::*field) const {
  Skew s;
  uint64_t sum = 0;
  for (const NodeLoad& l : loads_) {
    sum += l.*field;
    s.max = std::max(s.max, l.*field);
  }
  s.mean = double(sum) / double(loads_.size());
  return s;
}

Skew NodeLoadPolicy::ReadSkew() const { return SkewOf(&NodeLoad::read); }
Skew NodeLoadPolicy::WriteSkew() const { return SkewOf(&NodeLoad::written); }
Skew NodeLoadPolicy::HeldPeakSkew() const { return SkewOf(&NodeLoad::held_peak); }

std::string FormatNodeLoads(const std::string& label, const NodeLoadPolicy& nodes,
                            const SimStats& stats, const Trace& trace) {
  char line[512];
  const Skew reads = nodes.ReadSkew(), writes = nodes.WriteSkew(), held = nodes.HeldPeakSkew();
  std::snprintf(line, sizeof(line),
                "%s: %zu nodes, busiest over mean: reads %.2f (%.0f per node), writes %.2f, "
                "pages held at peak %.2f",
                label.c_str(), nodes.loads().size(), reads.ratio(), reads.mean, writes.ratio(),
                held.ratio());
  std::string out = line;
  int64_t first = 0, last = 0;
  for (size_t i = 0; i < trace.requests.size(); ++i) {
    const int64_t t = trace.requests[i].timestamp_ms;
    first = i == 0 ? t : std::min(first, t);
    last = i == 0 ? t : std::max(last, t);
  }
  if (last > first) {
    const double seconds = double(last - first) / 1000.0;
    const uint64_t misses = stats.block_refs - stats.hit_blocks;
    const double keys = double(stats.block_refs + stats.hit_blocks + 2 * misses);
    std::snprintf(line, sizeof(line), "; master at the trace's pace: %.0f requests/s, %.0f keys/s",
                  double(stats.requests) / seconds, keys / seconds);
    out += line;
  } else {
    out += "; master at the trace's pace: n/a (no timestamps)";
  }
  return out + "\n";
}

}  // namespace crescent::sim
