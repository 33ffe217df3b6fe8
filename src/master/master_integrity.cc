// End-to-end checksums, the master's part: a reader whose bytes failed the
// object's checksum reports the replica it read, and the master drops that
// replica (docs/network.md, "End-to-end checksums"). The report names the
// version it read (the checksum the master returned, and the replica's place),
// so a late report never touches a later object of the same key, or a replica
// that another reader has already reported.
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

Status MasterService::ReportCorruptReplica(std::string_view key, SegmentId segment, uint64_t offset,
                                           uint64_t checksum) {
  return DropReplica(key, segment, offset, checksum, /*corrupt=*/true);
}

Status MasterService::DropReplica(std::string_view key, SegmentId segment, uint64_t offset,
                                  uint64_t checksum, bool corrupt) {
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
  Located loc = Locate(key);
  ObjectId removed = 0;
  bool last = false;
  uint64_t logged = 0;
  {
    std::unique_lock lock(loc.shard->mutex());
    const uint32_t slot = loc.shard->Find(key, loc.hash);
    if (slot == kNoSlot) return stale();
    ObjectEntry& e = loc.shard->entry(slot);
    if (e.state != EntryState::kComplete || e.checksum != checksum) return stale();
    std::optional<ReplicaSlot> bad;
    const std::vector<ReplicaSlot> keep = e.ReplicasExcept(segment, offset, &bad);
    if (!bad) return stale();
    if (keep.empty()) {
      logged = LogChange(RemovalRecord(e, RemovalReason::kCorrupt));
      // Nothing good is left to read: the object goes, as a removed one does
      // (its space held while capabilities may reach it).
      removed = RemoveLocked(*loc.shard, slot);
      last = true;
    } else {
      // Readers granted this replica may still be reading it: its space waits
      // for their capabilities (the lease) like a removed object's, then frees.
      e.FlushTouch(config_.lease_ms);
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
  counters_.report_corrupt.Record(1, 0);
  return AwaitLogged(logged);
}

}  // namespace crescent::master
