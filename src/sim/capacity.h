// Capacity specs for the simulator: "--capacity 5%,10%,4096".
//
// A spec is either a positive block count ("4096") or a percentage of the
// trace's distinct blocks ("5%", "2.5%"). P% means floor(P/100 × distinct
// blocks), computed exactly (no floating point), so 5% of 43924 is 2196.
// A capacity must come out between 1 and the number of distinct blocks: a cache
// that can hold every block is the largest one worth simulating.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"

namespace crescent::sim {

struct Capacity {
  std::string label;  // the spec as the user wrote it, e.g. "5%"
  uint64_t blocks = 0;
};

// Parses one spec. Errors (kInvalidArgument): empty, unparsable, zero,
// negative, rounds down to 0 blocks, or more than `distinct_blocks`.
StatusOr<Capacity> ParseCapacity(std::string_view spec, uint64_t distinct_blocks);

// Parses a comma-separated list of specs, in order; the first bad one fails it.
StatusOr<std::vector<Capacity>> ParseCapacities(std::string_view list, uint64_t distinct_blocks);

}  // namespace crescent::sim
