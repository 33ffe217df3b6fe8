// A trace scaled past one master's usual size, and where its pages would land
// on a cluster of store nodes (docs/scale.md, "64 nodes in the simulator").
//
// ScaleTrace() makes `copies` independent user populations out of one trace:
// copy c is the trace with every block id renamed into a block set of its own
// (so no page is shared between copies) and every request kept at its
// timestamp; the copies are interleaved request by request in timestamp
// order (file order, then copy order, on a tie). The request rate grows `copies` times, the
// footprint too, and the sharing pattern within each population is the trace's own.
//
// NodeLoadPolicy wraps the policy that one master runs over every segment and
// models the master's placement (SegmentTable::Allocate: the segment with the
// most free space, the lowest index on a tie) over `nodes` equal nodes,
// counting per node the pages written (inserts), read (hits: accesses) and
// held. It changes no decision of the wrapped policy: the hit ratio is the
// one cache's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/eviction_policy.h"
#include "sim/simulator.h"
#include "sim/trace_reader.h"

namespace crescent::sim {

// `copies` >= 1 copies of `trace`, as above. Block ids stay dense: copy c's
// block b is c * trace.distinct_blocks() + b, and its key (block_keys) is
// the original hash id plus c times (the largest hash id + 1), so that keys
// stay distinct.
Trace ScaleTrace(const Trace& trace, uint32_t copies);

struct NodeLoad {
  uint64_t written = 0;  // pages placed on the node
  uint64_t read = 0;     // hits served by the node
  uint64_t held = 0;     // pages it holds now
  uint64_t held_peak = 0;
};

// The spread of one per-node figure: the busiest node over the mean (1.0: even).
struct Skew {
  double mean = 0;
  uint64_t max = 0;
  double ratio() const { return mean > 0 ? double(max) / mean : 0.0; }
};

class NodeLoadPolicy final : public cache::EvictionPolicy {
 public:
  NodeLoadPolicy(std::unique_ptr<cache::EvictionPolicy> inner, uint32_t nodes);

  void Insert(cache::ObjectId id, uint64_t size, const cache::InsertInfo& info = {}) override;
  void Access(cache::ObjectId id) override;
  void Remove(cache::ObjectId id) override;
  std::optional<cache::ObjectId> Evict(const cache::SpareFn& spare = nullptr) override;
  void EndSession(cache::ObjectId id) override { inner_->EndSession(id); }
  bool Contains(cache::ObjectId id) const override { return inner_->Contains(id); }
  size_t Count() const override { return inner_->Count(); }
  uint64_t UsedSize() const override { return inner_->UsedSize(); }
  void SetCapacity(uint64_t capacity) override { inner_->SetCapacity(capacity); }
  std::string_view Name() const override { return inner_->Name(); }

  const std::vector<NodeLoad>& loads() const { return loads_; }
  cache::EvictionPolicy& inner() { return *inner_; }
  Skew ReadSkew() const;
  Skew WriteSkew() const;
  Skew HeldPeakSkew() const;

 private:
  void Release(cache::ObjectId id);
  Skew SkewOf(uint64_t NodeLoad::*field) const;

  std::unique_ptr<cache::EvictionPolicy> inner_;
  std::vector<NodeLoad> loads_;
  std::vector<uint32_t> node_of_;  // by object id (the simulator's dense block ids)
};

// One line on a run with `nodes`: each figure's busiest node over the mean,
// and the master's load at the trace's own pace: requests/s and keys/s (every
// page of a request is in its prefix query; each hit adds a replica list and
// each miss a PutStart and a PutEnd), or "n/a" when the trace spans no time.
std::string FormatNodeLoads(const std::string& label, const NodeLoadPolicy& nodes,
                            const SimStats& stats, const Trace& trace);

}  // namespace crescent::sim
