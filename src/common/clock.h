// Clock: the one source of time for leases, TTLs and timeouts. Production code
// uses SteadyClock; tests inject a ManualClock and advance it, so nothing that
// depends on time has to sleep in a test.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace crescent {

// Milliseconds on a monotonic clock with an arbitrary epoch.
using TimeMs = int64_t;

// Wall-clock milliseconds since the Unix epoch: the time that crosses hosts
// (capability expiries), since a steady clock's epoch is private to its host.
inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs NowMs() const = 0;
};

class SteadyClock final : public Clock {
 public:
  TimeMs NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static SteadyClock& Instance() {
    static SteadyClock clock;
    return clock;
  }
};

// Thread-safe manual clock for tests: time moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeMs start = 1'000'000) : now_(start) {}
  TimeMs NowMs() const override { return now_.load(std::memory_order_acquire); }
  void Advance(TimeMs delta) { now_.fetch_add(delta, std::memory_order_acq_rel); }
  void Set(TimeMs now) { now_.store(now, std::memory_order_release); }

 private:
  std::atomic<TimeMs> now_;
};

// The Unix time of instant `at` on `clock`, carried over as the distance from
// now (the two clocks share no epoch, only the passage of time).
inline int64_t ToUnixMs(TimeMs at, const Clock& clock) {
  return UnixNowMs() + (at - clock.NowMs());
}

}  // namespace crescent
