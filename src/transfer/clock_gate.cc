#include "transfer/clock_gate.h"

#include <algorithm>
#include <string>

#include "common/clock.h"

namespace crescent::transfer {

bool ClockGate::Record(const Reading& r) {
  if (r.master_unix_ms <= 0 || r.grace_ms < 0) return false;
  const int64_t round_trip = std::max<int64_t>(0, r.received_steady_ms - r.sent_steady_ms);
  // The master read its clock somewhere in the round trip; both clocks count
  // whole milliseconds.
  const int64_t uncertainty = round_trip / 2 + 1;
  if (uncertainty > r.grace_ms) return false;
  const int64_t offset = r.master_unix_ms - (r.sent_steady_ms + round_trip / 2);
  if (measured()) {
    const int64_t back = master_minus_steady_.load(std::memory_order_relaxed) - offset;
    if (back > allowed_ms_.load(std::memory_order_relaxed) + uncertainty) {
      const int64_t until = r.received_steady_ms + std::max<int64_t>(0, r.lifetime_ms) + back;
      if (until > held_until_steady_ms_.load(std::memory_order_relaxed)) {
        held_step_ms_.store(back, std::memory_order_relaxed);
        held_until_steady_ms_.store(until, std::memory_order_release);
      }
    }
  }
  master_minus_steady_.store(offset, std::memory_order_relaxed);
  allowed_ms_.store(r.grace_ms + uncertainty, std::memory_order_relaxed);
  measured_.store(true, std::memory_order_release);
  return true;
}

int64_t ClockGate::SkewMs(int64_t now_unix_ms, int64_t now_steady_ms) const {
  if (!measured()) return 0;
  return now_unix_ms - (now_steady_ms + master_minus_steady_.load(std::memory_order_relaxed));
}

bool ClockGate::Open(int64_t now_unix_ms, int64_t now_steady_ms) const {
  if (!measured()) return true;
  if (now_steady_ms < held_until_steady_ms_.load(std::memory_order_acquire)) return false;
  const int64_t skew = SkewMs(now_unix_ms, now_steady_ms);
  return std::max(skew, -skew) <= allowed_ms_.load(std::memory_order_relaxed);
}

bool ClockGate::Open(int64_t now_unix_ms) const {
  return Open(now_unix_ms, SteadyClock::Instance().NowMs());
}

Status ClockGate::Check(int64_t now_unix_ms, int64_t now_steady_ms) const {
  if (Open(now_unix_ms, now_steady_ms)) return Status::Ok();
  const int64_t held = held_until_steady_ms_.load(std::memory_order_acquire) - now_steady_ms;
  if (held > 0) {
    return Status(ErrorCode::kUnavailable,
                  "the master's clock stepped back " +
                      std::to_string(held_step_ms_.load(std::memory_order_relaxed)) +
                      " ms: this store node refuses capabilities for " + std::to_string(held) +
                      " ms more, until every capability signed before the step has expired");
  }
  const int64_t skew = SkewMs(now_unix_ms, now_steady_ms);
  return Status(ErrorCode::kUnavailable,
                "this store node's clock is " + std::to_string(std::max(skew, -skew)) + " ms " +
                    (skew < 0 ? "behind" : "ahead of") +
                    " the master's, more than the capability grace allows (" +
                    std::to_string(allowed_ms_.load(std::memory_order_relaxed)) +
                    " ms with the reading's uncertainty): it refuses capabilities until the "
                    "clocks agree");
}

Status ClockGate::Check(int64_t now_unix_ms) const {
  return Check(now_unix_ms, SteadyClock::Instance().NowMs());
}

}  // namespace crescent::transfer
