// Value types of the master's API: segments, replicas, put configuration and
// read results. Plain data; no behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "crescent/status.h"

namespace crescent::master {

using SegmentId = uint32_t;
inline constexpr SegmentId kNoSegment = 0;  // segment ids start at 1

enum class Tier : uint8_t { kDram = 0, kPmem = 1 };

struct SegmentSpec {
  std::string name;        // unique among mounted segments
  uint64_t capacity = 0;   // bytes
  std::string owner_node;  // store node id; must heartbeat
  std::string endpoint;    // where clients reach the node's data plane
  Tier tier = Tier::kDram;
  // The mounting node's proof of ownership: Unmount must present it when it is
  // non-zero (the RPC layer requires it). Never shown to anyone else.
  uint64_t owner_token = 0;
  // A persistent segment's file (transfer::PmemFile::file_identity); 0 for
  // DRAM, and where unknown (a node that does not send it, a restored spec).
  // A copy of the file carries the same name but not this.
  uint64_t file_identity = 0;

  bool operator==(const SegmentSpec&) const = default;
};

// One mount of a segment as its node made it: the endpoint (with its epoch)
// and the owner token. Together they prove the node is the same process with
// the same memory: the token never leaves master and node (and the master's
// data dir).
struct MountIdentity {
  std::string endpoint;
  uint64_t owner_token = 0;
};

// What a store node presents of its previous mount when it mounts again after
// a master restart. `earlier` holds the mounts before it that the node still
// remembers, newest first: a master that lost the last moments of its log
// (--log-sync N, or a torn tail) may know the segment only by one of them.
struct PreviousMount {
  std::string endpoint;
  uint64_t owner_token = 0;
  std::vector<MountIdentity> earlier;

  // One of these mounts is `spec`'s (a token of 0 proves nothing).
  bool Proves(const std::string& spec_endpoint, uint64_t spec_token) const {
    if (spec_token == 0) return false;
    if (endpoint == spec_endpoint && owner_token == spec_token) return true;
    for (const MountIdentity& m : earlier) {
      if (m.endpoint == spec_endpoint && m.owner_token == spec_token) return true;
    }
    return false;
  }
};

struct SegmentInfo {
  SegmentId id = kNoSegment;
  SegmentSpec spec;
  uint64_t used_bytes = 0;
  uint64_t allocations = 0;
  uint64_t largest_free = 0;
};

// Where one copy of an object lives.
struct ReplicaDescriptor {
  SegmentId segment = kNoSegment;
  std::string endpoint;
  uint64_t offset = 0;
  uint64_t length = 0;
  // Names this allocation: a keyed hash (common/keyed_hash.h) of its segment id
  // and its allocator's generation, under a random key of the master engine,
  // so that one placement reveals nothing of another. The same pair comes back
  // within one engine only after its segment has handed out 2^32 allocations
  // (the allocator's generation is an allocator-wide 32-bit counter) or its
  // segment id has come round again (after 2^16 mounts of the id's slot,
  // segment_table.h); two different pairs share a placement with probability
  // 2^-64; another engine has another key. A client that saw the same placement for a
  // key twice, within a span far shorter than either, knows the bytes did not
  // change in between (values are immutable once the put ends).
  // client/placement_hints.h bounds that span.
  uint64_t placement = 0;
};

// What PutStart grants: where to write each replica, and the token that names
// this one put of the key. PutEnd and PutRevoke must present the token. A put
// that timed out, and whose key another writer has since started again, thus
// cannot be ended or revoked by its first writer: a late PutEnd naming only the
// key would publish the second writer's half-written bytes. A token is a keyed
// hash (common/keyed_hash.h) of the put's object id under a random key of the
// master engine: one token reveals nothing of another. Ids of one engine repeat
// only after a slab slot is reused 2^24 times, two different ids share a token
// with probability 2^-64, and another engine has another key.
struct PutGrant {
  std::vector<ReplicaDescriptor> replicas;
  uint64_t token = 0;
  // When the put is discarded if not ended, on the engine's clock: the write
  // capabilities must expire by then (a retried PutStart keeps the first one).
  TimeMs deadline = 0;
};

struct PutConfig {
  // Best effort on distinct segments; at least one.
  uint32_t replica_count = 1;
  // Placement preference: this segment first, else segments owned by this node.
  std::string preferred_segment;
  std::string local_node;
  // Soft pin: for this long the object is evicted only after every unpinned one.
  int64_t soft_pin_ttl_ms = 0;
  // Hard pin: never evicted (still removable).
  bool hard_pin = false;
  // Chain parent (the previous page of a prefix), for prefix-aware eviction.
  std::string parent_key;
  // The last page of its write (a chained BatchPutStart sets it on its last
  // key): a feature of the learned eviction policy. Not sent on the wire.
  bool ends_write = false;
  // Read capabilities for the client's location cache, valid this long
  // (proto PutConfig.cache_capability_ms; 0: none). Signed by the RPC layer.
  uint32_t cache_capability_ms = 0;
};

struct ReadResult {
  uint64_t size = 0;
  uint64_t checksum = 0;  // the value's XXH3-64, recorded at PutEnd
  std::vector<ReplicaDescriptor> replicas;
  TimeMs lease_expiry = 0;  // the read is valid only until then
};

// GetLongestPrefix's answer: the stored key it matched and its read, as
// GetReplicaList's for that key.
struct PrefixMatch {
  std::string key;
  ReadResult read;
};

struct BatchExistsResult {
  std::vector<bool> present;  // one per key, in input order (false for a refused key)
  size_t leading = 0;         // number of leading keys present
  // Empty when every key was valid; otherwise one per key: why that key was
  // refused (INVALID_KEY), OK for the keys `present` answers.
  std::vector<Status> statuses;
};

// One tenant's quota and use (docs/security.md, "Quotas"; tenant_usage.h).
struct TenantStats {
  std::string tenant;
  uint64_t quota_bytes = 0;  // 0: none
  uint64_t bytes = 0;        // complete and pending objects' sizes
  uint64_t objects = 0;      // complete objects
  uint64_t hits = 0;         // reads that found a complete object
  uint64_t misses = 0;       // reads that found none
  uint64_t evictions = 0;    // its objects evicted (for its quota or for space)
};

struct MasterStats {
  uint64_t objects = 0;  // complete
  uint64_t pending_puts = 0;
  uint64_t capacity_bytes = 0;  // mounted segments
  uint64_t used_bytes = 0;      // allocated (complete + pending + held)
  // Allocated space that left the namespace (removed, evicted, revoked or
  // timed-out puts) while a capability may still reach it (part of
  // used_bytes): not reusable until the last such capability has expired plus
  // capability_grace_ms (fencing, docs/capabilities.md).
  uint64_t held_bytes = 0;
  uint64_t metadata_bytes = 0;  // indexes, slabs, bloom, policy estimate
  uint64_t bloom_design_keys = 0;
  double bloom_estimated_fpr = 0;
  size_t segments = 0;
  // The largest object a put is accepted for now (ValidateSize): the largest
  // segment, within the configured limits; 0 while no segment is mounted.
  uint64_t largest_object = 0;
};

// What List() counts for each key beyond its bytes: a reply's framing of one
// key (a protobuf tag and a length of up to 3 bytes, as keys are below 2^21).
inline constexpr uint64_t kListKeyFramingBytes = 4;

}  // namespace crescent::master
