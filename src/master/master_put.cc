// The put lifecycle: PutStart allocates replicas for a pending entry, PutEnd
// publishes it (hash index, KeyIndex, Bloom, policy), PutRevoke discards it, and the
// maintenance pass discards puts that were never ended.
#include <limits>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

std::vector<ReplicaDescriptor> MasterService::Describe(const ObjectEntry& e) const {
  std::vector<ReplicaDescriptor> out;
  out.reserve(e.num_replicas);
  for (size_t i = 0; i < e.num_replicas; ++i) {
    if (!Servable(e.replica(i))) continue;  // e.g. its check has not passed yet
    if (auto d = DescribeSlot(e.replica(i), e.size)) out.push_back(std::move(*d));
  }
  return out;
}

std::optional<ReplicaDescriptor> MasterService::DescribeSlot(const ReplicaSlot& r,
                                                             uint64_t size) const {
  const std::string* endpoint = segments_.MountedEndpoint(r.segment);
  if (endpoint == nullptr) return std::nullopt;  // its segment is gone
  return ReplicaDescriptor{r.segment, *endpoint, r.offset, size, Placement(r)};
}

void MasterService::FreeNow(std::span<const ReplicaSlot> slots) {
  for (const ReplicaSlot& r : slots) segments_.Free(r);
}

void MasterService::FreeLogged(std::span<const ReplicaSlot> slots, uint64_t size) {
  if (log_ == nullptr || slots.empty()) return FreeNow(slots);
  // Every record that freed these was appended before: the end covers it.
  const uint64_t position = log_->end_position();
  if (log_->synced_position() >= position) return FreeNow(slots);
  durable_frees_.Add(position, slots, AllocatedBytes(size));
}

bool MasterService::ReclaimDurableFrees(bool sync) {
  if (log_ == nullptr) return false;
  const uint64_t newest = durable_frees_.newest();
  if (newest == 0) return false;
  // A failed sync frees nothing: the log refuses everything from then on.
  if (sync) (void)log_->SyncThrough(newest);
  const std::vector<ReplicaSlot> due = durable_frees_.TakeDurable(log_->synced_position());
  FreeNow(due);
  return !due.empty();
}

std::optional<PutGrant> MasterService::RepeatedPutLocked(const Located& loc, uint32_t slot,
                                                         uint64_t size, uint64_t attempt) {
  const ObjectEntry& e = loc.shard->entry(slot);
  if (attempt == 0 || e.state != EntryState::kPending || e.size != size) return std::nullopt;
  const ObjectId id = loc.shard->IdOf(slot);
  PutGrant out;
  const std::optional<TimeMs> deadline = pending_.DeadlineIfAttempt(id, attempt);
  if (!deadline) return std::nullopt;
  out.deadline = *deadline;
  for (size_t i = 0; i < e.num_replicas; ++i) {
    if (auto d = DescribeSlot(e.replica(i), size)) out.replicas.push_back(std::move(*d));
  }
  if (out.replicas.empty()) return std::nullopt;  // its segments went: not repeatable
  out.token = PutToken(id);
  return out;
}

