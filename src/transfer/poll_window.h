// PollWindow: how long a server's I/O thread polls for the next request after
// it did some work, before it sleeps in the reactor (RunPolling, asio_server.h).
//
// A fixed window of `base` covers a client whose next call follows within it
// (a control call between two small transfers). A client that works longer
// between calls (a same-host get copying 4 MiB, 250 µs, before its next
// GetReplicaList) would find the thread asleep every time, and its `send`
// would pay the wake-up of the thread's halted vCPU (docs/control-plane.md). So the
// window stretches to cover the gaps the thread actually sees: when work wakes
// it after a gap of at most `max`, the window becomes 1.5× that gap (at least
// `base`, at most `max`); a longer gap (a client that went quiet) sets it back
// to `base`. The thread therefore sleeps at most once per change of a client's
// rhythm, and never polls longer than `max` after its last work.
#pragma once

#include <algorithm>
#include <chrono>

namespace crescent::transfer {

class PollWindow {
 public:
  using Us = std::chrono::microseconds;

  // max below base is taken as base (a fixed window); negative values as 0.
  PollWindow(Us base, Us max)
      : base_(std::max(base, Us(0))), max_(std::max(max, base_)), window_(base_) {}

  // The thread slept and was woken by work that came `gap` after its last.
  void AfterSleep(Us gap) {
    window_ = gap > max_ ? base_ : std::clamp(gap + gap / 2, base_, max_);
  }

  // How long to poll after work before sleeping.
  Us window() const { return window_; }

 private:
  Us base_;
  Us max_;
  Us window_;
};

}  // namespace crescent::transfer
