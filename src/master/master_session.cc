// Session hints: the engine's word that a conversation has ended
// (MasterService::EndSession), passed to the policies as EvictionPolicy::
// EndSession, logged, and re-applied by a restore.
//
// Order matters more than anything here. A read only flags its object and
// queues the id (a deferred touch, object_entry.h); the policies see the read
// when the queue is flushed. A hint from an engine usually follows the last
// reads of the conversation's pages, so a flush after the mark would replay
// those reads as if they came after it, and the policies would forget the
// mark at once. So the queue is flushed, under the policy set's lock, before
// any object is marked; a read that comes after that flush is after the hint,
// and clearing the mark for it is right.
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

StatusOr<size_t> MasterService::EndSession(std::span<const std::string> keys,
                                           std::string_view prefix) {
  PrefixedKeys internal(prefix);
  for (const std::string& k : keys) {
    if (Status s = ValidateKey(internal(k)); !s.ok()) {
      counters_.end_session.Record(keys.size(), 1);
      return s;
    }
  }
  // Each key's object, its record logged under its shard's lock: shared is
  // enough, since the mark changes nothing a shard holds, and every change
  // of the object (its end, its removal) takes the lock exclusively, so the
  // log orders the hint with them.
  std::vector<ObjectId> ids;
  ids.reserve(keys.size());
  uint64_t logged = 0;
  for (const std::string& k : keys) {
    const std::string_view key = internal(k);
    const Located loc = objects_.Locate(key);
    std::shared_lock lock(loc.shard->mutex());
    const uint32_t slot = loc.shard->Find(key, loc.hash);
    if (slot == kNoSlot) continue;
    const ObjectEntry& e = loc.shard->entry(slot);
    if (e.state != EntryState::kComplete || e.hard_pin) continue;
    LogRecord r;
    r.type = LogRecordType::kSessionEnded;
    r.key = key;
    logged = std::max(logged, LogChange(r));
    ids.push_back(loc.shard->IdOf(slot));
  }
  {
    PolicyLock order = policies_.Lock();
    // A restore's fill swaps the policies in whole: a mark now would be lost.
    order.AwaitFilled();
    FlushTouchesLocked(order);
    // An id gone stale since (the object removed meanwhile) is ignored.
    for (ObjectId id : ids) order.EndSession(id);
  }
  counters_.end_session.Record(keys.size(), 0);
  if (Status s = AwaitLogged(logged); !s.ok()) return s;
  return ids.size();
}

void MasterService::NoteRestoredEnd(const ObjectShard& shard, uint32_t slot) {
  const ObjectEntry& e = shard.entry(slot);
  if (e.state != EntryState::kComplete || e.hard_pin) return;
  restore_.ended[shard.index()].push_back(shard.IdOf(slot));
}

void MasterService::ApplyRestoredEnds(PolicyLock& order) {
  // Before the touches queued while the policies were filled are flushed:
  // every restored hint came before the engine served a read.
  for (const std::vector<ObjectId>& shard_ids : restore_.ended) {
    for (ObjectId id : shard_ids) order.EndSession(id);
  }
  restore_.ended = {};
}

}  // namespace crescent::master