StatusOr<PutGrant> MasterService::PutStart(std::string_view key, uint64_t size,
                                           const PutConfig& config, uint64_t attempt) {
  bool charged = false;  // to the key's tenant (ChargeQuota), given back on failure
  auto fail = [&](Status s) {
    if (charged) tenants_.Release(key, size, /*complete=*/false);
    counters_.put_start.Record(1, 1);
    return s;
  };
  if (Status s = ValidateKey(key); !s.ok()) return fail(s);
  if (Status s = ValidateSize(size); !s.ok()) return fail(s);
  if (config.replica_count == 0 || config.replica_count > 255) {
    return fail(Status(ErrorCode::kInvalidArgument, "replica count must be in [1, 255]"));
  }
  if (!config.parent_key.empty()) {
    if (Status s = ValidateKey(config.parent_key); !s.ok()) return fail(s);
  }
  if (config.soft_pin_ttl_ms < 0) {
    return fail(Status(ErrorCode::kInvalidArgument, "soft pin TTL is negative"));
  }
  Located loc = objects_.Locate(key);
  // Under the shard lock. A complete object with no replica on a mounted
  // segment waits for its node (restored, docs/durability.md; or a detached
  // persistent segment), or is about to be dropped (its segment is being
  // unmounted): Exists and gets do not show it, so "exists" would contradict
  // them; the put may be retried once the node is back (then it does exist)
  // or the object is gone.
  auto exists_error = [&](uint32_t slot) {
    const ObjectEntry& e = loc.shard->entry(slot);
    if (e.state == EntryState::kComplete && !HasLiveReplica(e)) {
      return Status(ErrorCode::kObjectNotReady,
                    "key '" + std::string(key) +
                        "' is stored on a segment whose store node is not mounted (restored by "
                        "a master restart, detached, or being unmounted), or on a taken-over "
                        "persistent segment whose bytes are not verified yet: it waits for the "
                        "node (or the check), or is dropped; retry");
    }
    return Status(ErrorCode::kObjectAlreadyExists, "key '" + std::string(key) + "' exists");
  };
  {
    // Cheap early check so a duplicate put never triggers eviction.
    std::shared_lock lock(loc.shard->mutex());
    if (const uint32_t slot = loc.shard->Find(key, loc.hash); slot != kNoSlot) {
      if (std::optional<PutGrant> again = RepeatedPutLocked(loc, slot, size, attempt)) {
        counters_.put_start.Record(1, 0);
        return std::move(*again);
      }
      return fail(exists_error(slot));
    }
  }
  // After the repeat check: a retry must get its own put back even if the
  // segments changed since its first try.
  if (Status s = CheckUnderWatermark(size, config); !s.ok()) return fail(s);
  if (IsTenantKey(key)) {
    if (Status s = ChargeQuota(key, size); !s.ok()) return fail(s);
    charged = true;
  }
  std::vector<ReplicaSlot> slots = AllocateWithEviction(size, config);
  if (slots.empty() && segments_.placeable_count() == 0) {
    return fail(Status(ErrorCode::kUnavailable,
                       "every mounted segment's store node is suspect (a client could not reach "
                       "it, or it refused a transfer as unavailable: see its log, e.g. for clock "
                       "skew); placement resumes when it heartbeats or mounts again"));
  }
  if (slots.empty() && stopping_.load(std::memory_order_acquire)) {
    // It made no room (BeginShutdown): retryable, not an answer about space.
    return fail(Status(ErrorCode::kUnavailable, "the master is shutting down"));
  }
  if (slots.empty()) {
    return fail(Status(ErrorCode::kNoSpace, "no space for " + std::to_string(size) +
                                                " bytes and nothing evictable is left"));
  }
  TimeMs now = clock_.NowMs();
  ObjectId id;
  PutGrant out;
  {
    std::unique_lock lock(loc.shard->mutex());
    if (const uint32_t slot = loc.shard->Find(key, loc.hash); slot != kNoSlot) {
      // Started meanwhile, perhaps by this very put's first try.
      std::optional<PutGrant> again = RepeatedPutLocked(loc, slot, size, attempt);
      const Status exists = again ? Status::Ok() : exists_error(slot);
      lock.unlock();
      FreeNow(slots);
      if (again) {
        if (charged) tenants_.Release(key, size, /*complete=*/false);  // charged for its first try
        counters_.put_start.Record(1, 0);
        return std::move(*again);
      }
      return fail(exists);
    }
    // A segment dropped since Allocate() had this shard swept already (the
    // sweep takes this lock after the unmount), so a replica on it would never
    // be dropped: leave it out. Its space went with the segment's allocator.
    // (A detached persistent segment keeps its allocator, and the replica.)
    std::erase_if(slots, [&](const ReplicaSlot& r) { return !segments_.HasSpace(r.segment); });
    if (slots.empty()) {
      return fail(Status(ErrorCode::kUnavailable,
                         "the segment chosen for '" + std::string(key) + "' was unmounted"));
    }
    // Saturating: a TTL up to INT64_MAX ms means "pinned for good", not a
    // wrapped (already expired, and undefined) end.
    const int64_t ttl = config.soft_pin_ttl_ms;
    const TimeMs soft_until = ttl <= 0 ? 0
                                       : (now > std::numeric_limits<TimeMs>::max() - ttl
                                              ? std::numeric_limits<TimeMs>::max()
                                              : now + ttl);
    uint32_t slot = loc.shard->Create(key, loc.hash, slots, soft_until);
    ObjectEntry& e = loc.shard->entry(slot);
    e.size = size;
    e.hard_pin = config.hard_pin ? 1 : 0;
    id = loc.shard->IdOf(slot);
    for (const ReplicaSlot& r : slots) {
      if (auto d = DescribeSlot(r, size)) out.replicas.push_back(std::move(*d));
    }
    out.token = PutToken(id);
    out.deadline = now + config_.put_timeout_ms;
    // Under the shard lock, so a PutEnd of this key always finds the record.
    pending_.Start(id, {config.parent_key, attempt, out.deadline, config.ends_write});
    // Counted under the shard lock, as RemoveLocked uncounts under it: a revoke
    // racing this put cannot take the count below zero (it is unsigned).
    objects_.PendingAdded();
  }
  counters_.put_start.Record(1, 0);
  return out;
}

