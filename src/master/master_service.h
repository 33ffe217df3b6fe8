// MasterService: the metadata engine of Crescent. It owns segments, objects,
// replicas, leases, pins, the prefix and negative-lookup indexes, and eviction;
// it never touches payload bytes. Driven in-process (tests inject a Clock), and
// by the RPC layer in production.
//
// It is a façade: the RPC surface below, and the lock order, over components
// that each own their state and lock (docs/master.md, "Components"):
// ObjectStore (shards, key indexes, Bloom filter), SegmentTable (segments,
// placement, node liveness), PolicySet (the eviction order), HeldSpace,
// PendingPuts, VerificationQueue, DurableFrees, TenantUsage, and RestoreState. The
// engine's code (master_*.cc) is what needs more than one of them: a put
// allocates in the segment table and creates an entry in a shard; an
// eviction picks from the policies and removes under a shard lock.
//
// Concurrency design (the contract every method follows):
//  - Lock order: the policy set's → a shard's → the segment table's → any
//    one leaf component's (HeldSpace, PendingPuts, VerificationQueue,
//    DurableFrees, TenantUsage). No thread takes a lock on the left while holding one on
//    its right, and no thread holds two shard locks at once.
//  - Reads take a shard's shared lock only; mutations take one shard's
//    exclusive lock at a time. No lock is held across a whole eviction round.
//  - Reads touch objects lock-free (object_entry.h); the first touch since the
//    last flush is queued in the policy set, which replays it before any
//    eviction decision.
//  - Ids in the policies may go stale (an object removed between its shard
//    update and the policy update); every victim is re-resolved by generation.
//  - Errors are returned as Status, never thrown; a failed call changes nothing.
//  - With an OperationLog attached, every change a snapshot would see is
//    appended (log_record.h) under the lock that orders it (the key's shard
//    lock; the segment table's for a mount), and a call that acknowledges a
//    change (PutEnd, removes, mounts, unmounts) first waits, with no lock
//    held, until the log says it is durable (group commit).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cache/eviction_policy.h"
#include "common/clock.h"
#include "common/keyed_hash.h"
#include "common/periodic_thread.h"
#include "crescent/status.h"
#include "master/durable_frees.h"
#include "master/held_space.h"
#include "master/log_record.h"
#include "master/master_config.h"
#include "master/master_counters.h"
#include "master/object_store.h"
#include "master/operation_log.h"
#include "master/pending_puts.h"
#include "master/policy_set.h"
#include "master/replica_copier.h"
#include "master/restore_state.h"
#include "master/segment_table.h"
#include "master/tenant_key.h"
#include "master/tenant_usage.h"
#include "master/types.h"
#include "master/verification_queue.h"

namespace crescent::master {

class MasterService {
 public:
  // `log`, when given, receives every state change (it must outlive the
  // service); none: nothing is logged.
  static StatusOr<std::unique_ptr<MasterService>> Create(
      const MasterConfig& config, const Clock& clock = SteadyClock::Instance(),
      OperationLog* log = nullptr);
  ~MasterService();
  MasterService(const MasterService&) = delete;
  MasterService& operator=(const MasterService&) = delete;

  // ---- Segments and store-node liveness ----
  // With `previous` (the node's earlier mount, after a master restart), a
  // restored segment of the same name is taken over, its objects readable
  // again (*adopted); otherwise the mount starts empty, and a restored segment
  // of that name is dropped with its objects (its node restarted). The owner
  // tokens are kept, and logged, only as verifiers (owner_verifier.h):
  // ListSegments() shows the verifier in SegmentSpec::owner_token.
  StatusOr<SegmentId> MountSegment(const SegmentSpec& spec, const PreviousMount* previous = nullptr,
                                   bool* adopted = nullptr);
  // Hides the segment's replicas at once and drops objects left without one.
  // `any_owner`: whoever mounted it (an admin's unmount; owner and token
  // unchecked).
  Status UnmountSegment(std::string_view name, std::string_view owner_node,
                        uint64_t owner_token = 0, bool any_owner = false);
  Status Heartbeat(std::string_view node);
  // Clients could not reach these segments' nodes (a transfer failed with a
  // connection error or a timeout): placement skips those nodes until they
  // prove alive (SegmentTable::MarkUnreachable). Returns how many of the
  // segments were mounted; ids of unmounted ones are stale and ignored.
  // `spare_last`: from a caller that may not be trusted with every node (a
  // token's, docs/security.md "Nodes"): the last node left unsuspected is not
  // marked while it heartbeats (SegmentTable::MarkUnreachable).
  size_t ReportUnreachable(std::span<const SegmentId> segments, bool spare_last = false);
  std::vector<SegmentInfo> ListSegments() const;

