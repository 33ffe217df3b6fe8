// ReplicaIo: moves objects' bytes between client memory and their replicas,
// choosing a transport per replica (same-host shared memory when the node offers
// it and we can reach it, TCP otherwise) and batching each transport's ops into
// one Execute so TCP can pipeline them over its lanes.
//
//  - WriteAll: an object succeeds only when every one of its replicas was written
//    (the caller then ends the put; otherwise it revokes it).
//  - ReadAny: each object is read from its first reachable replica; a failed
//    replica is retried on the next, round by round, until one succeeds or none
//    is left. The reported error is the last replica's. With checksums, a read
//    whose bytes (hashed by the transport as they land) do not match its
//    object's checksum is a failed replica too (kChecksumMismatch), and is
//    named in `corrupt` so that the caller can report it.
//  - An op that shared memory could not carry (the node's socket unreachable,
//    its segment not mappable: UNAVAILABLE, IO_ERROR, INTERNAL) is sent again
//    over TCP to the same replica; the shm transport then avoids that endpoint
//    for a while (its CanReach says no), so later ops go straight to TCP.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <vector>

#include "client/placement_hints.h"
#include "crescent/status.h"
#include "rpc/master_client.h"
#include "transfer/transport.h"

namespace crescent::client {

class ReplicaIo {
 public:
  // `shm` may be null (shared memory disabled). Both must outlive this.
  ReplicaIo(transfer::Transport& tcp, transfer::Transport* shm, int64_t timeout_ms)
      : tcp_(tcp), shm_(shm), timeout_ms_(timeout_ms) {}

  std::vector<Status> WriteAll(std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
                               std::span<const std::byte* const> buffers);
  // A replica whose bytes failed their checksum: (*replicas[object])[replica].
  struct CorruptRead {
    size_t object;
    size_t replica;
  };
  // `checksums`: none (no verification), or one per object.
  std::vector<Status> ReadAny(std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
                              std::span<std::byte* const> buffers,
                              std::span<const uint64_t> checksums = {},
                              std::vector<CorruptRead>* corrupt = nullptr);

  // The first replica of `list` reachable over shared memory, or null.
  const rpc::RemoteReplica* SameHost(const std::vector<rpc::RemoteReplica>& list);
  // Copies a hinted same-host range into `buffer` ahead of its capability
  // (transport.h, CopyAhead); false when it could not. `checksum_out`, when
  // set, receives the copied bytes' XXH3-64.
  bool CopyAhead(const PlacementHint& hint, std::byte* buffer, uint64_t* checksum_out = nullptr);
  // Ops sent again over TCP after shared memory could not carry them.
  uint64_t shm_fallbacks() const { return shm_fallbacks_.load(std::memory_order_relaxed); }

 private:
  transfer::Transport& Pick(const std::string& endpoint);
  // Runs ops (grouped by transport) and returns their statuses in order.
  std::vector<Status> Run(const std::vector<transfer::TransferOp>& ops);
  // Replica indices of `list`, same-host ones first.
  std::vector<size_t> PreferenceOrder(const std::vector<rpc::RemoteReplica>& list);

  transfer::Transport& tcp_;
  transfer::Transport* shm_;
  int64_t timeout_ms_;
  std::atomic<uint64_t> shm_fallbacks_{0};
};

}  // namespace crescent::client