namespace {

Status NoPendingPut(std::string_view key) {
  return Status(ErrorCode::kPutNotStarted,
                "no pending put for key '" + std::string(key) +
                    "' (never started, already ended, or dropped by the master: the put timed "
                    "out, or a node holding one of its replicas was dropped)");
}

}  // namespace

StatusOr<uint32_t> MasterService::FindPutLocked(const Located& loc, std::string_view key,
                                                uint64_t token) const {
  const uint32_t slot = loc.shard->Find(key, loc.hash);
  if (slot == kNoSlot) return NoPendingPut(key);
  if (PutToken(loc.shard->IdOf(slot)) != token) {
    if (loc.shard->entry(slot).state != EntryState::kPending) return NoPendingPut(key);
    return Status(ErrorCode::kPutNotStarted,
                  "the pending put of key '" + std::string(key) +
                      "' is not the one this token names (for example, that put timed out and "
                      "the key was started again)");
  }
  return slot;
}

Status MasterService::PutEnd(std::string_view key, uint64_t token, uint64_t checksum) {
  StatusOr<EndedPut> ended = EndPut(key, token, checksum);
  if (!ended.ok()) return ended.status();
  return FinishPutEnd(*ended, WaitLogged(ended->logged));
}

Status MasterService::FinishPutEnd(const EndedPut& ended, const Status& waited) {
  if (!ended.undoable) {
    // Ended before (counted then): its record is somewhere before the wait.
    if (waited.ok()) return waited;
    return Status(
        LogFailureCode(waited),
        "the change is made but the operation log could not record it: " + waited.ToString());
  }
  if (!waited.ok()) {
    // Not recorded, so a restart would not bring it back: not served now either.
    UndoPutEnd(*ended.shard, ended.id);
    counters_.put_end.Record(1, 1);
    return Status(LogFailureCode(waited),
                  "the put of key '" + ended.key +
                      "' is undone: the operation log could not record it: " + waited.ToString());
  }
  counters_.put_end.Record(1, 0);
  return Status::Ok();
}

