// MasterClient: the typed client of the control plane (master.proto). Thread-safe;
// one gRPC channel shared by all callers.
//
// Every call has a deadline (rpc_timeout_ms); a batch call is sent as
// consecutive requests (BatchParts: by key count and by bytes, within the
// master's message limits), each with its own. A call that fails because the master
// cannot be reached (gRPC UNAVAILABLE) is retried with exponential backoff up to
// `attempts` times, then returns kUnavailable with a message naming the address;
// a deadline returns kTimeout. Engine errors come back as the engine's Status.
// With an etcd:// address the retries go to whichever master leads
// (leader_transport.h); `address()` is the etcd:// address.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "crescent/masters_stat.h"
#include "crescent/status.h"
#include "master/types.h"
#include "rpc/batch_parts.h"
#include "rpc/snapshot_part.h"
#include "rpc/tls.h"
#include "transfer/capability.h"

namespace crescent::rpc {

struct MasterClientOptions {
  // host:port, or unix:/path for the master's Unix socket, or
  // etcd://H1:2379,H2:2379/NAME for cluster NAME's masters: calls go to its
  // leader, whichever that is (leader_transport.h, docs/ha.md). Empty:
  // $CRESCENT_MASTER, else 127.0.0.1:50051.
  std::string address;
  int64_t rpc_timeout_ms = 5000;
  int attempts = 4;  // tries per call while the master is unreachable
  int64_t backoff_initial_ms = 50;
  int64_t backoff_max_ms = 1000;
  // gRPC receive/send limit and the lean protocol's body limit (match the
  // server's); also the bytes a batch request and its reply may take
  // (batch_parts.h).
  int max_message_bytes = 64 << 20;
  // Keys per request. A batch call is sent as consecutive requests of at most
  // this many keys, and fewer where their bytes require (batch_parts.h), so
  // that no batch is too large for the master: its key limit
  // (MasterServerOptions::max_batch, 65,536 by default) and its message limit.
  // A prefix query stops at the first request whose keys are not all present.
  size_t max_batch_keys = 4096;
  // The hot calls (control_methods.h) go over the master's lean control
  // protocol (control_channel.h) when it offers one: found with one
  // ControlEndpoints call, then a kept connection, through the master's Unix
  // socket when the client is on its host. Whenever that is not possible
  // (an older master, a closed port), calls go over gRPC, and the lean path is
  // tried again a second later. false: gRPC only.
  bool lean_control = true;
  // A lean call's caller polls for its answer this long before it sleeps
  // (docs/control-plane.md: a sleeping caller's wake-up costs more than the call
  // on a VM); 0: sleeps at once.
  int control_spin_us = 50;
  // A token, "NAME:SECRET" (auth/token.h, docs/security.md); empty: none.
  // With one, each lean connection authenticates once, and every call goes
  // over the lean protocol (needs lean_control), since gRPC carries no
  // credential; Create refuses text that is not a token (UNAUTHENTICATED).
  std::string token;
  // TLS to the master (tls.h, docs/security.md): on when `tls.ca` is set,
  // over gRPC and the lean protocol's TCP port (never its Unix socket, which
  // serves no TLS; a unix: address is refused). Create refuses files that
  // cannot be read or do not parse (kInvalidArgument).
  TlsFiles tls;
  // Send heartbeats to the master's Liveness service when it has one
  // (liveness_link.h); false: to Master.Heartbeat. `crescent serve`'s node
  // under TLS, which reaches its master over the plain Unix sockets, while
  // the Liveness port serves TLS only.
  bool liveness = true;
};

// The address MasterClient would use for `configured` (see above).
std::string ResolveMasterAddress(const std::string& configured);

// One copy of an object as the client sees it: where, and the right to touch it.
struct RemoteReplica {
  std::string endpoint;
  transfer::Capability cap;  // cap.segment/offset/length is the replica's range
  uint64_t placement = 0;    // the allocation's identity (master::ReplicaDescriptor)
};

// A started put (master::PutGrant): where to write, and the token that its
// PutEnd or PutRevoke must present.
struct RemotePut {
  std::vector<RemoteReplica> replicas;
  uint64_t token = 0;
  // With PutConfig::cache_capability_ms: a READ capability per replica, in
  // their order, for the location cache once the put has ended; else none.
  std::vector<transfer::Capability> read_caps;
};

struct RemoteRead {
  uint64_t size = 0;
  uint64_t checksum = 0;  // the value's XXH3-64: the bytes read must hash to it
  std::vector<RemoteReplica> replicas;
  int64_t lease_expiry_unix_ms = 0;
};

struct RemoteLongestPrefix {
  std::string key;  // the stored key matched
  RemoteRead read;
};

struct ClusterStats {
  uint64_t objects = 0;
  uint64_t pending_puts = 0;
  uint64_t capacity_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t held_bytes = 0;  // part of used_bytes (master::MasterStats)
  uint64_t metadata_bytes = 0;
  uint64_t largest_object = 0;  // master::MasterStats
  uint32_t admin_port = 0;      // the master's admin HTTP port (0: none)
  std::vector<master::SegmentInfo> segments;
  std::map<std::string, uint64_t> counters;
  std::vector<master::TenantStats> tenants;  // those the caller may see
  MastersStat masters;                       // a cluster's masters (docs/ha.md)
};

class MasterClient {
 public:
  static StatusOr<std::unique_ptr<MasterClient>> Create(const MasterClientOptions& options);
  ~MasterClient();
  const std::string& address() const;
  // The requests a batch call over `keys` is sent in (batch_parts.h), for
  // results that carry up to `replicas` replicas each (0: a call whose results
  // carry none; kDefaultMaxReplicas: a replica list). For a caller that works
  // part by part (a get's leases, a put's capabilities), one request per part.
  std::vector<KeyRange> BatchParts(std::span<const std::string> keys, uint64_t replicas) const;