  // ---- Put lifecycle ----
  // `attempt` names this put for retries: a caller picks a random nonzero value
  // per put. A PutStart of the same key, size and attempt while that put is
  // still pending answers with the same grant (replicas and token) instead of
  // kObjectAlreadyExists: a retry whose first reply was lost, which would
  // otherwise fail and leave its own pending put blocking the key until the
  // put timeout. 0 means none: every repeat is kObjectAlreadyExists.
  StatusOr<PutGrant> PutStart(std::string_view key, uint64_t size, const PutConfig& config,
                              uint64_t attempt = 0);
  // `token` is PutStart's (PutGrant); kPutNotStarted unless that very put of
  // the key is still pending. Ending a put that this token has already ended
  // succeeds again (a retry whose reply was lost); revoking it does not.
  // `checksum` is the value's XXH3-64 as the writer computed it: stored with
  // the object and returned with its replica lists, so that every reader can
  // verify the bytes (a client always sends it; engine tests may leave it 0).
  Status PutEnd(std::string_view key, uint64_t token, uint64_t checksum = 0);
  Status PutRevoke(std::string_view key, uint64_t token);
  // Batch forms, results in input order. With `chain`, key i's parent is key i-1
  // (overriding config.parent_key for i > 0), unless key i-1 is invalid: it is
  // refused, and key i starts without a parent, as after any hole in a chain.
  // `attempts`: none, or keys[i]'s attempt (as PutStart's) at i; another count
  // fails every key, starting none.
  std::vector<StatusOr<PutGrant>> BatchPutStart(std::span<const std::string> keys,
                                                std::span<const uint64_t> sizes,
                                                const PutConfig& config, bool chain = false,
                                                std::span<const uint64_t> attempts = {});
  // tokens[i] is keys[i]'s; a count that differs fails every key, applying none.
  // `checksums`: none (all 0), or keys[i]'s at i, as PutEnd's; another count
  // fails every key too.
  std::vector<Status> BatchPutEnd(std::span<const std::string> keys,
                                  std::span<const uint64_t> tokens,
                                  std::span<const uint64_t> checksums = {});
  std::vector<Status> BatchPutRevoke(std::span<const std::string> keys,
                                     std::span<const uint64_t> tokens);

  // ---- Reads ----
  // Grants a read lease of LeaseMs(size).
  StatusOr<ReadResult> GetReplicaList(std::string_view key);
  // A result per key, an invalid key's its own error. In prefix mode the
  // result stops at the first key that is not readable, with that key's error
  // as its last entry (so a caller learns why the prefix ended).
  // With `prefix` (a tenant's, tenant_key.h), each key is looked up as
  // prefix + key (built in one reused buffer), as in the two calls below.
  std::vector<StatusOr<ReadResult>> BatchGetReplicaList(std::span<const std::string> keys,
                                                        bool prefix_mode = false,
                                                        std::string_view prefix = {});
  // True when a complete object exists. No lease unless exists_grants_lease.
  StatusOr<bool> Exists(std::string_view key);
  // Exists per key; an invalid key is refused alone (BatchExistsResult::statuses).
  BatchExistsResult BatchExists(std::span<const std::string> keys, std::string_view prefix = {});
  // Number of leading keys that are complete; stops at the first miss. The Bloom
  // filter answers definite misses without touching the index. An invalid key
  // ends the prefix like a miss (it cannot be stored); when it is the first
  // key, the call fails with its INVALID_KEY instead, so that a caller whose
  // keys are malformed learns it rather than seeing a permanent miss.
  StatusOr<size_t> BatchQueryPrefix(std::span<const std::string> keys,
                                    std::string_view prefix = {});
  // The longest complete, readable key that is a prefix of `key` (`key`
  // itself included) in `key`'s own namespace (a tenant's key matches only
  // that tenant's keys, tenant_key.h), read as GetReplicaList reads it, lease
  // included (master_longest_prefix.cc). Each shard's KeyIndex answers its
  // own candidates, longest first; one with no live replica gives way to the
  // next shorter one, and a pending put or a removed object is no candidate.
  // kObjectNotFound when no stored key prefixes `key`.
  StatusOr<PrefixMatch> GetLongestPrefix(std::string_view key);

  // ---- Integrity (master_integrity.cc) ----
  // A reader's bytes from `key`'s replica at (segment, offset) did not hash to
  // `checksum`, the object's recorded value. The reader may be wrong (its
  // buffer changed during the read, its own memory is faulty), so nothing is
  // dropped on its word: the report is queued for the replica's node to hash
  // the stored range itself (the copier's Verify, in the next maintenance
  // pass), and only a mismatch there drops the replica (the object with its
  // last one; its space held like a removed object's while read capabilities
  // may reach it). A match keeps it, counted as disproved. OK: queued (or
  // queued already). A report that does not apply (no replica of that version
  // of the key there) changes nothing: kObjectNotFound. kUnavailable when it
  // cannot be checked (no copier, or kMaxQueuedReports waiting): the replica
  // is kept, and the next reader that finds it bad reports it again.
  Status ReportCorruptReplica(std::string_view key, SegmentId segment, uint64_t offset,
                              uint64_t checksum);
  // Reports queued, or sent and waiting for another try, not yet decided.
  uint64_t PendingCorruptionReports() const;