StatusOr<MasterService::EndedPut> MasterService::EndPut(std::string_view key, uint64_t token,
                                                        uint64_t checksum) {
  if (Status s = ValidateKey(key); !s.ok()) {
    counters_.put_end.Record(1, 1);
    return s;
  }
  Located loc = objects_.Locate(key);
  ObjectId id;
  uint64_t size;
  bool hard_pin;
  TimeMs soft_until;
  Tier tier = Tier::kDram;
  uint64_t logged = 0;
  {
    std::unique_lock lock(loc.shard->mutex());
    StatusOr<uint32_t> found = FindPutLocked(loc, key, token);
    const uint32_t held = found.ok() ? *found : loc.shard->Find(key, loc.hash);
    // Ended already: this very put (a retry whose first try's reply was lost),
    // or, to a master that restarted since (the token was the previous
    // incarnation's), a complete object with this very checksum: that first
    // try was applied and logged, and the key holds this put's bytes. Either
    // way its record is somewhere before the log's end.
    const bool ended =
        held != kNoSlot && loc.shard->entry(held).state == EntryState::kComplete &&
        (found.ok() || (checksum != 0 && loc.shard->entry(held).checksum == checksum));
    if (ended) {
      lock.unlock();
      counters_.put_end.Record(1, 0);
      return EndedPut{.logged = log_ == nullptr ? 0 : log_->end_position(), .undoable = false};
    }
    if (!found.ok()) {
      counters_.put_end.Record(1, 1);
      return found.status();
    }
    const uint32_t slot = *found;
    ObjectEntry& e = loc.shard->entry(slot);
    e.checksum = checksum;
    if (log_ != nullptr) logged = LogChange(PutEndedRecordLocked(loc.shard->IdOf(slot), e));
    loc.shard->Publish(slot);
    // Under the shard lock, like RemoveLocked's decrement: a remove racing
    // this PutEnd must not take the live count below zero, or the Bloom filter's
    // rebuild would size itself for ~2^64 keys.
    objects_.Completed(e.hard_pin);
    tenants_.Completed(key);
    objects_.BloomAdd(loc.shard->index(), loc.hash);
    id = loc.shard->IdOf(slot);
    size = e.size * e.num_replicas;
    hard_pin = e.hard_pin;
    soft_until = e.soft_pin_until();
    tier = TierOfEntry(e);
  }
  std::string parent_key;
  bool ends_write = false;
  if (std::optional<PendingPuts::LivePut> put = pending_.End(id)) {
    parent_key = std::move(put->parent_key);
    ends_write = put->ends_write;
  }
  ObjectId parent = cache::kNoParent;
  if (!parent_key.empty()) {
    Located p = objects_.Locate(parent_key);
    std::shared_lock lock(p.shard->mutex());
    uint32_t slot = p.shard->Find(parent_key, p.hash);
    if (slot != kNoSlot && p.shard->entry(slot).state == EntryState::kComplete) {
      parent = p.shard->IdOf(slot);
    }
  }
  if (!hard_pin) {
    // The key hash is the object's history identity: a key that comes back
    // soon after its eviction is recognised (s3fifo's ghost).
    const Admission a{.id = id,
                      .size = size,
                      .tier = tier,
                      .soft_until = soft_until,
                      .info = {.parent = parent, .history = loc.hash, .ends_write = ends_write},
                      .tenant = std::string(TenantOfKey(key))};
    PolicyLock order = policies_.Lock();
    if (order.filling()) {
      // A restore is still filling the policies: it admits this after them.
      order.Defer(a);
    } else {
      FlushTouchesLocked(order);
      order.Admit(a, clock_.NowMs());
    }
  }
  return EndedPut{.shard = loc.shard, .id = id, .logged = logged, .key = std::string(key)};
}

void MasterService::UndoPutEnd(ObjectShard& shard, ObjectId id) {
  {
    std::unique_lock lock(shard.mutex());
    ObjectEntry* e = shard.Resolve(id);
    if (e == nullptr || e->state != EntryState::kComplete) return;  // removed meanwhile
    // A failed log refuses this too; one that works again keeps in step.
    (void)LogChange(RemovalRecord(*e, RemovalReason::kRemoved));
    RemoveLocked(shard, IdSlot(id));
  }
  ForgetInPolicy({&id, 1});
}

LogRecord MasterService::PutEndedRecordLocked(ObjectId id, const ObjectEntry& e) {
  LogRecord r = PutEndedRecord(e);
  r.parent_key = pending_.ParentKey(id);
  return r;
}

Status MasterService::PutRevoke(std::string_view key, uint64_t token) {
  if (Status s = ValidateKey(key); !s.ok()) {
    counters_.put_revoke.Record(1, 1);
    return s;
  }
  Located loc = objects_.Locate(key);
  {
    std::unique_lock lock(loc.shard->mutex());
    StatusOr<uint32_t> found = FindPutLocked(loc, key, token);
    if (found.ok() && loc.shard->entry(*found).state != EntryState::kPending) {
      found = Status(ErrorCode::kPutNotStarted,
                     "the put of key '" + std::string(key) + "' has ended; it cannot be revoked");
    }
    if (!found.ok()) {
      counters_.put_revoke.Record(1, 1);
      return found.status();
    }
    RemoveLocked(*loc.shard, *found);
  }
  counters_.put_revoke.Record(1, 0);
  return Status::Ok();
}

