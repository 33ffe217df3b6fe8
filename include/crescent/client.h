// crescent::Client: the C++ client of a Crescent cluster.
//
// A put asks the master for replicas (PutStart), writes the bytes to every
// replica over the data plane, then makes the object visible (PutEnd); on any
// failure it revokes the put, so a failed put leaves nothing half-visible. A get
// asks for the replica list (which grants a read lease), reads one replica —
// same-host shared memory first, then TCP, then the next replica on failure —
// and never returns bytes read after the lease and its capability expired.
// Every value carries an end-to-end checksum: a put records the XXH3-64 of its
// bytes with the object, and a get hashes what it reads, as it copies, and
// returns it only if the two match; a replica that does not is reported to the
// master (which drops it) and the next replica is read. When none matches the
// get fails with CHECKSUM_MISMATCH: it never returns other bytes.
//
// Thread-safe: one Client may be shared by any number of threads. Every call is
// bounded by the configured timeouts; nothing hangs on a dead master or node.
// Errors are returned as Status, never thrown.
//
// Batch calls take any number of keys of any length and answer per key, as
// the same calls made one by one would: an invalid key gets its own
// kInvalidKey. A batch is sent to the master in parts of at most 4096 keys
// (rpc::MasterClientOptions::max_batch_keys), fewer where long keys need it
// to keep each request and its reply within the master's message limit
// (docs/control-plane.md, "Batches"). A get or put batch completes each part (a
// get's leases granted and bytes read; a put's starts, writes and ends)
// before the next, so that no read lease or write capability lapses while
// earlier parts move their bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "crescent/masters_stat.h"
#include "crescent/status.h"
#include "crescent/tls_config.h"

