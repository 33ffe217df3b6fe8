// Capture: the engine's state as the records that rebuild it (log_record.h),
// for a snapshot (durability/snapshot_file.h), taken while the engine serves.
//
// No lock is held for long. The log position is read first; then segments
// (the table's lock, once), the policy's order (the policy set's lock per part, copied
// into memory made ready outside it, the lock left free between parts), the
// chain parents (the policy set's lock per 2048 objects), and each object (then its
// parent's key) under its shard's shared lock on its own. So the
// objects are not one instant's state: an object changed after the position
// was read may appear before or after its change. That is what a restore
// expects: it applies the snapshot and then the log from that position, and
// every record sets a key's (or a segment's) whole state, so applying a
// change the snapshot already holds changes nothing, and applying one it
// missed brings it up to date.
#include <algorithm>
#include <chrono>
#include <shared_mutex>
#include <span>
#include <thread>
#include <unordered_set>
#include <utility>

#include "master/master_service.h"

namespace crescent::master {

namespace {
// How long a snapshot leaves the policy lock free between two parts of the
// eviction order it copies (below).
constexpr auto kGapBetweenParts = std::chrono::microseconds(200);

// The segments as records: the mounted ones, then those waiting for their
// node (restored, or detached persistent ones), whom a restore has wait
// again; then each other slot's last id, as its unmount: a restore from this
// snapshot gives the slot's next mount a later incarnation, so no id an
// earlier incarnation of the data dir used (whose replicas a log after this
// snapshot, or a node, may still name) is handed out again.
Status CaptureSegments(const SegmentTable& table,
                       const std::function<Status(const LogRecord&)>& sink,
                       MasterService::CaptureStats& st) {
  std::vector<std::pair<SegmentId, SegmentSpec>> segments;
  for (SegmentInfo& s : table.List()) segments.emplace_back(s.id, std::move(s.spec));
  for (auto& waiting : table.Waiting()) segments.push_back(std::move(waiting));
  for (const auto& [id, spec] : segments) {
    LogRecord r;
    r.type = LogRecordType::kSegmentMounted;
    r.segment = id;
    r.spec = spec;
    ++st.segments;
    if (Status e = sink(r); !e.ok()) return e;
  }
  for (SegmentId id : table.UnmountedIds()) {
    LogRecord r;
    r.type = LogRecordType::kSegmentUnmounted;
    r.segment = id;
    if (Status e = sink(r); !e.ok()) return e;
  }
  return Status::Ok();
}

// `order`'s ids sorted, for the pass over the objects the order did not hold.
// A copy in parts can hold an object twice (it moved between the policies, or
// was erased and tracked again, between two parts): its first place in
// `order` is kept, and the later ones dropped.
std::vector<ObjectId> SortedOnce(std::vector<ObjectId>& order) {
  std::vector<ObjectId> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    std::unordered_set<ObjectId> twice;
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i] == sorted[i - 1]) twice.insert(sorted[i]);
    }
    std::unordered_set<ObjectId> kept;
    std::erase_if(order,
                  [&](ObjectId id) { return twice.contains(id) && !kept.insert(id).second; });
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
  return sorted;
}

}  // namespace