std::vector<StatusOr<PutGrant>> MasterService::BatchPutStart(std::span<const std::string> keys,
                                                             std::span<const uint64_t> sizes,
                                                             const PutConfig& config, bool chain,
                                                             std::span<const uint64_t> attempts) {
  std::vector<StatusOr<PutGrant>> out;
  out.reserve(keys.size());
  if (!attempts.empty() && attempts.size() != keys.size()) {
    counters_.put_start.Record(keys.size(), keys.size());
    out.assign(keys.size(), Status(ErrorCode::kInvalidArgument,
                                   std::to_string(keys.size()) + " keys but " +
                                       std::to_string(attempts.size()) + " put attempts"));
    return out;
  }
  PutConfig cfg = config;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i >= sizes.size()) {
      out.emplace_back(Status(ErrorCode::kInvalidArgument, "fewer sizes than keys"));
      continue;
    }
    // A page after an invalid one (refused, a hole in the chain) has no parent.
    if (chain && i > 0) cfg.parent_key = ValidateKey(keys[i - 1]).ok() ? keys[i - 1] : "";
    cfg.ends_write = chain && i + 1 == keys.size();
    out.push_back(PutStart(keys[i], sizes[i], cfg, attempts.empty() ? 0 : attempts[i]));
  }
  return out;
}

namespace {

// One call per (key, token) pair, in input order. Unless there is exactly one
// token per key, nothing is applied and every key fails.
template <typename Fn>
std::vector<Status> ForEachPut(std::span<const std::string> keys, std::span<const uint64_t> tokens,
                               Fn&& fn) {
  if (tokens.size() != keys.size()) {
    return std::vector<Status>(
        keys.size(),
        Status(ErrorCode::kInvalidArgument, std::to_string(keys.size()) + " keys but " +
                                                std::to_string(tokens.size()) + " put tokens"));
  }
  std::vector<Status> out;
  out.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) out.push_back(fn(keys[i], tokens[i]));
  return out;
}

}  // namespace

std::vector<Status> MasterService::BatchPutEnd(std::span<const std::string> keys,
                                               std::span<const uint64_t> tokens,
                                               std::span<const uint64_t> checksums) {
  if (!checksums.empty() && checksums.size() != keys.size()) {
    counters_.put_end.Record(keys.size(), keys.size());
    return std::vector<Status>(
        keys.size(),
        Status(ErrorCode::kInvalidArgument, std::to_string(keys.size()) + " keys but " +
                                                std::to_string(checksums.size()) + " checksums"));
  }
  // Every key's end first, then one wait for the log (covering every
  // record before it): a batch shares one sync or commit, not one a key.
  std::vector<StatusOr<EndedPut>> ended;
  ended.reserve(keys.size());
  size_t i = 0;
  std::vector<Status> out = ForEachPut(keys, tokens, [&](const std::string& k, uint64_t t) {
    const uint64_t checksum = checksums.empty() ? 0 : checksums[i];
    ++i;
    ended.push_back(EndPut(k, t, checksum));
    return ended.back().status();
  });
  uint64_t logged = 0;
  for (const StatusOr<EndedPut>& e : ended) {
    if (e.ok()) logged = std::max(logged, e->logged);
  }
  const Status waited = WaitLogged(logged);
  for (size_t k = 0; k < ended.size(); ++k) {
    if (ended[k].ok()) out[k] = FinishPutEnd(*ended[k], waited);
  }
  return out;
}

std::vector<Status> MasterService::BatchPutRevoke(std::span<const std::string> keys,
                                                  std::span<const uint64_t> tokens) {
  return ForEachPut(keys, tokens,
                    [&](const std::string& k, uint64_t t) { return PutRevoke(k, t); });
}

void MasterService::DiscardExpiredPuts(TimeMs now) {
  // Oldest first (deadline order); ended or revoked puts are skipped.
  for (;;) {
    const std::optional<PendingPuts::Due> oldest = pending_.Oldest();
    if (!oldest) return;
    const PendingPuts::Due& p = *oldest;
    ObjectShard& shard = objects_.ShardOf(p.id);
    bool still_pending;
    {
      std::unique_lock lock(shard.mutex());
      ObjectEntry* e = shard.Resolve(p.id);
      still_pending = e != nullptr && e->state == EntryState::kPending;
      if (still_pending && p.deadline > now) return;  // oldest live put not yet due
      if (still_pending) {
        RemoveLocked(shard, IdSlot(p.id));
        counters_.expired_puts.fetch_add(1, std::memory_order_relaxed);
      }
    }
    pending_.PopOldest(p.id);
  }
}

}  // namespace crescent::master
