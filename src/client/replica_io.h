// ReplicaIo: moves objects' bytes between client memory and their replicas,
// choosing a transport per replica (same-host shared memory when the node offers
// it and we can reach it, TCP otherwise) and batching each transport's ops into
// one Execute so TCP can pipeline them over its lanes.
//
//  - WriteAll: an object succeeds only when every one of its replicas was written
//    (the caller then ends the put; otherwise it revokes it). Its checksum is
//    taken as the bytes leave (TCP: as each send returns, in cache; shm: while
//    the node copies), not in a pass of its own before.
//  - ReadAny: each object is read from its first reachable replica; a failed
//    replica is retried on the next, round by round, until one succeeds or none
//    is left. The reported error is the last replica's. With checksums, a read
//    whose bytes (hashed by the transport as they land) do not match its
//    object's checksum is a failed replica too (kChecksumMismatch), and is
//    named in `corrupt` so that the caller can report it.
//  - A replica whose node could not be reached (a connection error or a
//    timeout: transfer::IsNodeFailure) makes its node suspect (SuspectNodes):
//    reads try its replicas last for a while, and WriteAll / ReadAny name its
//    segment in `unreachable` for the caller to report to the master.
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
#include "client/suspect_nodes.h"
#include "crescent/status.h"
#include "rpc/master_client.h"
#include "transfer/transport.h"

namespace crescent::client {

// An object's memory in the client: one buffer, or slices in order (a key's
// pages of several layers: transfer::TransferOp::slices), none copied.
struct ObjectMemory {
  std::byte* buffer = nullptr;
  std::span<const transfer::BufferSlice> slices;  // in place of `buffer` when not empty
};

class ReplicaIo {
 public:
  // `shm` may be null (shared memory disabled). Both must outlive this.
  ReplicaIo(transfer::Transport& tcp, transfer::Transport* shm, int64_t timeout_ms)
      : tcp_(tcp), shm_(shm), timeout_ms_(timeout_ms) {}

  // `unreachable`, when set, receives the segments of replicas whose node could
  // not be reached (each at most once per call), as does ReadAny's.
  // `checksums`, when set, receives each written object's checksum (HashValue
  // of its bytes, taken by the transports as they wrote them; 0 for a failed
  // one). Replicas that hashed different bytes (the buffer changed during the
  // write) fail the object with kInvalidArgument.
  std::vector<Status> WriteAll(std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
                               std::span<const ObjectMemory> memory,
                               std::vector<uint32_t>* unreachable = nullptr,
                               std::vector<uint64_t>* checksums = nullptr);
  std::vector<Status> WriteAll(std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
                               std::span<const std::byte* const> buffers,
                               std::vector<uint32_t>* unreachable = nullptr,
                               std::vector<uint64_t>* checksums = nullptr) {
    std::vector<ObjectMemory> memory;
    for (const std::byte* b : buffers) memory.push_back({const_cast<std::byte*>(b), {}});
    return WriteAll(replicas, memory, unreachable, checksums);
  }
  // A replica whose bytes failed their checksum: (*replicas[object])[replica].
  struct CorruptRead {
    size_t object;
    size_t replica;
  };
  // `checksums`: none (no verification), or one per object.
  std::vector<Status> ReadAny(std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
                              std::span<const ObjectMemory> memory,
                              std::span<const uint64_t> checksums = {},
                              std::vector<CorruptRead>* corrupt = nullptr,
                              std::vector<uint32_t>* unreachable = nullptr);

  // The first replica of `list` reachable over shared memory, or null.
  const rpc::RemoteReplica* SameHost(const std::vector<rpc::RemoteReplica>& list);
  // Copies a hinted same-host range into `memory` (its buffer, or its slices
  // in order) ahead of its capability (transport.h, CopyAhead); false when it
  // could not. `checksum_out`, when set, receives the copied bytes' XXH3-64.
  bool CopyAhead(const PlacementHint& hint, const ObjectMemory& memory,
                 uint64_t* checksum_out = nullptr);
  // Ops sent again over TCP after shared memory could not carry them.
  uint64_t shm_fallbacks() const { return shm_fallbacks_.load(std::memory_order_relaxed); }
  // Reads that failed on one replica and were tried on the next.
  uint64_t replica_fallbacks() const { return replica_fallbacks_.load(std::memory_order_relaxed); }
  const SuspectNodes& suspects() const { return suspects_; }
  // How long a node stays suspect to this client after a failed transfer.
  static constexpr int64_t kSuspectHoldMs = 2000;

 private:
  transfer::Transport& Pick(const std::string& endpoint);
  // Runs ops (grouped by transport) and returns their statuses in order. Ops
  // whose node could not be reached mark it suspect and add their segment to
  // `unreachable` (when set, without repeats).
  std::vector<Status> Run(const std::vector<transfer::TransferOp>& ops,
                          std::vector<uint32_t>* unreachable);
  // Replica indices of `list`: reachable before suspect, and among those,
  // same-host ones first.
  std::vector<size_t> PreferenceOrder(const std::vector<rpc::RemoteReplica>& list);

  transfer::Transport& tcp_;
  transfer::Transport* shm_;
  int64_t timeout_ms_;
  std::atomic<uint64_t> shm_fallbacks_{0};
  std::atomic<uint64_t> replica_fallbacks_{0};
  SuspectNodes suspects_{kSuspectHoldMs};
};

}  // namespace crescent::client