  // ---- Remove and list ----
  // Leased objects are refused (kObjectLeased) unless `force`. A forced one
  // leaves the namespace at once, but its space is held until its lease ends:
  // a reader with a live read capability may still be copying those bytes, so
  // they must not be handed to another put before then.
  Status Remove(std::string_view key, bool force = false);
  std::vector<Status> BatchRemove(std::span<const std::string> keys, bool force = false);
  // Returns how many objects were removed; leased ones are skipped unless forced.
  StatusOr<size_t> RemoveByPrefix(std::string_view prefix, bool force = false);
  size_t RemoveAll(bool force = false);
  // RemoveAll of the default namespace alone: every key but tenants'.
  size_t RemoveDefaultNamespace(bool force = false);
  // Complete keys under `prefix` in key order: the first ones, at most `limit`
  // of them (0: no limit) whose sizes plus kListKeyFramingBytes each add up to
  // at most `max_bytes` (0: no limit). *truncated says whether more match. The
  // call holds at most its answer (plus one key), whatever the shard count.
  // With `after` (non-empty), only keys after it in key order: the next page
  // after a page ending at `after`. Pages chained so never repeat a key, and
  // list every key stored throughout the paging, whatever is put or removed
  // meanwhile.
  // With `default_only`, tenants' keys (tenant_key.h) are left out.
  std::vector<std::string> List(std::string_view prefix, size_t limit = 0, uint64_t max_bytes = 0,
                                bool* truncated = nullptr, std::string_view after = {},
                                bool default_only = false) const;

  // ---- Session hints (master_session.cc; docs/engines.md, "Session hints") ----
  // The engine's word that the conversation these keys' pages belong to has
  // ended: each complete object among them but the hard-pinned (which no
  // policy holds) is marked in the policies (EvictionPolicy::EndSession), a
  // preferred victim until it is read again; a soft-pinned one among the
  // soft-pinned. Advice only: nothing is removed, and pins and leases hold.
  // Keys not stored (or being written) are skipped. Reads queued before the
  // call are replayed into the policies first, so that a read from before
  // the hint does not clear it. Returns how many objects were marked; an
  // invalid key refuses the whole call (kInvalidKey), marking nothing. Each
  // mark is logged (kSessionEnded), and the call waits for its records as a
  // remove does: a restore re-applies what the log holds after its snapshot
  // (snapshots keep no marks). With `prefix` (a tenant's), as BatchExists.
  StatusOr<size_t> EndSession(std::span<const std::string> keys, std::string_view prefix = {});

  // Reads a client served from its location cache (docs/network.md,
  // "Location cache"): each complete key counts as read now, as
  // GetReplicaList counts it (its touch, so a policy access, and a read
  // lease), without a replica list. Returns how many keys were stored; an
  // invalid key refuses the whole call (kInvalidKey), touching nothing. With
  // `prefix` (a tenant's), as BatchExists.
  StatusOr<size_t> TouchKeys(std::span<const std::string> keys, std::string_view prefix = {});

  // ---- Maintenance ----
  // One maintenance pass: node expiry, put timeouts, soft-pin expiry, touch
  // flush, watermark eviction, Bloom rebuild. The background thread calls it.
  void RunMaintenance();
  void StartBackground(int64_t interval_ms = 50);
  // Tier moves (demotion, promotion; docs/persistent-tier.md) go through
  // `copier` (null: none; a DRAM victim is dropped). Set before serving; it
  // must outlive the engine's maintenance.
  void SetReplicaCopier(ReplicaCopier* copier);
  // Replicas of taken-over persistent segments whose check has not settled
  // (not served meanwhile), plus such segments still being queued.
  uint64_t PendingVerifications() const;
  void StopBackground();
  // The host is stopping (before StopBackground): no tier move, check or
  // eviction starts, those in flight end at once (Close()) and change nothing,
  // a put needing room is refused UNAVAILABLE: nothing waits on a node. Final.
  void BeginShutdown();
  // Why an eviction ran (counted by reason).
  enum class EvictionReason { kWatermark, kForPut };
  // Frees at least `bytes` by eviction if possible; returns bytes freed.
  // With `unreachable_only`, victims a capability may still reach (whose
  // space would only be held) are spared.
  uint64_t EvictBytes(uint64_t bytes, EvictionReason reason = EvictionReason::kWatermark,
                      bool unreachable_only = false);

