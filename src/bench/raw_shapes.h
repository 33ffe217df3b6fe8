// The floor under a one-object call: its round trips over raw blocking loopback
// sockets, one outstanding, with a "master" and a "store" thread and nothing
// else (no gRPC, no capability, no copy beyond the sockets'). Per object:
// `control_before` 64-byte ping-pongs with the master, one data exchange with
// the store, `control_after` ping-pongs. A put's exchange sends a 64-byte
// header and the object and waits for a 64-byte answer; a get's sends the
// header and reads the answer and the object back.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/results.h"
#include "bench/workloads.h"
#include "crescent/status.h"

namespace crescent::bench {

struct RawShape {
  bool get = false;
  int control_before = 0;
  int control_after = 0;
};
// A Crescent put: PutStart, the bytes, PutEnd. A get: the replica list, the bytes.
inline constexpr RawShape kRawPut{.get = false, .control_before = 1, .control_after = 1};
inline constexpr RawShape kRawGet{.get = true, .control_before = 1, .control_after = 0};

// One repetition: `objects` objects of `size` bytes, each call timed; puts send
// from (and the store answers gets from) `source`, cycled through.
StatusOr<RepSample> RawShapeOnce(RawShape shape, uint64_t size, uint64_t objects,
                                 std::span<const std::byte> source,
                                 const std::string& congestion = "");

// Per size: rows "raw-tcp put" (kRawPut) and "raw-tcp get" (kRawGet), one
// client, as many objects as a put-get phase moves (at least 8), under
// options.tcp_congestion.
StatusOr<std::vector<PhaseResult>> MeasureRawShapes(const WorkloadOptions& options);

}  // namespace crescent::bench
