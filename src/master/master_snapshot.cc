// Capture: the engine's state as the records that rebuild it (log_record.h),
// for a snapshot (durability/snapshot_file.h), taken while the engine serves.
//
// No lock is held for long. The log position is read first; then segments
// (the table's lock, once), the policy's order (policy_mu_, one pass copying
// ids), and each object under its shard's shared lock on its own. So the
// objects are not one instant's state: an object changed after the position
// was read may appear before or after its change. That is what a restore
// expects: it applies the snapshot and then the log from that position, and
// every record sets a key's (or a segment's) whole state, so applying a
// change the snapshot already holds changes nothing, and applying one it
// missed brings it up to date.
#include <algorithm>
#include <chrono>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

Status MasterService::Capture(uint64_t* log_position,
                              const std::function<Status(const LogRecord&)>& sink,
                              CaptureStats* stats) {
  CaptureStats local;
  CaptureStats& st = stats != nullptr ? *stats : local;
  st = {};
  // Lock holds are timed on the steady clock, not the engine's (which tests
  // may hold still): they are a measurement, not engine time.
  auto held_since = [] { return std::chrono::steady_clock::now(); };
  auto held = [&](std::chrono::steady_clock::time_point since) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
    st.longest_lock_ms = std::max(st.longest_lock_ms, ms);
  };
  *log_position = log_ == nullptr ? 0 : log_->end_position();
  for (const SegmentInfo& s : segments_.List()) {
    LogRecord r;
    r.type = LogRecordType::kSegmentMounted;
    r.segment = s.id;
    r.spec = s.spec;
    ++st.segments;
    if (Status e = sink(r); !e.ok()) return e;
  }
  // The order: the unpinned objects' policy from its next victim on, then the
  // soft-pinned ones' (evicted only after every unpinned one).
  std::vector<ObjectId> order;
  {
    const auto since = held_since();
    std::lock_guard lock(policy_mu_);
    FlushTouchesLocked();
    order.reserve(policy_->Count() + soft_policy_->Count());
    auto add = [&](ObjectId id) { order.push_back(id); };
    policy_->VisitInEvictionOrder(add);
    soft_policy_->VisitInEvictionOrder(add);
    held(since);
    st.order_lock_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
  }
  auto emit = [&](ObjectId id) -> Status {
    LogRecord r;
    {
      ObjectShard& shard = ShardOf(id);
      std::shared_lock lock(shard.mutex());
      const ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) return Status::Ok();  // gone since
      r = PutEndedRecord(*e);
    }
    ++st.objects;
    return sink(r);
  };
  for (ObjectId id : order) {
    if (Status s = emit(id); !s.ok()) return s;
  }
  // Then every complete object the order did not hold: hard-pinned ones, the
  // whole set under a policy that keeps no sequence, and objects whose PutEnd
  // had not reached the policy yet.
  std::sort(order.begin(), order.end());
  std::vector<ObjectId> rest;
  for (const auto& shard : shards_) {
    rest.clear();
    {
      // Only the ids are collected under the lock; the search is done after.
      const auto since = held_since();
      std::shared_lock lock(shard->mutex());
      shard->VisitAll([&](uint32_t slot) {
        if (shard->entry(slot).state == EntryState::kComplete) rest.push_back(shard->IdOf(slot));
      });
      held(since);
    }
    std::erase_if(rest,
                  [&](ObjectId id) { return std::binary_search(order.begin(), order.end(), id); });
    for (ObjectId id : rest) {
      if (Status s = emit(id); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace crescent::master