  // ---- Durability ----
  // Hands `sink` the records that rebuild this state when applied in order to
  // an empty engine (segments, then objects from the next victim on), after
  // setting *log_position to the log position they cover: a restore applies
  // them and then the log from there (master_snapshot.cc says why that is
  // exact though the engine keeps serving meanwhile). Pending puts are left
  // out. *longest_lock_ms: the longest any one lock was held for it.
  struct CaptureStats {
    uint64_t objects = 0;
    uint64_t segments = 0;
    double longest_lock_ms = 0;  // the longest any one lock was held
    double order_lock_ms = 0;    // the policy set's lock, its longest hold to copy the order
  };
  Status Capture(uint64_t* log_position, const std::function<Status(const LogRecord&)>& sink,
                 CaptureStats* stats = nullptr);

  // ---- Restore (master_restore.cc; docs/durability.md) ----
  // Before the engine serves anything, a restore hands it a snapshot's
  // records and then the log's after it, in order. Each record sets a key's or
  // a segment's whole state (a repeat changes nothing). Nothing is logged.
  // Restored objects keep no lease; the policy sees them in record order (a
  // snapshot lists them from the next victim on), at the restore's
  // completion, as are chain parents: each restored object linked to its
  // parent key's object then (master_restore_chains.cc). A record that cannot apply (a put with no
  // replica) is skipped and counted in *skipped.
  void ApplyRestored(const LogRecord& record);
  // The same as ApplyRestored for each record in turn, with the records'
  // shards spread over the cores (master_restore_batch.cc).
  void ApplyRestoredBatch(std::span<const LogRecord> records);
  // Sizes the shards' hash sets for about `objects` restored
  // objects (a snapshot's record count), so that applying them rehashes
  // nothing. Only a hint; before the first ApplyRestored.
  void ReserveForRestore(uint64_t objects);
  struct RestoreSummary {
    uint64_t records = 0;
    uint64_t skipped = 0;  // records that could not apply
    uint64_t objects = 0;  // restored, waiting for their segments' nodes
    uint64_t segments = 0;
    uint64_t dropped_unmounted = 0;  // their segments were unmounted or unknown
  };
  // Ends the restore: drops the replicas of segments the records unmounted,
  // gathers each restored segment's allocations from its replicas, and makes
  // the restored segments wait, unmounted, until `grace_ms` from now for their
  // nodes to take them over (MountSegment with `previous`); then they are
  // dropped with their objects. A restored object is readable once one of its
  // segments is taken over.
  //
  // The engine may serve as soon as it returns: every answer is right from
  // then on. What only speeds answers up, orders eviction or waits for a node
  // is completed after it (master_restore_complete.cc): the restored
  // segments' allocators, rebuilt from those allocations (a take-over waits
  // for its segment's; a segment whose allocations conflict is dropped then,
  // counted in restore_dropped_conflict), the policies filled in record order
  // and their chain links, each shard's key index, the Bloom filter. By a
  // thread it starts, or, with `complete_in_background` false, by the
  // caller's CompleteRestore(). Until then eviction and snapshots wait for the
  // policy fill (a maintenance pass skips them), a list or prefix remove
  // builds the key indexes it needs itself, and reads do without the filter.
  // With `complete_in_background` false the caller must call CompleteRestore()
  // (or at least RebuildRestoredAllocators()) before a node takes a restored
  // segment over: a take-over waits for its segment's rebuilt allocator.
  RestoreSummary FinishRestore(int64_t grace_ms, bool complete_in_background = true);
  // Completes the restore on the caller's thread (FinishRestore with
  // complete_in_background false); returns at once if there is nothing left.
  void CompleteRestore();
  // CompleteRestore's first step alone (it is a no-op once done): for a test
  // that takes a segment over before it lets the rest complete.
  void RebuildRestoredAllocators();
  // Whether the restore's completion has finished; and a wait for it.
  bool RestoreCompleted() const { return restore_.completed.load(std::memory_order_acquire); }
  void AwaitRestoreCompleted();
  size_t restored_segments_waiting() const { return segments_.restored_count(); }

  // ---- Tenants (tenant_key.h, tenant_usage.h; master_quota.cc) ----
  // Keys of tenant T come as internal keys ("\x1d" T "\x1d" KEY, from the
  // RPC handlers); every call above takes them like any key. Each tenant's
  // byte quota (none: unlimited), from the auth file, at start and on each
  // reload: a PutStart that would take its tenant over its quota first
  // evicts that tenant's own objects, in its policy's order (never pinned,
  // soft-pinned or leased ones, never another tenant's), and is refused
  // QUOTA_EXCEEDED when that cannot make room.
  void SetTenantQuotas(const std::map<std::string, uint64_t>& quotas) {
    tenants_.SetQuotas(quotas);
  }
  // Every tenant with a quota or with objects, by name.
  std::vector<TenantStats> TenantStatsSnapshot() const { return tenants_.Snapshot(); }
  // Objects in the tenants' own eviction orders (tenant_orders.h): each
  // tenant's complete objects but the hard-pinned ones.
  size_t TenantOrdered() { return policies_.Lock().tenants().Count(); }

