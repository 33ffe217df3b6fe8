#include "rpc/report_limiter.h"

#include <algorithm>

namespace crescent::rpc {

Status ReportLimiter::Take(const Caller& caller) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  if (buckets_.size() >= kMaxBuckets && !buckets_.contains(caller.name)) buckets_.clear();
  auto it = buckets_.try_emplace(caller.name, Bucket{kBurst, now}).first;
  Bucket& b = it->second;
  const double seconds = std::chrono::duration<double>(now - b.at).count();
  b.tokens = std::min(kBurst, b.tokens + seconds * kPerSecond);
  b.at = now;
  if (b.tokens < 1) {
    const std::string who = caller.role ? "token '" + caller.name + "'" : std::string("callers");
    return Status(ErrorCode::kUnavailable,
                  "ReportUnreachable ignored: too many reports from " + who + " (at most " +
                      std::to_string(static_cast<int>(kPerSecond)) + " a second after a burst of " +
                      std::to_string(static_cast<int>(kBurst)) + ")");
  }
  b.tokens -= 1;
  return Status::Ok();
}

}  // namespace crescent::rpc
