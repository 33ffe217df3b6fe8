// The simulation loop: replays a loaded Trace through one eviction policy at one
// capacity and counts prefix hits.
//
// For each request, in trace order:
//  1. its hit blocks are the leading blocks already cached, up to the first miss
//     (what BatchQueryPrefix would report; a cached block after a miss is
//     useless, since its KV depends on the missing prefix);
//  2. then every block of the request, in order, is accessed if cached, or else
//     inserted with size 1, parent = the request's previous block (kNoParent
//     for the first), history = the hash of the key `crescent replay` writes
//     it under (page_key.h; what the master passes) and ends_write on the
//     request's last block, after Evict() has run while Count() >= capacity.
// So exactly one Access() or Insert() happens per block reference, in the order
// of Trace::blocks; the offline BeladyPolicy relies on that.
//
// Simulate() is a pure function of (trace, capacity, policy state): no clock, no
// I/O. Timing and reporting belong to the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/eviction_policy.h"
#include "crescent/status.h"
#include "sim/page_key.h"
#include "sim/trace_reader.h"

namespace crescent::sim {

struct SimStats {
  uint64_t requests = 0;
  uint64_t block_refs = 0;
  uint64_t hit_blocks = 0;

  double hit_ratio() const {
    return block_refs == 0 ? 0.0 : static_cast<double>(hit_blocks) / block_refs;
  }
};

// Called every few tens of thousands of block references with the number done.
using SimProgressFn = std::function<void(uint64_t refs_done)>;

// Replays `trace` through `policy`, which must start empty, at a capacity of
// `capacity_blocks` blocks (> 0).
// Pages are named as `crescent replay --key-prefix key_prefix` names them.
// `session_ends` (empty, or one flag per request: SessionHints()): after a
// flagged request is served, EndSession() is called on each of its blocks
// that is cached, in request order (the engine's hint that the conversation
// ended).
SimStats Simulate(const Trace& trace, uint64_t capacity_blocks, cache::EvictionPolicy& policy,
                  const SimProgressFn& progress = nullptr,
                  std::string_view key_prefix = kDefaultKeyPrefix,
                  const std::vector<bool>& session_ends = {});

// The name of the offline optimal reference policy.
inline constexpr std::string_view kBeladyName = "belady";

// Every policy the simulator can run: the cache registry's, then "belady".
std::vector<std::string> SimPolicyNames();

// OK when `name` is in SimPolicyNames(); otherwise kInvalidArgument with a
// message that lists the valid names.
Status CheckSimPolicyName(std::string_view name);

// Makes a policy for simulating `trace`: "belady" (which needs the trace to see
// the future) or any registry name. `options.capacity` is set by the caller.
// Errors: kInvalidArgument for an unknown name, listing the valid ones.
StatusOr<std::unique_ptr<cache::EvictionPolicy>> MakeSimPolicy(const Trace& trace,
                                                               std::string_view name,
                                                               const cache::PolicyOptions& options);

}  // namespace crescent::sim