  // ---- Observability ----
  struct PinCounts {
    uint64_t hard = 0;  // complete objects that are never evicted
    uint64_t soft = 0;  // complete objects evicted only after every unpinned one
  };
  PinCounts Pins() const;
  // Complete objects whose read lease has not ended (a read since the last
  // flush counts as one). Walks every shard, a few thousand slots per shared
  // lock: O(objects), for a metrics scrape, not for a hot path.
  uint64_t CountLeased() const;
  // Store nodes the master knows (those with a mounted segment).
  std::vector<SegmentTable::NodeInfo> ListNodes() const { return segments_.Nodes(); }

  const MasterCounters& counters() const { return counters_; }
  // The durability figures in counters() are set from outside the engine.
  MasterCounters& mutable_counters() { return counters_; }
  // Bytes appended to the operation log since the last snapshot's position
  // (0 without a log).
  uint64_t LogBytesSinceSnapshot() const {
    if (log_ == nullptr) return 0;
    const uint64_t end = log_->end_position();
    const uint64_t at = counters_.last_snapshot_log_position.load(std::memory_order_relaxed);
    return end > at ? end - at : 0;
  }
  MasterStats Stats() const;
  const MasterConfig& config() const { return config_; }
  // The read lease of an object of `size` bytes (MasterConfig::lease_ms).
  int64_t LeaseMs(uint64_t size) const {
    return config_.lease_ms + static_cast<int64_t>(config_.lease_bytes_per_ms == 0
                                                       ? 0
                                                       : size / config_.lease_bytes_per_ms);
  }
  // The longest any capability this master signs lives: a write capability
  // (put_timeout_ms), a read one (the lease of the largest object it
  // accepts), a tier move's or a check's (tier_copy_timeout_ms). Store nodes
  // learn it with each heartbeat (docs/capabilities.md, "Clock skew").
  int64_t LongestCapabilityMs() const {
    return std::max({config_.put_timeout_ms, config_.tier_copy_timeout_ms, LeaseMs(LargestObject()),
                     config_.location_cache_capability_ms});
  }
  // The clock that deadlines and lease ends in results are on.
  const Clock& clock() const { return clock_; }

 private:
  using SoftPinExpiry = PolicySet::SoftPinExpiry;
  using Policies = PolicySet::Policies;
  using PolicyMove = PolicySet::PolicyMove;
  using Admission = PolicySet::Admission;
  using PolicyLock = PolicySet::Locked;
  using Located = ObjectStore::Located;
  MasterService(const MasterConfig& config, const Clock& clock, Policies policies);

  // ---- Operation log ----
  // Appends `record` if a log is attached, under the lock that orders the
  // change; returns the position to wait for before acknowledging it (0:
  // none; kLogFailed when the append failed).
  uint64_t LogChange(const LogRecord& record);
  // Waits until `position` is durable as the sync policy promises (with
  // `now`: on stable storage, whatever the policy); the log's error if it
  // has failed.
  Status AwaitLogged(uint64_t position, bool now = false);
  // The same wait, answering the log's own error (for a caller that undoes
  // the change).
  Status WaitLogged(uint64_t position, bool now = false);
  static constexpr uint64_t kLogFailed = UINT64_MAX;
  // The code a change answers when its record failed to be logged: a log
  // whose master no longer leads its cluster says UNAVAILABLE (a client tries
  // the new leader; the change's outcome is unknown to it, as a lost answer
  // is), any other failure IO_ERROR.
  static ErrorCode LogFailureCode(const Status& why) {
    return why.code() == ErrorCode::kUnavailable ? ErrorCode::kUnavailable : ErrorCode::kIoError;
  }
  // The record of `e`'s removal (kObjectRemoved), for LogChange.
  static LogRecord RemovalRecord(const ObjectEntry& e, RemovalReason reason);
  // Logs the unmount of each of `segments` (which drops their replicas, so
  // the drops themselves are not logged); returns the last position.
  uint64_t LogUnmounts(std::span<const SegmentId> segments);
  // The record of pending put `id` (entry `e`) ending; under its shard lock.
  LogRecord PutEndedRecordLocked(ObjectId id, const ObjectEntry& e);
  // Takes back the ended put `id` whose record the log could not make durable
  // (PutEnd answers IO_ERROR): it is neither served nor listed, and its space
  // is freed. Nothing if it was removed meanwhile.
  void UndoPutEnd(ObjectShard& shard, ObjectId id);
  // A put ended but not yet waited for in the log (PutEnd, BatchPutEnd: a
  // batch waits once for all its keys).
  struct EndedPut {
    ObjectShard* shard = nullptr;
    ObjectId id = 0;
    uint64_t logged = 0;   // the log position its record ends at (0: none)
    bool undoable = true;  // false: it had ended before (a retry)
    std::string key;
  };
  StatusOr<EndedPut> EndPut(std::string_view key, uint64_t token, uint64_t checksum);
  // What the put's caller is answered once the wait for `logged` gave
  // `waited`: an end the log could not record is undone.
  Status FinishPutEnd(const EndedPut& ended, const Status& waited);

