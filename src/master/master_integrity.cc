// End-to-end checksums, the master's part: a reader whose bytes failed the
// object's checksum reports the replica it read, the replica's node hashes the
// stored range itself, and only a mismatch there drops the replica
// (docs/capabilities.md, "End-to-end checksums"). A reader is no witness for the
// node's bytes: its own buffer may have changed during the read, or its own
// memory may be faulty. The report names the version it read (the checksum the
// master returned, and the replica's place), so a late report never touches a
// later object of the same key, or a replica that is already gone. The checks
// run with the take-over verifications (master_verify.cc), never on the
// caller's thread.
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

Status MasterService::ReportCorruptReplica(std::string_view key, SegmentId segment, uint64_t offset,
                                           uint64_t checksum) {
  auto fail = [&](Status s) {
    counters_.report_corrupt.Record(1, 1);
    return s;
  };
  if (Status s = ValidateKey(key); !s.ok()) return fail(s);
  auto stale = [&] {
    return fail(Status(ErrorCode::kObjectNotFound,
                       "no replica of this version of '" + std::string(key) + "' at segment " +
                           std::to_string(segment) + " offset " + std::to_string(offset)));
  };
  PendingCheck check;
  check.reported = true;
  {
    Located loc = objects_.Locate(key);
    std::shared_lock lock(loc.shard->mutex());
    const uint32_t slot = loc.shard->Find(key, loc.hash);
    if (slot == kNoSlot) return stale();
    const ObjectEntry& e = loc.shard->entry(slot);
    if (e.state != EntryState::kComplete || e.checksum != checksum) return stale();
    std::optional<ReplicaSlot> reported;
    (void)e.ReplicasExcept(segment, offset, &reported);
    if (!reported) return stale();
    check.key = std::string(key);
    check.replica = *reported;
    check.size = e.size;
    check.checksum = checksum;
  }
  if (copier_.load(std::memory_order_acquire) == nullptr) {
    return fail(Status(ErrorCode::kUnavailable,
                       "this master cannot have a store node check a replica: the replica of '" +
                           std::string(key) + "' is kept"));
  }
  if (!verification_.Report(std::move(check))) {
    return fail(Status(ErrorCode::kUnavailable,
                       std::to_string(VerificationQueue::kMaxQueuedReports) +
                           " corruption reports are waiting for their nodes' checks: the "
                           "replica of '" +
                           std::string(key) + "' is kept until a later report"));
  }
  counters_.report_corrupt.Record(1, 0);
  return Status::Ok();
}

uint64_t MasterService::PendingCorruptionReports() const {
  return verification_.reports();
}

Status MasterService::DropReplica(std::string_view key, SegmentId segment, uint64_t offset,
                                  uint64_t checksum, bool corrupt) {
  const Status stale(ErrorCode::kObjectNotFound,
                     "no replica of this version of '" + std::string(key) + "' at segment " +
                         std::to_string(segment) + " offset " + std::to_string(offset));
  Located loc = objects_.Locate(key);
  ObjectId removed = 0;
  bool last = false;
  uint64_t logged = 0;
  {
    std::unique_lock lock(loc.shard->mutex());
    const uint32_t slot = loc.shard->Find(key, loc.hash);
    if (slot == kNoSlot) return stale;
    ObjectEntry& e = loc.shard->entry(slot);
    if (e.state != EntryState::kComplete || e.checksum != checksum) return stale;
    std::optional<ReplicaSlot> bad;
    const std::vector<ReplicaSlot> keep = e.ReplicasExcept(segment, offset, &bad);
    if (!bad) return stale;
    if (keep.empty()) {
      logged = LogChange(RemovalRecord(e, RemovalReason::kCorrupt));
      // Nothing good is left to read: the object goes, as a removed one does
      // (its space held while capabilities may reach it).
      removed = RemoveLocked(*loc.shard, slot);
      last = true;
    } else {
      // Readers granted this replica may still be reading it: its space waits
      // for their capabilities like a removed object's, then frees. A read
      // not yet folded into the lease is folded with the lease it was granted
      // (LeaseMs of the size, as ReadLocked gives).
      e.FlushTouch(LeaseMs(e.size));
      const TimeMs until =
          e.lease_until.load(std::memory_order_relaxed) + config_.capability_grace_ms;
      if (until > clock_.NowMs()) {
        HoldSlots({*bad}, e.size, until);
      } else {
        FreeLogged({&*bad, 1}, e.size);
      }
      LogRecord r;
      r.type = LogRecordType::kReplicaDropped;
      r.key = key;
      r.segment = segment;
      r.offset = offset;
      logged = LogChange(r);
      loc.shard->SetReplicas(slot, keep);
    }
  }
  if (corrupt) counters_.corrupt_replicas.fetch_add(1, std::memory_order_relaxed);
  if (last) {
    if (corrupt) counters_.corrupt_objects.fetch_add(1, std::memory_order_relaxed);
    ForgetInPolicy({&removed, 1});
  }
  return AwaitLogged(logged);
}

}  // namespace crescent::master
