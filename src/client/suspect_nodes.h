// SuspectNodes: store-node endpoints this client failed to reach recently (a
// transfer ended with a connection error or a timeout). ReplicaIo tries their
// replicas last, so a get does not wait on a dead node first, again and again;
// the master hears of them too (ReportUnreachable) and stops placing new
// objects there. A suspicion lapses after `hold_ms`: a node that was only slow
// is tried first again. Endpoints carry the mount's epoch (endpoint.h), so a
// node that restarted and mounted again is a new endpoint, never suspect.
//
// Thread-safe; bounded: at most kMaxEntries endpoints are remembered (the
// oldest suspicion is forgotten first).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <mutex>
#include <string>

namespace crescent::client {

class SuspectNodes {
 public:
  static constexpr size_t kMaxEntries = 1024;

  explicit SuspectNodes(int64_t hold_ms) : hold_ms_(hold_ms) {}

  void Mark(const std::string& endpoint, int64_t now_ms);
  bool IsSuspect(const std::string& endpoint, int64_t now_ms) const;
  size_t size() const;

 private:
  const int64_t hold_ms_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, int64_t> until_;  // endpoint -> end of suspicion
};

}  // namespace crescent::client