  Status ValidateKey(std::string_view key) const;
  // Charges a put of `size` bytes of `key` to its tenant, first evicting the
  // tenant's own objects while it would go over its quota; QUOTA_EXCEEDED
  // when they cannot make room. OK, charging nothing, for a default key.
  Status ChargeQuota(std::string_view key, uint64_t size);
  // Evicts the next evictable object of `tenant` in its order; false: none.
  bool EvictForQuota(std::string_view tenant);
  Status ValidateSize(uint64_t size) const;
  // The largest segment's capacity in whole allocation granules; and that
  // within kMaxObjectSize and config_.max_object_size (MasterStats).
  uint64_t LargestSegmentObject() const;
  uint64_t LargestObject() const;
  Status CheckUnderWatermark(uint64_t size, const PutConfig& config) const;
  // What one replica of `size` bytes takes in a segment's allocator (sizes are
  // rounded up to the allocation alignment).
  uint64_t AllocatedBytes(uint64_t size) const {
    const uint64_t align = std::max<uint64_t>(1, config_.allocation_alignment);
    return (size + align - 1) / align * align;
  }

  std::vector<ReplicaDescriptor> Describe(const ObjectEntry& e) const;
  // Nullopt when the replica's segment is no longer mounted.
  std::optional<ReplicaDescriptor> DescribeSlot(const ReplicaSlot& r, uint64_t size) const;
  uint64_t PutToken(ObjectId id) const { return token_key_.Hash(id); }
  uint64_t Placement(const ReplicaSlot& r) const {
    return placement_key_.Hash(uint64_t{r.segment} << 32 | r.alloc_generation);
  }
  // The slot of the put of `key` that `token` names, pending or ended, under
  // the caller's shard lock; else kPutNotStarted, saying whether another put of
  // the key is pending.
  StatusOr<uint32_t> FindPutLocked(const Located& loc, std::string_view key, uint64_t token) const;
  // PutStart's answer again when `slot` (under the caller's shard lock) is the
  // pending put that `attempt` (nonzero) started with this size; else nullopt.
  std::optional<PutGrant> RepeatedPutLocked(const Located& loc, uint32_t slot, uint64_t size,
                                            uint64_t attempt);
  bool HasLiveReplica(const ObjectEntry& e) const;
  // Reads one object under its shard's shared lock and touches it (read lease).
  StatusOr<ReadResult> ReadLocked(ObjectShard& shard, uint32_t slot, TimeMs now);
  void Touch(ObjectShard& shard, uint32_t slot, TimeMs now);

  // Allocation with synchronous eviction on failure.
  std::vector<ReplicaSlot> AllocateWithEviction(uint64_t size, const PutConfig& config);
  // For a put with no room and no victim free at once: waits for the earliest
  // held space, if it comes due before `deadline` (steady clock), and frees
  // what has; false when it did not wait (config.put_wait_for_held_ms).
  bool AwaitHeldSpace(std::chrono::steady_clock::time_point deadline);
  // Space no log record names (a pending put's, a move's target that never
  // became the object's): back to its allocator at once.
  void FreeNow(std::span<const ReplicaSlot> slots);
  // Space a logged object left (replicas of `size` bytes): reused only once
  // the log is durable past the record that freed it (DurableFrees).
  void FreeLogged(std::span<const ReplicaSlot> slots, uint64_t size);
  // Frees what DurableFrees holds whose record is durable; with `sync`, first
  // makes the log durable through all of it. True when anything was freed.
  bool ReclaimDurableFrees(bool sync);

  // Removes a complete or pending entry under the caller's exclusive lock and
  // returns its policy id (to be dropped from the policy after unlocking). A
  // complete entry whose lease has not ended keeps its space held (Hold).
  ObjectId RemoveLocked(ObjectShard& shard, uint32_t slot);
  void Hold(const ObjectEntry& e, TimeMs until);
  // Holds those of `slots` (replicas of `size` bytes) that are on mounted
  // segments until `until`.
  void HoldSlots(std::vector<ReplicaSlot> slots, uint64_t size, TimeMs until);
  // Frees held space whose lease has ended.
  void ReleaseHeld(TimeMs now);
  // Drops held slots of unmounted segments (their space went with them).
  void ForgetHeldOn(std::span<const SegmentId> segments);
  void ForgetInPolicy(std::span<const ObjectId> ids);
  // *logged: the log position of its record (0: none).
  Status RemoveOne(std::string_view key, bool force, ObjectId* removed, uint64_t* logged);
  // Removes the complete objects under any of `prefixes` (leased ones only
  // with `force`); returns how many.
  StatusOr<size_t> RemoveUnder(std::span<const std::string_view> prefixes, bool force);

  // A victim's shard, locked exclusively from the eviction decision to the removal.
  using VictimLock = std::unique_lock<std::shared_mutex>;
  // Replays the reads queued since the last flush into the policies (each
  // object's touch folded into its lease first); not while a restore fills them.
  void FlushTouchesLocked(PolicyLock& order);
  // Soft pins that have ended: their objects join their tier's policy.
  void ExpireSoftPinsLocked(PolicyLock& order, TimeMs now);
  // The policy's victim, if any, with its shard locked in *victim.
  // From tier `tier`'s policy, then (DRAM only) the soft-pinned ones;
  // *soft tells which.
  // With `unreachable_only`, candidates that a read capability may still
  // reach (Reachable) are spared too.
  std::optional<ObjectId> PickVictimLocked(PolicyLock& order, TimeMs now, VictimLock* victim,
                                           Tier tier = Tier::kDram, bool* soft = nullptr,
                                           bool unreachable_only = false);
  // The spare test for a candidate: true (keep) when leased or hard-pinned,
  // or reachable with `unreachable_only`; otherwise false, and its shard's
  // exclusive lock is left in *victim.
  bool SpareLocked(ObjectId id, TimeMs now, VictimLock* victim, bool unreachable_only);
  // Whether a read capability issued for complete object `e` (its shard
  // locked) may still reach its space: its lease, after its deferred touch is
  // flushed, plus capability_grace_ms. Space it leaves before then is held.
  bool Reachable(ObjectEntry& e, TimeMs now);
  // Removes a chosen victim (its shard locked by `lock`); returns bytes freed
  // (0 for a stale id).
  uint64_t EvictVictim(ObjectId id, VictimLock lock, EvictionReason reason);
  // A DRAM victim that also has a persistent copy (a promotion kept it): its
  // DRAM replicas are dropped (logged; their space freed once durable, or
  // held while a reader may reach it) and it joins the persistent tier's
  // policy. Returns the DRAM bytes it frees.
  uint64_t DropDramCopy(ObjectId id, VictimLock lock);
  bool HasCopyOn(const ObjectEntry& e, Tier tier) const;
  // Objects left with persistent replicas only (their DRAM ones dropped with
  // a segment) leave DRAM's policy for the persistent tier's.
  void JoinPmemPolicy(std::span<const PolicyMove> moves);

  // ---- Tiers (master_tiering.cc) ----
  struct TierMove {
    ObjectId id;
    ReplicaSlot from;  // the object's only replica
    ReplicaSlot to;    // allocated on the other tier
    uint64_t size;
    Tier to_tier;
  };
  static constexpr size_t kMoveBatch = 32;  // copies sent at once
  // A move of complete object `e` (its shard locked) to tier `to`, its target
  // allocated; nullopt when it cannot move (no copier, not one replica, on
  // `to` already, no room there).
  std::optional<TierMove> PrepareMoveLocked(ObjectId id, const ObjectEntry& e, Tier to);
  // Copies, then commits or undoes each move (see master_tiering.cc); clears
  // `moves`. Takes shard locks and the policy set's lock itself.
  void RunMoves(std::vector<TierMove>& moves);
  void RunPromotions();
  // ---- Verification of a taken-over persistent segment (master_verify.cc) ----
  using PendingCheck = VerificationQueue::Check;
  static constexpr size_t kVerifyBatch = 256;
  // Drops `key`'s replica at (segment, offset) that its node found corrupt
  // (`corrupt`, counted) or whose check never got a verdict, if it still
  // belongs to that version of the object (kObjectNotFound if not, changing
  // nothing).
  Status DropReplica(std::string_view key, SegmentId segment, uint64_t offset, uint64_t checksum,
                     bool corrupt);
  // The verdict of one check: counts it, drops a corrupt replica; false when
  // it got none and should be sent again.
  bool ApplyVerdict(PendingCheck& c, const Status& verdict);
  // A check that came back with neither match nor mismatch (no answer in
  // time, the connection lost, the capability refused) is queued again, for
  // a later pass, until it has been sent this many times; then it counts as
  // skipped.
  static constexpr uint32_t kVerifyTries = 4;
  // Queues every complete object with a replica on `segment` for a check,
  // and keeps each such replica from being served until its check passes;
  // then lifts the segment's hold (taken by MountSegment, under the segment
  // table's lock, before the segment is visible).
  void EnqueueVerification(SegmentId segment);
  // Replica `r` may be read: its segment is mounted and, when that is a
  // taken-over persistent segment, its check has passed.
  bool Servable(const ReplicaSlot& r) const;
  // Checks queued objects for up to `budget_ms`; a mismatch drops the replica.
  void RunVerifications(int64_t budget_ms);
  // An object's tier: DRAM when any replica is there, else PMEM.
  Tier TierOfEntry(const ObjectEntry& e) const;
  // The policies' capacities follow their tiers'.
  void SetPolicyCapacities(PolicyLock& order);
  void SetPolicyCapacities();

  void DiscardExpiredPuts(TimeMs now);
  // Returns how many objects went with their last replica.
  size_t DropSegmentReplicas(std::span<const SegmentId> segments);
  // Frees `bytes` of tier `tier` (kWatermark) or of any (kForPut); see
  // master_eviction.cc. Returns the bytes freed or moved out. With
  // `unreachable_only`, only victims no capability can reach go: their space
  // is free (or, demoted, their move's source) at once, never held.
  uint64_t EvictFromTier(uint64_t bytes, EvictionReason reason, Tier tier,
                         bool unreachable_only = false);
  // Each shard in turn, under its exclusive lock: drops every replica (of
  // pending and complete entries) on a segment `keep_segment` refuses, and
  // the entries left with none (forgotten by the policy too); calls kept(e)
  // for every other entry, its replicas already cut. Returns the entries
  // dropped. Unmounts and the end of a restore share it.
  size_t SweepReplicas(const std::function<bool(SegmentId)>& keep_segment,
                       const std::function<void(const ObjectEntry&)>& kept = nullptr);
  // SweepReplicas' work on one shard (the end of a restore sweeps shards in
  // parallel: keep_segment and kept must then be safe to call concurrently).
  size_t SweepShardReplicas(ObjectShard& shard, const std::function<bool(SegmentId)>& keep_segment,
                            const std::function<void(const ObjectEntry&)>& kept);
  using RestoredPut = RestoreState::Put;
  using RestoreTally = RestoreState::Tally;
  // Links each restored object that is still in one of `policies` to its
  // parent key's object, if that is in the same policy and no cycle forms
  // (the restore's policy fill; nothing else may use them meanwhile).
  void LinkRestoredChains(Policies& policies);
  // Starts a restore on the first record: the key indexes wait for the end.
  void BeginRestore();
  void ApplySegmentRecord(const LogRecord& r);
  // Applies a put, remove or replica drop to the key's shard (`loc`, whose
  // exclusive lock the caller holds); a put leaves its admission in *admit (the policies are
  // filled only at the completion, so nothing needs forgetting there).
  // False: the record cannot apply.
  bool ApplyObjectRecord(const LogRecord& r, const Located& loc, RestoredPut* admit,
                         RestoreTally* tally);
  // A restored session hint: the object `slot` holds now (its shard locked)
  // is marked once the policies are filled (ApplyRestoredEnds).
  void NoteRestoredEnd(const ObjectShard& shard, uint32_t slot);
  // Marks the objects restored hints named that are still live, in the
  // policies just swapped in (`order`).
  void ApplyRestoredEnds(PolicyLock& order);
  void AddRestoredTally(const RestoreTally& t);
  // Admits a restored object to its policy in `into`, with its key's hash and
  // soft-pin end (0: none; ends go to *soft_expiry).
  static void AdmitRestored(const RestoredPut& p, uint64_t history, TimeMs soft_until,
                            Policies& into, std::vector<SoftPinExpiry>* soft_expiry);
  // Completion of a restore (master_restore_complete.cc): each step may run
  // while the engine serves.
  void FillRestoredPolicies();
  void BuildRestoredBloom();
  // Drops restored segments that never came back (RunMaintenance).
  void ExpireRestoredSegments();
  void WatermarkEvict();

  const MasterConfig config_;
  const Clock& clock_;
  // Random per MasterService: PutGrant::token is the keyed hash of the put's
  // ObjectId, ReplicaDescriptor::placement that of the allocation (segment id
  // and allocator generation). Two keys, so that no token equals a placement.
  const KeyedHash token_key_;
  const KeyedHash placement_key_;
  OperationLog* log_ = nullptr;  // set once by Create; thread-safe itself
  MasterCounters counters_;
  SegmentTable segments_;
  ObjectStore objects_;  // shards, key indexes, Bloom filter, counts (object_store.h)

  PolicySet policies_;  // the eviction order (policy_set.h: its lock comes first)
  std::atomic<ReplicaCopier*> copier_{nullptr};
  std::atomic<bool> stopping_{false};  // BeginShutdown; set before the copier closes
  // Checks waiting for their nodes, and the replicas not served meanwhile
  // (verification_queue.h: its lock is a leaf).
  VerificationQueue verification_;

  DurableFrees durable_frees_;

  HeldSpace held_;  // fenced space (held_space.h: its lock is a leaf, under a shard lock)

  // Puts in flight (pending_puts.h: its lock is a leaf, under a shard lock).
  PendingPuts pending_;

  TenantUsage tenants_;  // quotas and usage (tenant_usage.h: its lock is a leaf)

  RestoreState restore_;        // a restore's state until its completion (restore_state.h)
  PeriodicThread maintenance_;  // StartBackground's: RunMaintenance every interval
};

}  // namespace crescent::master
