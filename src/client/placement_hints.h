// PlacementHints: where this client last saw each same-host object, so that a
// later get can copy it while the master is still granting the read lease.
//
// A get is GetReplicaList (lease and capability) then a read. For a same-host
// replica the read is a memcpy, and on a small VM the lease round trip costs
// about as much as copying 1 MiB. With a hint the client sends the request,
// copies the hinted range during the round trip, and keeps the bytes only if
// the reply names the same replica: same endpoint, segment, offset and length,
// and the same placement (master::ReplicaDescriptor::placement). An allocation
// is freed once and its placement is not handed out again until the segment's
// 32-bit allocation counter wraps, so a placement seen both when the hint was
// taken (the object complete) and in the reply (now leased) was the object's
// the whole time in between, and a complete object's bytes never change. The
// copy therefore read the object's bytes, and everything the master does for a
// get (lease, touch, hit counters) still happens. On any mismatch the client
// reads again from the reply's replicas.
//
// A hint is used for at most max_age_ms after it was last confirmed (10 min by
// default): far less than 2^32 allocations take on one segment, so a wrapped
// counter can never make an old hint look current. Hints come from the
// client's own completed puts and reads; past `capacity` keys the oldest is
// dropped (FIFO). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rpc/master_client.h"

namespace crescent::client {

struct PlacementHint {
  std::string endpoint;
  uint32_t segment = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t placement = 0;

  // True when `replica` is the very range and allocation this hint names.
  bool Matches(const rpc::RemoteReplica& replica) const;
};

// The replica of a read reply (`size`, `replicas`) that confirms `hint`: the
// same range and allocation, granted for reading, its capability alive at
// `now_unix_ms`. Null when none does; then bytes copied ahead are not the object's.
const rpc::RemoteReplica* Confirming(const PlacementHint& hint, uint64_t size,
                                     const std::vector<rpc::RemoteReplica>& replicas,
                                     int64_t now_unix_ms);

class PlacementHints {
 public:
  static constexpr int64_t kDefaultMaxAgeMs = 10 * 60 * 1000;

  explicit PlacementHints(size_t capacity, int64_t max_age_ms = kDefaultMaxAgeMs)
      : capacity_(capacity), max_age_ms_(max_age_ms) {}

  // `now_ms` on any steady clock, the same one for every call.
  void Remember(const std::string& key, const rpc::RemoteReplica& replica, int64_t now_ms);
  // The hint for `key`, unless there is none or it is older than max_age_ms.
  std::optional<PlacementHint> Lookup(const std::string& key, int64_t now_ms);
  void Forget(const std::string& key);
  void Clear();
  size_t size() const;

 private:
  struct Entry {
    PlacementHint hint;
    int64_t taken_ms = 0;
    uint64_t seq = 0;  // insertion number, to tell a live FIFO slot from a stale one
  };

  const size_t capacity_;
  const int64_t max_age_ms_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> table_;
  std::deque<std::pair<std::string, uint64_t>> order_;  // (key, seq), oldest first
  uint64_t next_seq_ = 0;
};

}  // namespace crescent::client
