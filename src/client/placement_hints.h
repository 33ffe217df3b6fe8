// PlacementHints: where this client last saw each same-host object, so that a
// later get can copy it while the master is still granting the read lease.
//
// A get is GetReplicaList (lease and capability) then a read. For a same-host
// replica the read is a memcpy, and on a small VM the lease round trip costs
// about as much as copying 1 MiB. With a hint the client sends the request,
// copies the hinted range during the round trip, and keeps the bytes only if
// the reply names the same replica: same endpoint, segment, offset and length,
// and the same placement (master::ReplicaDescriptor::placement). Placements
// are never reused, and an allocation is freed once, so a placement seen both
// when the hint was taken (the object complete) and in the reply (now leased)
// was the object's the whole time in between, and a complete object's bytes
// never change. The copy therefore read the object's bytes, and everything the
// master does for a get (lease, touch, hit counters) still happens. On any
// mismatch the client reads again from the reply's replicas.
//
// Hints come from the client's own completed puts and reads. The table is
// bounded: past `capacity` keys the oldest hint is dropped (FIFO). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

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

class PlacementHints {
 public:
  explicit PlacementHints(size_t capacity) : capacity_(capacity) {}

  void Remember(const std::string& key, const rpc::RemoteReplica& replica);
  std::optional<PlacementHint> Lookup(const std::string& key) const;
  void Forget(const std::string& key);
  void Clear();
  size_t size() const;

 private:
  struct Entry {
    PlacementHint hint;
    uint64_t seq = 0;  // insertion number, to tell a live FIFO slot from a stale one
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> table_;
  std::deque<std::pair<std::string, uint64_t>> order_;  // (key, seq), oldest first
  uint64_t next_seq_ = 0;
};

}  // namespace crescent::client