  // With `secret_check`, the mount's proof (master.proto, MountSegmentResponse)
  // must verify under it: on a mismatch the segment is unmounted again and the
  // call fails with kCapabilityInvalid, as no capability the master signs would
  // pass on this node.
  // `previous`: the node's earlier mount, offered for a restored master to
  // take over (*adopted says whether it did).
  StatusOr<master::SegmentId> MountSegment(
      const master::SegmentSpec& spec, const transfer::CapabilitySigner* secret_check = nullptr,
      const master::PreviousMount* previous = nullptr, bool* adopted = nullptr);
  // `owner_token`: the SegmentSpec::owner_token the segment was mounted with.
  Status UnmountSegment(const std::string& name, const std::string& owner_node,
                        uint64_t owner_token);
  // kNodeUnknown: remount. Sent to the master's Liveness service when it has
  // one (liveness_link.h; found at each MountSegment), else Master.Heartbeat.
  // With `clock`, the master's clock from its reply (unix_ms 0 when the reply
  // carried none, or none came).
  // (unix_ms 0 when the reply carried none, or none came).
  struct MasterClockReading {
    int64_t unix_ms = 0;
    int64_t capability_grace_ms = 0;
    int64_t capability_lifetime_ms = 0;
  };
  Status Heartbeat(const std::string& node, MasterClockReading* clock = nullptr);
  StatusOr<std::vector<master::SegmentInfo>> ListSegments();

  StatusOr<RemotePut> PutStart(const std::string& key, uint64_t size,
                               const master::PutConfig& config);
  // `checksum`: the value's XXH3-64 (common/hash.h, HashBytes), which every
  // reader verifies. crescent::Client always sends it; 0 suits only callers
  // whose bytes no verifying client reads (tests of the control plane).
  Status PutEnd(const std::string& key, uint64_t token, uint64_t checksum = 0);
  Status PutRevoke(const std::string& key, uint64_t token);
  // Per-key results in input order; an RPC-level failure fills every slot with it.
  std::vector<StatusOr<RemotePut>> BatchPutStart(std::span<const std::string> keys,
                                                 std::span<const uint64_t> sizes,
                                                 const master::PutConfig& config, bool chain);
  // tokens[i] is keys[i]'s RemotePut::token; checksums[i] its checksum (as
  // PutEnd's), or none for all 0.
  std::vector<Status> BatchPutEnd(std::span<const std::string> keys,
                                  std::span<const uint64_t> tokens,
                                  std::span<const uint64_t> checksums = {});
  std::vector<Status> BatchPutRevoke(std::span<const std::string> keys,
                                     std::span<const uint64_t> tokens);

