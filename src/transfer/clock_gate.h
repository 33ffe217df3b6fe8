// ClockGate: whether a store node's wall clock agrees with the master's
// closely enough for capability expiries to fence (docs/capabilities.md, "Clock
// skew"). A capability's expiry is a Unix time on the master's clock, and the
// master reuses space once that expiry plus --capability-grace-ms has passed on
// its own steady clock; a node whose wall clock runs behind the master's by
// more than the grace would still honour a capability there, and a stale
// writer would land in another object's space.
//
// The node takes a reading of the master's clock at each heartbeat (and once
// before it mounts). The master's wall clock is kept as an offset from the
// node's steady clock, so a step of the node's own wall clock shows at the
// very next capability check, and a step of the master's at the next reading.
// The gate is closed while the node's wall clock differs from the master's by
// more than the grace plus the reading's uncertainty (half its round trip).
//
// A step back of the master's clock also leaves capabilities it signed before
// the step with expiries too late by the step: after one larger than the
// grace, the gate stays closed for the longest capability lifetime plus the
// step, on the steady clock (which no wall-clock step shortens), whatever the
// skew is meanwhile.
//
// Until its first reading, the gate is open. Thread-safe; Open() is lock-free.
#pragma once

#include <atomic>
#include <cstdint>

#include "crescent/status.h"

namespace crescent::transfer {

class ClockGate {
 public:
  struct Reading {
    int64_t master_unix_ms = 0;  // the master's clock in its reply (0: none)
    int64_t grace_ms = 0;        // its --capability-grace-ms
    int64_t lifetime_ms = 0;     // the longest a capability it signs lives
    // This node's steady clock when the request left and when the reply came.
    int64_t sent_steady_ms = 0;
    int64_t received_steady_ms = 0;
  };
  // Takes a reading; false when it is ignored: it carries no clock, or its
  // uncertainty (half the round trip) is larger than the grace.
  bool Record(const Reading& r);

  // Whether capabilities may be honoured at the instant both clocks were read.
  bool Open(int64_t now_unix_ms, int64_t now_steady_ms) const;
  bool Open(int64_t now_unix_ms) const;  // reads the steady clock itself
  // OK, or UNAVAILABLE saying why the gate is closed.
  Status Check(int64_t now_unix_ms, int64_t now_steady_ms) const;
  Status Check(int64_t now_unix_ms) const;
  // This node's wall clock minus the master's, estimated for that instant
  // (0 before a reading).
  int64_t SkewMs(int64_t now_unix_ms, int64_t now_steady_ms) const;
  bool measured() const { return measured_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> measured_{false};
  // The master's wall clock minus this node's steady clock, at the last reading.
  std::atomic<int64_t> master_minus_steady_{0};
  std::atomic<int64_t> allowed_ms_{0};            // the grace plus the reading's uncertainty
  std::atomic<int64_t> held_until_steady_ms_{0};  // after a step back of the master's clock
  std::atomic<int64_t> held_step_ms_{0};          // that step
};

}  // namespace crescent::transfer
