// One round trip, the floor under every control-plane call: a raw loopback
// ping-pong (64 bytes each way, one outstanding) and one Crescent Exists of a
// stored key (one gRPC call), both tight and after the caller spent
// kCallerBusyUs on CPU work before each call, as a one-object put does while it
// sends the bytes between PutStart and PutEnd. On a VM, waking the peer's idle
// vCPU can then cost far more than the tight figure says.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/results.h"
#include "bench/workloads.h"
#include "crescent/status.h"

namespace crescent::bench {

inline constexpr double kCallerBusyUs = 300;

// Times `calls` calls of `call`, each after `busy_us` of untimed CPU work
// (0: none). Seconds are the timed calls' sum, so calls/s is one over the
// mean; calls and items are `calls`, errors the calls that failed.
RepSample TimeCalls(uint64_t calls, double busy_us, const std::function<Status()>& call);

// Rows, tight then after kCallerBusyUs (PhaseResult::busy_us): "raw-tcp
// ping_pong", "crescent exists_one". options.CallsFor(1) calls per repetition,
// a quarter of that after CPU work; ping-pong and Exists alternate rep by rep.
StatusOr<std::vector<PhaseResult>> MeasureRoundTrips(const std::string& master,
                                                     const WorkloadOptions& options);

}  // namespace crescent::bench
