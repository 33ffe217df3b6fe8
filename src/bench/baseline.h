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
// One repetition of `streams` streams at once: each writes `objects` objects of
// `size` bytes, cycling through `source`, to a receiver thread of its own;
// timed until the last receiver has every byte.
StatusOr<RepSample> TcpStreamsOnce(int streams, uint64_t size, uint64_t objects,
                                   std::span<const std::byte> source,
                                   const std::string& congestion = "");
// One "copy" result per (size, thread count) for threads in {1, clients}.
std::vector<PhaseResult> MeasureMemcpy(const WorkloadOptions& options);

}  // namespace crescent::bench