Status MasterService::Capture(uint64_t* log_position,
                              const std::function<Status(const LogRecord&)>& sink,
                              CaptureStats* stats) {
  CaptureStats local;
  CaptureStats& st = stats != nullptr ? *stats : local;
  st = {};
  // A restore still filling the policies has no eviction order to copy yet.
  policies_.Lock().AwaitFilled();
  // Lock holds are timed on the steady clock, not the engine's (which tests
  // may hold still): they are a measurement, not engine time.
  auto held_since = [] { return std::chrono::steady_clock::now(); };
  auto held = [&](std::chrono::steady_clock::time_point since) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
    st.longest_lock_ms = std::max(st.longest_lock_ms, ms);
    return ms;
  };
  *log_position = log_ == nullptr ? 0 : log_->end_position();
  if (Status e = CaptureSegments(segments_, sink, st); !e.ok()) return e;
  // The order: the unpinned objects' policy from its next victim on, then the
  // soft-pinned ones' (evicted only after every unpinned one). It is copied
  // under the policy set's lock into memory made ready before (a list policy's copy is
  // memcpys of its node array), a few MB per hold (MasterConfig::
  // snapshot_order_items_per_lock), and walked after the lock is released.
  // One copy of a 10M-object list in one hold took 15 ms on a quiet VM, but
  // 280 and 390 ms on one where writing fresh memory was slow
  // (docs/durability.md); parts bound every hold.
  std::unique_ptr<cache::EvictionOrder> main_order, soft_order, pmem_order;
  size_t counted = 0;
  size_t pmem_counted = 0;
  {
    PolicyLock policies = policies_.Lock();
    main_order = policies.main().NewEvictionOrder();
    soft_order = policies.soft().NewEvictionOrder();
    pmem_order = policies.pmem().NewEvictionOrder();
    counted = policies.main().Count() + policies.soft().Count();
    pmem_counted = policies.pmem().Count();
  }
  main_order->Reserve(counted);
  soft_order->Reserve(counted / 8);
  pmem_order->Reserve(pmem_counted);
  const size_t items_per_lock = std::max<uint32_t>(1, config_.snapshot_order_items_per_lock);
  bool flushed = false;
  // The policies stay the same objects while this runs: only a restore's
  // fill swaps them, and it ended before (AwaitFilled above).
  cache::EvictionOrder* const copies[] = {main_order.get(), soft_order.get(), pmem_order.get()};
  for (int which = 0; which < 3; ++which) {
    for (bool done = false; !done;) {
      {
        PolicyLock policies = policies_.Lock();
        const auto since = held_since();  // held from here: waiting for it pauses no one
        if (!flushed) FlushTouchesLocked(policies);
        flushed = true;
        cache::EvictionPolicy& policy = which == 0   ? policies.main()
                                        : which == 1 ? policies.soft()
                                                     : policies.pmem();
        done = policy.CopyEvictionOrderPart(*copies[which], items_per_lock);
        st.order_lock_ms = std::max(st.order_lock_ms, held(since));
      }
      // A mutex is not fair: a thread woken by the unlock above needs some
      // microseconds to run, and this one would take the lock back long before.
      // A 10M copy is ~80 parts; without the gap one PutEnd waited through
      // them all, 77 wake-ups and 300-380 ms (docs/durability.md). The gap
      // lets the waiters in: ~80 x 200 us on a snapshot of seconds.
      if (!done) std::this_thread::sleep_for(kGapBetweenParts);
    }
  }
  std::vector<ObjectId> order;
  order.reserve(counted + pmem_counted);
  auto add = [&](ObjectId id) { order.push_back(id); };
  main_order->Visit(add);
  soft_order->Visit(add);
  pmem_order->Visit(add);  // a restore puts them back in the PMEM policy, in this order
  main_order.reset();
  soft_order.reset();
  pmem_order.reset();
  std::vector<ObjectId> sorted = SortedOnce(order);
  auto emit = [&](ObjectId id, ObjectId parent) -> Status {
    LogRecord r;
    {
      ObjectShard& shard = objects_.ShardOf(id);
      std::shared_lock lock(shard.mutex());
      const ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) return Status::Ok();  // gone since
      r = PutEndedRecord(*e);
    }
    if (parent != cache::kNoParent) {
      // The chain parent by its key (an entry does not keep its parent).
      ObjectShard& shard = objects_.ShardOf(parent);
      std::shared_lock lock(shard.mutex());
      const ObjectEntry* p = shard.Resolve(parent);
      if (p != nullptr && p->state == EntryState::kComplete) r.parent_key = p->key_view();
    }
    ++st.objects;
    return sink(r);
  };
  // Each object's chain parent as the policies hold it, asked for a few
  // thousand ids per hold of the policy set's lock.
  constexpr size_t kParentsPerLock = 2048;
  std::vector<ObjectId> parents;
  auto emit_all = [&](std::span<const ObjectId> ids) -> Status {
    for (size_t at = 0; at < ids.size(); at += kParentsPerLock) {
      const std::span<const ObjectId> part =
          ids.subspan(at, std::min(kParentsPerLock, ids.size() - at));
      parents.resize(part.size());
      {
        PolicyLock policies = policies_.Lock();
        const auto since = held_since();
        for (size_t i = 0; i < part.size(); ++i) parents[i] = policies.ParentOf(part[i]);
        held(since);
      }
      for (size_t i = 0; i < part.size(); ++i) {
        if (Status s = emit(part[i], parents[i]); !s.ok()) return s;
      }
    }
    return Status::Ok();
  };
  if (Status s = emit_all(order); !s.ok()) return s;
  order = std::move(sorted);
  // Then every complete object the order did not hold: hard-pinned ones, the
  // whole set under a policy that keeps no sequence, and objects whose PutEnd
  // had not reached the policy yet.
  std::vector<ObjectId> rest;
  for (const auto& shard : objects_.shards()) {
    rest.clear();
    // Its shared lock a few thousand slots at a time: writers wait one step.
    const double step_ms =
        shard->VisitCompleteInSteps([&](uint32_t slot) { rest.push_back(shard->IdOf(slot)); });
    st.longest_lock_ms = std::max(st.longest_lock_ms, step_ms);
    std::erase_if(rest,
                  [&](ObjectId id) { return std::binary_search(order.begin(), order.end(), id); });
    if (Status s = emit_all(rest); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace crescent::master
