// PutPath: a client's puts, from PutStart to PutEnd, with their retries.
//
// One round starts every key (PutStart), writes every replica (ReplicaIo),
// then ends what was fully written (PutEnd) and revokes the rest (PutRevoke).
// Keys that failed for a reason a moment may cure go round again, with a
// backoff, until ClientConfig::put_retry_ms after the start:
//  - a put the master could not start (UNAVAILABLE: unreachable, or no segment
//    yet), a write to an unreachable node, or an end the master answered
//    PUT_NOT_STARTED (it restarted, or dropped the put) is put again from its
//    start;
//  - an end whose answer never came (UNAVAILABLE after the RPC's own retries)
//    may have been applied: that key's next round ends the same put again, and
//    only a PUT_NOT_STARTED answer makes it start over. Starting it over would
//    meet the object the first end made and report OBJECT_ALREADY_EXISTS for
//    a put that succeeded. (The master answers an end whose token it no longer
//    knows, for a key holding an object with that very checksum, as ended:
//    MasterService::PutEnd.)
// A chain is retried in runs of consecutive keys, each run's first page
// linked to the page before it, so that parents stay right.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "client/replica_io.h"
#include "crescent/client.h"
#include "master/types.h"
#include "rpc/master_client.h"

namespace crescent::client {

class PutPath {
 public:
  // Called for each key whose put ended, with its grant (the replicas it was
  // written to), the checksum recorded and the value's size.
  using Ended =
      std::function<void(const std::string&, const rpc::RemotePut&, uint64_t checksum, uint64_t)>;

  PutPath(rpc::MasterClient& master, ReplicaIo& io, const ClientConfig& config,
          std::atomic<uint64_t>& retries, Ended ended)
      : master_(master), io_(io), config_(config), retries_(retries), ended_(std::move(ended)) {}

  // Puts every key under `base` (its parent_key is set here for chains);
  // `replicas` is the replica count the batch is split for. Results in input order.
  std::vector<Status> Put(std::span<const std::string> keys, std::span<const ObjectMemory> data,
                          std::span<const size_t> sizes, const master::PutConfig& base,
                          uint32_t replicas, bool chain);

 private:
  // A key's put whose end may have been applied: ended again, not started again.
  struct Unended {
    bool pending = false;
    uint64_t token = 0;
    uint64_t checksum = 0;
    uint64_t size = 0;
    rpc::RemotePut put;
  };
  // One round over keys[0..n) (one part); results, which keys to retry, and
  // which of those have an end to send again (unended[i].pending).
  std::vector<Status> Once(std::span<const std::string> keys, std::span<const ObjectMemory> data,
                           std::span<const size_t> sizes, const master::PutConfig& config,
                           bool chain, std::vector<bool>& retry, std::vector<Unended>& unended);
  // Ends each key of `idx` again (unended[i]); returns the keys to put again
  // from the start and adds to `again` those whose end is still unanswered.
  std::vector<size_t> EndAgain(std::span<const std::string> keys, const std::vector<size_t>& idx,
                               std::vector<Unended>& unended, std::vector<Status>& out,
                               std::vector<size_t>& again);

  rpc::MasterClient& master_;
  ReplicaIo& io_;
  const ClientConfig& config_;
  std::atomic<uint64_t>& retries_;
  Ended ended_;
};

}  // namespace crescent::client
