// ReportUnreachable's rate limit (docs/security.md, "Nodes"): a token bucket
// per caller, by token name (one bucket for all callers of a master without
// credentials, which cannot tell them apart). A report past the limit is
// refused UNAVAILABLE and changes nothing; clients send these reports best
// effort, so a refused one costs them nothing.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "crescent/status.h"
#include "rpc/access.h"

namespace crescent::rpc {

class ReportLimiter {
 public:
  // A caller may send kBurst reports at once, then kPerSecond a second.
  static constexpr double kBurst = 16;
  static constexpr double kPerSecond = 4;

  // OK and one report taken from `caller`'s bucket, or UNAVAILABLE saying the
  // report is ignored.
  Status Take(const Caller& caller);

 private:
  struct Bucket {
    double tokens = kBurst;
    std::chrono::steady_clock::time_point at;
  };
  // Buckets by token name: as many as the auth file has tokens (cleared
  // should it ever exceed this, which only forgets some refills).
  static constexpr size_t kMaxBuckets = 4096;
  std::mutex mu_;
  std::map<std::string, Bucket, std::less<>> buckets_;
};

}  // namespace crescent::rpc
