// Master replay: the consistency check between the simulator and the real
// metadata engine. It replays a Trace through a MasterService exactly as an
// inference engine would drive it, with one object per block:
//
//   per request: BatchQueryPrefix(keys) → hit blocks; then, in order, each block
//   is read (GetReplicaList) if it exists, or else put (PutStart + PutEnd) with
//   the previous block as its chain parent.
//
// Page keys are PageKey(key_prefix, hash id), as `crescent replay` writes them.
// The engine gets one segment of exactly `capacity_blocks` blocks, background
// eviction is off (watermark 1.0), so space runs out exactly when the simulated
// cache is full and PutStart's synchronous eviction frees one block, as the
// simulator does. Leases are 1 ms and the injected clock moves 2 ms per read, so
// leases never distort the policy's choices. With these settings the hit ratio
// must match Simulate() for the same policy (the issue asks for ±0.01); any
// remaining gap comes from touch coalescing (two reads of one object between
// policy updates count once).
#pragma once

#include <cstdint>
#include <string_view>

#include "crescent/status.h"
#include "sim/page_key.h"
#include "sim/simulator.h"
#include "sim/trace_reader.h"

namespace crescent::sim {

StatusOr<SimStats> ReplayThroughMaster(const Trace& trace, uint64_t capacity_blocks,
                                       std::string_view policy, int s3fifo_threshold = 0,
                                       const SimProgressFn& progress = nullptr,
                                       std::string_view key_prefix = kDefaultKeyPrefix);

}  // namespace crescent::sim
