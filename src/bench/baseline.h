// The physical references, measured in the same run as the workloads they
// judge: raw loopback TCP (our own socket pairs: one sender and one receiver
// thread per stream, default socket options, `size`-byte writes and reads) and
// single- and multi-thread memcpy of `size`-byte objects out of a region larger
// than the caches (as a shared-memory get copies a cold object into a buffer).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/results.h"
#include "bench/workloads.h"
#include "crescent/status.h"

namespace crescent::bench {

// One "stream" result per (size, stream count) for streams in {1, clients}:
// bytes per stream follow options.bytes_per_client (at least 8 objects); under
// options.tcp_congestion.
StatusOr<std::vector<PhaseResult>> MeasureTcpStreams(const WorkloadOptions& options);
// Where one stream's objects come from and land: each end is cycled through
// object by object (`from` and `into` hold at least one object each). An end
// of one object stays warm in the caches; an end of many objects walked in
// order is cold, as a store node's segment or a client's batch slots are.
struct StreamEnds {
  std::span<const std::byte> from;
  std::span<std::byte> into;
};
// One repetition of ends.size() streams at once: each writes `objects` objects
// of `size` bytes out of its `from` to a receiver thread of its own, which
// reads them into its `into`; timed until the last receiver has every byte.
StatusOr<RepSample> TcpStreamsOnce(uint64_t size, uint64_t objects,
                                   std::span<const StreamEnds> ends,
                                   const std::string& congestion = "");
// One "copy" result per (size, thread count) for threads in {1, clients}.
std::vector<PhaseResult> MeasureMemcpy(const WorkloadOptions& options);

}  // namespace crescent::bench