  StatusOr<RemoteRead> GetReplicaList(const std::string& key);
  // `meanwhile`, when set, runs once on the calling thread while the request is
  // in flight: the client copies same-host objects it expects to find there
  // during the round trip (client/placement_hints.h).
  // `cache_capability_ms`: BatchGetReplicaListRequest's (0: capabilities
  // expire with the lease).
  std::vector<StatusOr<RemoteRead>> BatchGetReplicaList(std::span<const std::string> keys,
                                                        bool prefix_mode,
                                                        const std::function<void()>& meanwhile = {},
                                                        uint32_t cache_capability_ms = 0);
  StatusOr<bool> Exists(const std::string& key);
  StatusOr<master::BatchExistsResult> BatchExists(std::span<const std::string> keys);
  StatusOr<size_t> BatchQueryPrefix(std::span<const std::string> keys);
  // The longest stored key that is a prefix of `key` (`key` included) and
  // its read, as GetReplicaList's; kObjectNotFound when there is none.
  StatusOr<RemoteLongestPrefix> GetLongestPrefix(const std::string& key);

  // The bytes read from `key`'s replica at (segment, offset) did not hash to
  // `checksum`, the RemoteRead's: the master drops that replica if it still
  // belongs to that version (master::MasterService::ReportCorruptReplica).
  Status ReportCorruptReplica(const std::string& key, uint32_t segment, uint64_t offset,
                              uint64_t checksum);

  // Transfers to these segments' nodes failed with a connection error or a
  // timeout (master::MasterService::ReportUnreachable).
  Status ReportUnreachable(std::span<const uint32_t> segments);

  Status Remove(const std::string& key, bool force);
  std::vector<Status> BatchRemove(std::span<const std::string> keys, bool force);
  StatusOr<size_t> RemoveByPrefix(const std::string& prefix, bool force);
  StatusOr<size_t> RemoveAll(bool force);
  // A session hint (master.proto, EndSession), in parts of at most
  // max_batch_keys; returns how many objects were marked over all parts.
  StatusOr<size_t> EndSession(std::span<const std::string> keys);
  // Reads served from the client's location cache (master.proto, TouchKeys),
  // in parts as EndSession's; returns how many keys were stored.
  StatusOr<size_t> TouchKeys(std::span<const std::string> keys);
  // `truncated`, when given, is set to whether more keys matched than returned.
  // `after`: only keys after it (the last key of the page before).
  StatusOr<std::vector<std::string>> List(const std::string& prefix, size_t limit,
                                          bool* truncated = nullptr, const std::string& after = "");
  StatusOr<ClusterStats> Stats();
  // Where this client's hot calls go now: the lean connection's target
  // ("unix:PATH" or "HOST:PORT"), or empty for gRPC. Connects first if it can.
  std::string ControlTarget();

  // With an etcd:// address, `fn` runs (on the client's etcd thread, so
  // briefly) whenever another master leads, or none; it must not destroy this
  // client. A store node's heartbeat goes to the new leader at once. Without
  // one, never. Replaces an earlier `fn`.
  void OnLeaderChange(std::function<void()> fn);

  // Asks for a snapshot (master.proto, Snapshot); returns the snapshot count
  // before it, which Stats' crescent_snapshots_total passes once it is written.
  StatusOr<uint64_t> RequestSnapshot();
  // A part of the master's snapshot at `position` (0: its newest) from
  // `offset` (master.proto, ReadSnapshot; the admin role).
  StatusOr<SnapshotPart> ReadSnapshot(uint64_t position, uint64_t offset, uint32_t max_bytes);

 private:
  struct Impl;
  explicit MasterClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::rpc