namespace crescent {

struct ClientConfig {
  // host:port or unix:/path, or etcd://H1:2379,H2:2379/NAME for a cluster of
  // masters: the client follows its leader (docs/ha.md). Empty:
  // $CRESCENT_MASTER, else 127.0.0.1:50051.
  std::string master_address;
  int64_t rpc_timeout_ms = 5000;  // per control-plane call
  int rpc_attempts = 4;           // tries while the master is unreachable
  // Send the hot control calls (exists, prefix queries, replica lists, a
  // put's start and end) over the master's lean control protocol when it
  // offers one, on a kept connection (docs/control-plane.md); false: gRPC only.
  bool lean_control = true;
  // A token, "NAME:SECRET" as `crescent token add` printed it, for a master
  // started with --auth-file (docs/security.md); empty: none. The connection
  // authenticates once, and every control call then goes over the lean
  // protocol (lean_control must stay on). Connect refuses text that is not a
  // token (UNAUTHENTICATED).
  std::string token;
  // TLS to the master (crescent/tls_config.h, docs/security.md): on with
  // `tls.ca`, over gRPC and the lean protocol's TCP port; a master address
  // unix:PATH is then refused (its sockets serve no TLS). Connect refuses
  // files that cannot be read or do not parse (INVALID_ARGUMENT).
  TlsConfig tls;
  // Per transfer: each value's read or write of one replica fails with
  // kTimeout when it has not finished this long after its turn came (TCP: its
  // connection finished the transfer before it; shared memory: it started).
  // It does not bound a batch call, which may take longer in all. A read that
  // fails on one replica tries the next, and a same-host op that shared memory
  // cannot carry is retried over TCP, each with this timeout again.
  int64_t transfer_timeout_ms = 10000;
  // A put that fails for a reason a moment may cure is tried again, with a
  // short backoff, until this long after it began: no segment mounted yet (a
  // cluster starting, or nodes remounting on a restarted master), the master
  // unreachable, a replica's node unreachable (reported to the master, which
  // then places elsewhere), or the master no longer knowing the put at its end
  // (it restarted, or the replica's segment was unmounted). A put whose end
  // went unanswered is ended again, not started again: the end may have been
  // applied, and the put then succeeded. 0: no retry.
  int64_t put_retry_ms = 5000;
  int tcp_lanes = 4;  // TCP connections per store node
  // TCP congestion control of this client's data connections (e.g. "cubic",
  // "reno"). Empty: $CRESCENT_TCP_CONGESTION, else the system default.
  // Connect refuses a name the kernel does not offer or allow.
  std::string tcp_congestion;
  bool use_shared_memory = true;  // same-host transfers by memcpy
  // Same-host objects whose place this client remembers (from its puts and
  // gets), so that a get copies them while the master grants the read lease
  // and keeps the bytes only if the reply confirms the place. 0: off.
  size_t placement_hints = 16384;
  // The store node id of this host, for local-first placement ("" = none).
  std::string local_node;
  // Gets check the bytes they read against the value's checksum. Off only to
  // measure what the check costs: an unverified get may return bytes that a
  // fault corrupted. Puts record the checksum either way.
  bool verify_checksums = true;
  // RegisterBuffer has the kernel read one byte of each page of the buffer in
  // a background thread at the lowest priority (not for a mapping of a file):
  // on VMs that shadow page tables the kernel's first access to each page,
  // a TCP transfer's send or recv, otherwise traps, and a fresh buffer's first
  // transfers run several times slower (docs/data-plane.md, "Design decisions").
  // Only reads: it never changes a byte. UnregisterBuffer stops it first.
  bool warm_registered_buffers = true;
};

struct PutOptions {
  // Best effort: on distinct segments, as many as are mounted, at most 16
  // (master::kMaxReplicas; a larger count is taken as 16). 0 is refused.
  uint32_t replica_count = 1;
  std::string preferred_segment;  // place here first when it has room
  int64_t soft_pin_ttl_ms = 0;    // evicted only after unpinned objects, for this long
  bool hard_pin = false;          // never evicted (still removable)
  // The chain parent (docs/master.md, "Chains"): a stored key whose page comes
  // right before this put's. For a chained batch (`chain`), the first key's:
  // a request's pages put after the ones already stored extend those, as
  // key i extends key i-1 within the batch. Unchained, every key's. Empty:
  // none. A parent that is not stored when a put ends links nothing.
  std::string parent_key;
};

// One piece of a key's value in the caller's memory (Client::
// BatchPutFromSlices, BatchGetIntoSlices).
struct MemorySlice {
  void* data = nullptr;
  size_t size = 0;
};

// A stored key and its value (Client::GetLongestPrefix).
struct KeyValue {
  std::string key;
  std::vector<std::byte> value;
};

// What a registered buffer may serve as (Client::RegisterBuffer).
enum class BufferAccess {
  kReadWrite,  // a put's source and a get's destination
  kReadOnly,   // a put's source only: memory this process cannot or must not write
};

struct SegmentUsage {
  std::string name;
  std::string owner_node;
  std::string endpoint;
  uint64_t capacity = 0;
  uint64_t used = 0;
  std::string tier = "dram";  // "dram" or "pmem" (a persistent segment)
};

// One tenant's quota and use (docs/security.md, "Quotas").
struct TenantStat {
  std::string tenant;
  uint64_t quota_bytes = 0;  // 0: none
  uint64_t bytes = 0;        // its objects' sizes, complete and pending puts
  uint64_t objects = 0;      // complete objects
  uint64_t hits = 0;         // reads that found their object
  uint64_t misses = 0;       // reads that found none
  uint64_t evictions = 0;    // its objects evicted, for its quota or for space
};

struct ClusterStat {
  uint64_t objects = 0;
  uint64_t pending_puts = 0;
  uint64_t capacity_bytes = 0;
  uint64_t used_bytes = 0;
  // Part of used_bytes: space of objects gone from the namespace (removed,
  // evicted, revoked or timed-out puts) that a capability may still reach; it
  // is freed once that capability has expired, plus a grace (fencing).
  uint64_t held_bytes = 0;
  // The largest value a put is accepted for now: the largest segment, within
  // the master's limits (0 while no segment is mounted).
  uint64_t largest_object = 0;
  // The master's admin HTTP port (/metrics, /health, /api/status, the status
  // page) on the master's host; 0 when it serves none.
  uint32_t admin_port = 0;
  std::vector<SegmentUsage> segments;
  std::map<std::string, uint64_t> counters;  // Prometheus sample name -> value
  // Every tenant for an admin (or without credentials); a tenant's client
  // sees its own only, other callers none.
  std::vector<TenantStat> tenants;
  // A cluster of masters on etcd: its leader, standbys and their lag
  // (docs/ha.md); `cluster` empty for a single master.
  MastersStat masters;
};

// What this client did on its own (not the cluster's counters).
struct ClientCounters {
  // Same-host objects copied during their lease round trip (ClientConfig::
  // placement_hints) whose reply confirmed the place: no second copy needed.
  uint64_t copy_ahead_kept = 0;
  // Copies ahead that the reply did not confirm (the object moved, was
  // replaced or removed, or the call failed); those objects were read again,
  // or reported with the call's error.
  uint64_t copy_ahead_discarded = 0;
  // Transfers that same-host shared memory could not carry (the node's socket
  // unreachable, its segment not mappable in this process) and that were sent
  // again over TCP to the same replica.
  uint64_t shm_fallbacks = 0;
  // Replicas whose bytes did not match their value's checksum on a get (each
  // was reported to the master, and another replica read if there was one).
  uint64_t checksum_mismatches = 0;
  // Keys of puts tried again after a failure a moment may cure
  // (ClientConfig::put_retry_ms), counted once per key and round.
  uint64_t put_retries = 0;
  // Reads that failed on one replica and were tried on the next.
  uint64_t replica_fallbacks = 0;
  // Keys of gets asked of the master again because their read capability
  // expired before the copy (a first mapping of a node's segment, a stalled
  // client), counted once per key and round (at most 3 rounds).
  uint64_t lease_retries = 0;
  // Bytes of same-host store-node segments this client has mapped now, and of
  // those, bytes whose pages it has read once since, in the background: on a
  // VM that shadows page tables, a get's first copy out of a page not yet
  // read costs several times a later one (docs/data-plane.md, "Warming the client's mapping").
  uint64_t shm_mapped_bytes = 0;
  uint64_t shm_warmed_bytes = 0;
};

// One operation family of this client (put, get, get_prefix, exists,
// query_prefix, remove, list, end_session); a batch call is one call.
struct ClientOpStats {
  uint64_t calls = 0;
  uint64_t ok_keys = 0;
  uint64_t failed_keys = 0;
  uint64_t bytes = 0;      // value bytes moved (put, get, get_prefix)
  double seconds = 0;      // summed call time
  double p50_seconds = 0;  // estimated from the latency histogram's buckets
  double p99_seconds = 0;
};

class Client {
 public:
  static StatusOr<std::unique_ptr<Client>> Connect(const ClientConfig& config = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // ---- Copying API ----
  Status Put(const std::string& key, std::span<const std::byte> value,
             const PutOptions& options = {});
  // A value larger than the client's memory can hold is NO_SPACE (use GetInto
  // with a buffer of your own for large values).
  StatusOr<std::vector<std::byte>> Get(const std::string& key);
  StatusOr<bool> Exists(const std::string& key);
  // The longest stored key that is a prefix of `key` (`key` itself counts),
  // and its value: for keys whose prefixes are keys themselves (token strings,
  // paths). One master call finds the key and grants its read, as Get's does;
  // only complete objects with a live replica match, a shorter one standing
  // in for a longer one that is not readable. kObjectNotFound when no stored
  // key prefixes `key`; invalid keys as Get's.
  StatusOr<KeyValue> GetLongestPrefix(const std::string& key);
  // A leased object is refused (OBJECT_LEASED) unless `force`; a forced one is
  // gone at once, but its space stays allocated until the lease ends, so a
  // reader already copying it never sees another object's bytes.
  Status Remove(const std::string& key, bool force = false);
  // Per-key results in input order. With `chain`, key i's parent is key i-1.
  std::vector<Status> BatchPut(std::span<const std::string> keys,
                               std::span<const std::span<const std::byte>> values,
                               const PutOptions& options = {}, bool chain = false);
  std::vector<StatusOr<std::vector<std::byte>>> BatchGet(std::span<const std::string> keys);
  // Whether each key is stored; an invalid key (empty, too long) gets its own
  // kInvalidKey, and a failed call its error in every slot.
  std::vector<StatusOr<bool>> BatchExists(std::span<const std::string> keys);
  std::vector<Status> BatchRemove(std::span<const std::string> keys, bool force = false);

  // ---- Zero-copy API on registered buffers ----
  // PutFrom/GetInto require [ptr, ptr+size) inside one registered buffer
  // (kBufferNotRegistered otherwise); bytes then move straight between that
  // memory and the store node (TCP socket or shared-memory memcpy).
  //
  // Registration asks the kernel how the range is mapped: memory that is not
  // mapped readable, or (with kReadWrite) not writable, such as a PROT_READ
  // mapping of a file, is refused with kInvalidArgument. A buffer registered
  // kReadOnly is a put's source only: a get into it is kInvalidArgument.
  Status RegisterBuffer(const void* ptr, size_t size,
                        BufferAccess access = BufferAccess::kReadWrite);
  Status UnregisterBuffer(const void* ptr);
  // Blocks until the page warming of every buffer registered now has finished
  // (ClientConfig::warm_registered_buffers); at once when there is none. For
  // callers that must not have the warming compete with what they time.
  void WaitBuffersWarm() const;
  // OK when [ptr, ptr+size) lies inside one registered buffer that allows
  // `need` (kReadOnly: to be read, as a put's source; kReadWrite: to be
  // written, as a get's destination), else kBufferNotRegistered
  // (kInvalidArgument for null, or for writing a read-only buffer). For
  // callers, such as the Python binding's scatter/gather forms, that stage
  // bytes themselves but must honour the same contract as PutFrom/GetInto.
  Status CheckBuffer(const void* ptr, size_t size,
                     BufferAccess need = BufferAccess::kReadOnly) const;
  Status PutFrom(const std::string& key, const void* ptr, size_t size,
                 const PutOptions& options = {});
  // Returns the object's size; kBufferTooSmall (naming the size needed) when
  // `capacity` is less than it. On success the first `size` bytes hold the
  // object; the rest of the first `capacity` bytes, and all of them after a
  // failure, are unspecified: a same-host get may have copied a remembered
  // object into them ahead of its reply (ClientConfig::placement_hints). The
  // batch form holds the same per key.
  StatusOr<size_t> GetInto(const std::string& key, void* ptr, size_t capacity);
  std::vector<Status> BatchPutFrom(std::span<const std::string> keys, std::span<void* const> ptrs,
                                   std::span<const size_t> sizes, const PutOptions& options = {},
                                   bool chain = false);
  std::vector<StatusOr<size_t>> BatchGetInto(std::span<const std::string> keys,
                                             std::span<void* const> ptrs,
                                             std::span<const size_t> capacities);

  // ---- Multi-buffer (scatter/gather, zero-copy) ----
  // Puts each key's value as its slices joined in order, sent straight from
  // them (TCP: one iovec each; shm: the node reads them) with no staging
  // copy; the checksum covers them in order. Each slice must be non-empty and
  // inside a registered buffer (kBufferNotRegistered, as PutFrom's).
  std::vector<Status> BatchPutFromSlices(std::span<const std::string> keys,
                                         std::span<const std::vector<MemorySlice>> slices,
                                         const PutOptions& options = {});
  // Reads each key's value into its slices in order, straight from the node:
  // the first slices hold its bytes, the last of them in part when the value
  // is shorter than the slices together; kBufferTooSmall when they hold less
  // than the value. Returns each value's size.
  std::vector<StatusOr<size_t>> BatchGetIntoSlices(
      std::span<const std::string> keys, std::span<const std::vector<MemorySlice>> slices);

  // ---- Prefix API ----
  // How many leading keys are stored (stops at the first miss).
  StatusOr<size_t> BatchQueryPrefix(std::span<const std::string> keys);
  // Fetches the longest stored prefix of `keys` into the buffers (page i into
  // ptrs[i]); returns how many leading pages were fetched. A page that cannot
  // be read ends the prefix there.
  StatusOr<size_t> GetPrefixInto(std::span<const std::string> keys, std::span<void* const> ptrs,
                                 std::span<const size_t> capacities);

  // ---- Namespace and cluster ----
  // Keys starting with `prefix`, in key order: the first ones, at most `limit`
  // (0: the master's maximum per reply, 1M keys by default), and never more
  // than one reply can carry (the gRPC message limit, 64 MiB by default).
  // `truncated`, when given, is set to whether more keys matched than were
  // returned. With `after`, only keys after it: to page through any number of
  // keys, call again with the last key returned while *truncated. Pages so
  // chained never repeat a key and list once every key that stays stored
  // while they are fetched, whatever else is put or removed meanwhile.
  StatusOr<std::vector<std::string>> List(const std::string& prefix, size_t limit = 0,
                                          bool* truncated = nullptr, const std::string& after = "");
  // Removes every key that starts with `prefix`, which must not be empty
  // (INVALID_ARGUMENT: every key would go; that is RemoveAll). A key a reader
  // holds a lease on stays unless `force`; the count removed is returned.
  StatusOr<size_t> RemoveByPrefix(const std::string& prefix, bool force = false);
  StatusOr<size_t> RemoveAll(bool force = false);
  // A session hint: the conversation whose pages `keys` are has ended, so
  // its pages are the cache's preferred victims until another request reads
  // them (docs/engines.md, "Session hints"). Advice only: nothing is
  // removed, and pins and read leases hold. Returns how many stored objects
  // were marked; keys not stored are skipped. One invalid key (empty, too
  // long) refuses the call with INVALID_KEY, marking nothing. Any number of
  // keys: sent in batches of ClientConfig's batch limit.
  StatusOr<size_t> EndSession(std::span<const std::string> keys);
  StatusOr<uint64_t> GetSize(const std::string& key);
  StatusOr<ClusterStat> Stat();
  ClientCounters Counters() const;
  // This client's latency histograms and counters, in the Prometheus text
  // format (the crescent_client_* families of docs/metrics.md), for an
  // inference engine to serve on its own /metrics.
  std::string Metrics() const;
  // Calls, keys, bytes and latency by operation family.
  std::map<std::string, ClientOpStats> OpStats() const;

  const std::string& master_address() const;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent
