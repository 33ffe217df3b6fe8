// SegmentTable: the memory segments store nodes have mounted, their offset
// allocators, and store-node liveness.
//
// A SegmentId is (incarnation << 16 | slot): the slot indexes the table, and the
// incarnation counts the slot's mounts. An unmounted segment's slot is reused by
// a later mount (least recently freed first) under the next incarnation, so a
// replica or a quarantined slot that names the earlier id is recognisably dead:
// Get() finds another id in the slot. An id repeats only after its slot has been
// mounted 2^16 more times. Segment objects are never freed while the table
// lives: a replaced one is kept (allocator released) so that a lock-free reader
// that loaded it can still read its immutable fields.
//
// Locking: mu_ guards the allocators, the name map and the node table. The
// per-segment `mounted` flag is atomic (release on unmount, acquire on read) and
// the descriptive fields are immutable after mount, so the read path never takes
// mu_.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/offset_allocator.h"
#include "common/clock.h"
#include "crescent/status.h"
#include "master/master_config.h"
#include "master/object_entry.h"
#include "master/types.h"

namespace crescent::master {

class SegmentTable {
 public:
  // Slots: at most this many segments are mounted at once (slot 0 is unused).
  static constexpr uint32_t kMaxSegments = 1 << 16;

  SegmentTable(const MasterConfig& config, const Clock& clock);
  ~SegmentTable();

  struct MountResult {
    SegmentId id = kNoSegment;
    // The mount took over a restored segment (same id, its objects readable
    // again), rather than starting an empty one.
    bool adopted = false;
    // A restored segment of the same name that this mount did not take over
    // (the node restarted, so its memory is new): gone from the table; the
    // caller drops its replicas.
    SegmentId replaced = kNoSegment;
    // Taken over from another process of the node (a persistent segment's
    // file, not the same memory): its objects' bytes are to be verified.
    bool verify = false;
    // The mount was already made (the same spec, owner token included): its
    // answer again, and nothing else changed (its first answer was lost).
    bool repeated = false;
  };
  struct UnmountResult {
    SegmentId id = kNoSegment;
    // A persistent segment is detached rather than dropped: it waits, with its
    // objects and allocator, for a mount of the same segment (the caller keeps
    // its replicas and logs nothing).
    bool detached = false;
  };
  // `before_visible`, when given, is called with the new id under the table's
  // lock, before any allocation can land on the segment (the operation log
  // records the mount there, so that it precedes every put placed on it).
  // A restored segment of the same name is taken over when `previous` matches
  // its endpoint and token and the owner and capacity are the same; the
  // segment keeps its id and replicas, and gets `spec` (the new endpoint,
  // whose new epoch refuses every capability of the previous master). The
  // take-over never waits: when the restore's completion has not rebuilt the
  // allocator yet, the segment is mounted without one (its objects readable,
  // nothing new placed on it) until RebuildAllocator installs it.
  // A mount whose spec equals the mounted one (its owner token included) is
  // a repeat of it, its first answer lost: answered the same, `repeated`.
  // A waiting persistent segment (tier PMEM: restored, or detached) is taken
  // over by a PMEM mount of the same name and capacity from any node and
  // without `previous`: the name carries the UUID of the file that holds the
  // bytes, which survive the node's process (docs/persistent-tier.md). Such a
  // mount also takes over the segment while it is still mounted (its old
  // process died, and the TTL has not passed yet): only one process at a
  // time can hold the file.
  StatusOr<MountResult> Mount(const SegmentSpec& spec,
                              const std::function<void(SegmentId)>& before_visible = nullptr,
                              const PreviousMount* previous = nullptr);
  // Marks the segment unmounted at once; the caller then drops its replicas.
  // kNotOwner unless `owner` and `token` are the mount's (a segment mounted
  // without a token takes any), or `any_owner` (an admin's unmount).
  StatusOr<UnmountResult> Unmount(std::string_view name, std::string_view owner, uint64_t token = 0,
                                  bool any_owner = false);
  // kNodeUnknown tells a node (e.g. after a master restart) to mount again.
  // Clears the node's suspicion once config.suspect_hold_ms has passed.
  Status Heartbeat(std::string_view node);
  // A client could not reach segment `id`'s node: its segments take no new
  // replicas until it proves alive (Heartbeat) or mounts again. False when
  // `id` is not mounted (a stale report: nothing to do); with `spare_last`,
  // also when marking it would leave no node with segments unsuspected while
  // that node has heartbeated within 2 * config.suspect_hold_ms (the report
  // is ignored).
  bool MarkUnreachable(SegmentId id, bool spare_last = false);
  // Unmounts every segment of nodes silent for longer than the TTL, and
  // returns them; persistent ones are detached instead, and listed in
  // `*detached` when given.
  std::vector<SegmentId> ExpireNodes(std::vector<SegmentId>* detached = nullptr);

  // Places up to `count` replicas of `size` bytes on distinct mounted segments
  // of nodes that are not suspect: the preferred segment first, then DRAM
  // before PMEM, and within a tier the local node's, then the emptiest.
  // Returns fewer (possibly none) when space is short.
  // With `only`, on segments of that tier alone.
  std::vector<ReplicaSlot> Allocate(uint64_t size, uint32_t count, const PutConfig& config,
                                    std::optional<Tier> only = std::nullopt);
  // The node that owns segment `id` ("" when unknown).
  std::string OwnerOf(SegmentId id) const;
  // Returns a replica's space. A replica on a dropped segment is ignored.
  void Free(const ReplicaSlot& replica);
  // The segment still accounts for its space: mounted, or waiting (restored
  // or detached) with its allocator. Space on it must be freed, not forgotten.
  bool HasSpace(SegmentId id) const;

  // ---- Restore (before the engine serves; master_restore.cc) ----
  // A segment of the restored state: it keeps its id and waits, unmounted and
  // unplaceable, for its node to take it over (Mount with `previous`). A
  // second one of the same name replaces the first, whose id is returned (its
  // replicas are dead); kNoSegment otherwise.
  SegmentId Restore(SegmentId id, const SegmentSpec& spec);
  // The log (or a snapshot) says `id` was unmounted: it is no longer
  // restored. An id the table does not hold is remembered as its slot's last
  // (unmounted), so the slot's next mount takes the incarnation after it.
  void ForgetRestored(SegmentId id);
  // Restored segment `id` gets its allocator later (RebuildAllocator, by the
  // restore's completion, while the engine serves). Meanwhile it has space
  // (HasSpace), a Free on it is kept and applied to the rebuilt allocator
  // (the replicas' allocations were gathered before it), and a Mount may take
  // it over (it then places nothing until the allocator is installed).
  void DeferAllocator(SegmentId id);
  // Gives segment `id` (restored, or taken over since) its allocator, rebuilt
  // from its replicas' allocations (built without mu_: sorting millions of
  // them takes seconds), then the Frees kept since DeferAllocator;
  // kCorruptData when they conflict (the caller drops the segment,
  // DropUnrebuildable). A segment dropped meanwhile (expired, or replaced by a
  // mount with new memory) is left as it is.
  Status RebuildAllocator(SegmentId id, std::vector<cache::OffsetAllocator::UsedRegion> used);
  // The segments whose allocator is still to be rebuilt.
  std::vector<SegmentId> DeferredIds() const;
  // Drops segment `id`, whose allocations conflict: unmounted if a node took
  // it over (true; a node left with no segment is forgotten, so that its
  // next heartbeat mounts a fresh one), else no longer restored.
  bool DropUnrebuildable(SegmentId id);
  // The restore is over: segments never used since slot reuse starts, and
  // restored ones wait until `deadline` (then ExpireRestored drops them).
  void FinishRestore(TimeMs deadline);
  std::vector<SegmentId> RestoredIds() const;
  // Restored and detached segments still waiting at their deadline: dropped
  // from the table.
  std::vector<SegmentId> ExpireRestored();
  size_t restored_count() const;
  // The waiting segments (restored or detached), for a snapshot: a restore
  // from it has them wait again.
  std::vector<std::pair<SegmentId, SegmentSpec>> Waiting() const;
  // The last id of each slot whose segment is neither mounted nor waiting,
  // for a snapshot (as unmounts): a restore from it never hands out an id an
  // earlier incarnation of the data dir used.
  std::vector<SegmentId> UnmountedIds() const;

  struct NodeInfo {
    std::string node;
    int64_t heartbeat_age_ms = 0;  // since its last heartbeat (or mount)
    bool suspect = false;          // a client reported it unreachable (MarkUnreachable)
    size_t segments = 0;
  };
  std::vector<NodeInfo> Nodes() const;

  bool IsMounted(SegmentId id) const;
  // The endpoint of mounted segment `id`; null once it is unmounted. Immutable
  // for the segment's life, and valid as long as the table.
  const std::string* MountedEndpoint(SegmentId id) const;

  // Over mounted segments: all of them, or those of one tier.
  uint64_t capacity() const { return capacity(Tier::kDram) + capacity(Tier::kPmem); }
  uint64_t used() const { return used(Tier::kDram) + used(Tier::kPmem); }
  uint64_t capacity(Tier tier) const {
    return capacity_[TierIndex(tier)].load(std::memory_order_relaxed);
  }
  uint64_t used(Tier tier) const { return used_[TierIndex(tier)].load(std::memory_order_relaxed); }
  // The tier of segment `id` (mounted or waiting); DRAM for an unknown id.
  // Lock-free: a segment's spec never changes.
  Tier TierOf(SegmentId id) const;
  uint64_t largest_segment() const;
  size_t mounted_count() const;
  // Mounted segments whose node is not suspect: where Allocate may place.
  size_t placeable_count() const;
  std::vector<SegmentInfo> List() const;

 private:
  struct Segment {
    SegmentId id;
    SegmentSpec spec;
    std::atomic<bool> mounted{true};
    std::unique_ptr<cache::OffsetAllocator> allocator;  // null once unmounted
    // Restored, its allocator not rebuilt yet (DeferAllocator): the Frees
    // meanwhile, for the rebuilt one.
    bool allocator_deferred = false;
    std::vector<cache::Allocation> deferred_frees;
    bool adopted = false;  // this mount took a restored segment over
  };
  struct Node {
    TimeMs last_heartbeat = 0;
    std::vector<SegmentId> segments;
    std::optional<TimeMs> suspect_since;  // set by MarkUnreachable
  };
  bool SuspectLocked(const Segment& seg) const;
  // Whether seg's node has heartbeated within the TTL (it has not timed out).
  bool OwnerAliveLocked(const Segment& seg) const;
  // Puts `seg` in its slot, retiring whatever was there.
  void InstallLocked(std::unique_ptr<Segment> seg);
  // Drops restored segment `id` from the table (no replica of it is valid).
  void DropRestoredLocked(SegmentId id);
  bool IsRestoredLocked(SegmentId id) const;
  // `spec` is the mounted segment's own spec again (MountResult::repeated).
  bool IsRepeatLocked(const Segment& mounted, const SegmentSpec& spec) const;

  Segment* Get(SegmentId id) const;
  void UnmountLocked(Segment* seg);
  // A mounted persistent segment starts waiting for its next mount.
  void DetachLocked(Segment* seg);
  // Unmounts `seg`, or detaches it when it is persistent; true when detached.
  bool LeaveLocked(Segment* seg);

  const MasterConfig& config_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::unique_ptr<std::atomic<Segment*>[]> by_id_;       // index = slot (id & 0xffff)
  uint32_t next_slot_ = 1;                               // slots never used yet start here
  std::deque<uint32_t> free_slots_;                      // unmounted slots, oldest first
  std::vector<std::unique_ptr<Segment>> retired_;        // replaced segments, kept for readers
  absl::flat_hash_map<std::string, SegmentId> by_name_;  // mounted only
  absl::flat_hash_map<std::string, Node> nodes_;
  // Segments waiting for their node (restored, or detached), by name; and
  // until when (a restored one: set by FinishRestore).
  struct WaitingSegment {
    SegmentId id = kNoSegment;
    TimeMs deadline = kNever;
  };
  static constexpr TimeMs kNever = INT64_MAX;
  absl::flat_hash_map<std::string, WaitingSegment> restored_;
  // Set by FinishRestore (or never restoring): from then on a dropped restored
  // segment's slot is free for reuse at once.
  bool restore_finished_ = true;
  static size_t TierIndex(Tier t) { return t == Tier::kPmem ? 1 : 0; }
  std::atomic<uint64_t> capacity_[2] = {0, 0};  // per tier: sum over mounted segments
  std::atomic<uint64_t> used_[2] = {0, 0};      // per tier: allocator bytes in use, mounted
};

}  // namespace crescent::master
