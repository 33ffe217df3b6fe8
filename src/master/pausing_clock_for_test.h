// PausingClock: a test clock that reproduces a preempted thread without sleeping.
// Once armed, the next NowMs() call reads the base clock and then blocks until
// the test resumes it, so that caller acts later on an earlier time, at a
// known point of its code (the master reads the clock once, at a fixed place in
// each operation). One pause per clock.
#pragma once

#include <atomic>
#include <latch>

#include "common/clock.h"

namespace crescent::master::testing {

class PausingClock final : public Clock {
 public:
  explicit PausingClock(const Clock& base) : base_(base) {}

  TimeMs NowMs() const override {
    TimeMs t = base_.NowMs();
    if (armed_.exchange(false)) {
      paused_.count_down();
      resume_.wait();
    }
    return t;
  }

  // The next NowMs() call, from any thread, pauses.
  void Arm() { armed_.store(true); }
  // Blocks until the armed call has read the time and paused.
  void WaitUntilPaused() { paused_.wait(); }
  void Resume() { resume_.count_down(); }

 private:
  const Clock& base_;
  mutable std::atomic<bool> armed_{false};
  mutable std::latch paused_{1};
  mutable std::latch resume_{1};
};

}  // namespace crescent::master::testing
