// MasterService: construction, validation, segments, statistics and the
// maintenance loop. The put, read, remove and eviction paths live in
// master_put.cc, master_read.cc, master_remove.cc and master_eviction.cc.
#include "master/master_service.h"

#include <bit>
#include <optional>
#include <span>

#include "master/owner_verifier.h"

namespace crescent::master {

StatusOr<std::unique_ptr<MasterService>> MasterService::Create(const MasterConfig& config,
                                                               const Clock& clock,
                                                               OperationLog* log) {
  if (config.num_shards == 0 || config.num_shards > 256 ||
      !std::has_single_bit(config.num_shards)) {
    return Status(ErrorCode::kInvalidArgument, "num_shards must be a power of two in [1, 256]");
  }
  if (config.max_key_length == 0 || config.max_key_length > kMaxKeyLengthLimit) {
    return Status(ErrorCode::kInvalidArgument,
                  "max_key_length must be in [1, " + std::to_string(kMaxKeyLengthLimit) + "]");
  }
  if (!(config.high_watermark > 0 && config.high_watermark <= 1) ||
      !(config.evict_ratio > 0 && config.evict_ratio <= 1)) {
    return Status(ErrorCode::kInvalidArgument, "watermark and evict ratio must be in (0, 1]");
  }
  if (config.lease_ms <= 0 || config.put_timeout_ms <= 0 || config.heartbeat_ttl_ms <= 0) {
    return Status(ErrorCode::kInvalidArgument, "lease, put timeout and heartbeat TTL must be > 0");
  }
  auto policies = PolicySet::Make(config);
  if (!policies.ok()) return policies.status();
  std::unique_ptr<MasterService> m(new MasterService(config, clock, std::move(policies).value()));
  m->log_ = log;
  return m;
}

MasterService::MasterService(const MasterConfig& config, const Clock& clock, Policies policies)
    : config_(config),
      clock_(clock),
      token_key_(KeyedHash::Random()),
      placement_key_(KeyedHash::Random()),
      segments_(config_, clock),
      objects_(config_),
      policies_(config_, std::move(policies)) {}

MasterService::~MasterService() {
  restore_.stop.store(true, std::memory_order_relaxed);
  if (restore_.thread.joinable()) restore_.thread.join();
  StopBackground();
}

Status MasterService::ValidateKey(std::string_view key) const {
  // The limit is on the key its client named; a tenant's prefix comes on top
  // (tenant_key.h), within what an entry can store.
  if (!TenantKeyValid(key)) {
    return Status(ErrorCode::kInvalidKey, "key begins with the reserved byte 0x1d");
  }
  const std::string_view mine = ClientKeyOf(key);
  if (mine.empty()) return Status(ErrorCode::kInvalidKey, "key is empty");
  if (mine.size() > config_.max_key_length || key.size() > kMaxKeyLengthLimit) {
    return Status(ErrorCode::kInvalidKey, "key of " + std::to_string(mine.size()) +
                                              " bytes exceeds the limit of " +
                                              std::to_string(config_.max_key_length));
  }
  return Status::Ok();
}

uint64_t MasterService::LargestSegmentObject() const {
  // An allocator manages whole granules only and rounds requests up.
  const uint64_t largest = segments_.largest_segment();
  const uint64_t align = std::max<uint64_t>(1, config_.allocation_alignment);
  return largest / align * align;
}

uint64_t MasterService::LargestObject() const {
  uint64_t largest = std::min(LargestSegmentObject(), kMaxObjectSize);
  if (config_.max_object_size != 0) largest = std::min(largest, config_.max_object_size);
  return largest;
}

Status MasterService::ValidateSize(uint64_t size) const {
  if (size == 0) return Status(ErrorCode::kInvalidSize, "object size is 0");
  if (size > kMaxObjectSize) {
    return Status(ErrorCode::kInvalidSize, "object size " + std::to_string(size) +
                                               " exceeds the largest supported object (" +
                                               std::to_string(kMaxObjectSize) + " bytes)");
  }
  if (config_.max_object_size != 0 && size > config_.max_object_size) {
    return Status(ErrorCode::kInvalidSize, "object size " + std::to_string(size) +
                                               " exceeds the limit of " +
                                               std::to_string(config_.max_object_size));
  }
  // Retryable: a cluster that is starting, or whose nodes remount after a
  // master restart, mounts one within moments (clients retry UNAVAILABLE).
  if (segments_.largest_segment() == 0) {
    return Status(ErrorCode::kUnavailable,
                  "no segment is mounted (yet): no store node has "
                  "mounted one on this master");
  }
  // A size that no allocator can ever hold must fail here, not after evicting
  // everything.
  const uint64_t largest = LargestSegmentObject();
  if (size > largest) {
    return Status(ErrorCode::kInvalidSize, "object size " + std::to_string(size) +
                                               " exceeds the largest segment (" +
                                               std::to_string(largest) + " bytes)");
  }
  return Status::Ok();
}

Status MasterService::CheckUnderWatermark(uint64_t size, const PutConfig& config) const {
  // Watermark eviction runs once used >= high_watermark x capacity: an
  // evictable object whose replicas reach the mark on their own would be
  // evicted by the next maintenance pass, right after its put succeeded.
  if (config.hard_pin) return Status::Ok();
  const uint64_t replicas =
      std::min<uint64_t>(config.replica_count, std::max<size_t>(1, segments_.mounted_count()));
  const double mark = config_.high_watermark * static_cast<double>(segments_.capacity());
  if (static_cast<double>(AllocatedBytes(size) * replicas) < mark) {
    return Status::Ok();
  }
  return Status(ErrorCode::kInvalidSize,
                "object size " + std::to_string(size) + " (x" + std::to_string(replicas) +
                    " replicas) reaches the eviction high watermark (" +
                    std::to_string(static_cast<uint64_t>(mark)) +
                    " bytes of the cluster's capacity) on its own: it would be evicted at once "
                    "(hard-pin it, or raise --high-watermark)");
}

// ---- Operation log ----

uint64_t MasterService::LogChange(const LogRecord& record) {
  if (log_ == nullptr) return 0;
  StatusOr<uint64_t> at = log_->Append(EncodeLogRecord(record));
  return at.ok() ? *at : kLogFailed;
}

Status MasterService::WaitLogged(uint64_t position, bool now) {
  if (log_ == nullptr || position == 0) return Status::Ok();
  if (position == kLogFailed) {
    // The append's own error is gone; a failed log answers it again (a log in
    // etcd whose leadership was lost says so), one that works has none.
    Status why = log_->SyncThrough(log_->end_position());
    return why.ok() ? Status(ErrorCode::kIoError, "the append failed") : why;
  }
  return now ? log_->SyncThrough(position) : log_->WaitDurable(position);
}

Status MasterService::AwaitLogged(uint64_t position, bool now) {
  Status s = WaitLogged(position, now);
  if (!s.ok()) {
    return Status(LogFailureCode(s),
                  "the change is made but the operation log could not record it: " + s.ToString());
  }
  return s;
}

LogRecord MasterService::RemovalRecord(const ObjectEntry& e, RemovalReason reason) {
  LogRecord r;
  r.type = LogRecordType::kObjectRemoved;
  r.key = e.key_view();
  r.reason = reason;
  return r;
}

uint64_t MasterService::LogUnmounts(std::span<const SegmentId> segments) {
  uint64_t at = 0;
  for (SegmentId id : segments) {
    LogRecord r;
    r.type = LogRecordType::kSegmentUnmounted;
    r.segment = id;
    at = LogChange(r);
  }
  return at;
}

// ---- Segments ----

StatusOr<SegmentId> MasterService::MountSegment(const SegmentSpec& given,
                                                const PreviousMount* given_previous,
                                                bool* adopted) {
  // Only verifiers of the owner tokens are kept, and so logged
  // (owner_verifier.h).
  SegmentSpec spec = given;
  spec.owner_token = OwnerVerifier(spec.name, spec.owner_token);
  std::optional<PreviousMount> verified;
  if (given_previous != nullptr) verified = WithVerifiers(spec.name, *given_previous);
  const PreviousMount* previous = verified ? &*verified : nullptr;
  uint64_t logged = 0;
  SegmentId held = kNoSegment;
  auto mounted = segments_.Mount(
      spec,
      [&](SegmentId id) {
        // A persistent segment's replicas are not served before it is known
        // whether they are to be verified (a take-over by another process).
        if (spec.tier == Tier::kPmem) verification_.HoldSegment(held = id);
        // A taken-over segment is logged as a mount of its id again: a
        // restore replaces that id's spec (the new endpoint and token).
        LogRecord r;
        r.type = LogRecordType::kSegmentMounted;
        r.segment = id;
        r.spec = spec;
        logged = LogChange(r);
      },
      previous);
  counters_.mount.Record(1, mounted.ok() ? 0 : 1);
  if (held != kNoSegment && !(mounted.ok() && mounted->verify && !mounted->repeated)) {
    verification_.ReleaseSegment(held);
  }
  if (!mounted.ok()) return mounted.status();
  if (mounted->repeated) {
    // Its first call logged the mount; durable before this answer too.
    if (adopted != nullptr) *adopted = mounted->adopted;
    if (Status s = AwaitLogged(log_ == nullptr ? 0 : log_->end_position(), /*now=*/true); !s.ok()) {
      return s;
    }
    return mounted->id;
  }
  if (mounted->replaced != kNoSegment) {
    // The node came back with new memory: what the restore kept there is gone.
    logged = std::max(logged, LogUnmounts({&mounted->replaced, 1}));
    const size_t dropped = DropSegmentReplicas({&mounted->replaced, 1});
    counters_.restore_dropped_new_memory.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (mounted->adopted) {
    counters_.restore_adopted_segments.fetch_add(1, std::memory_order_relaxed);
  }
  if (mounted->verify) EnqueueVerification(mounted->id);
  if (adopted != nullptr) *adopted = mounted->adopted;
  SetPolicyCapacities();
  // On stable storage before the node learns its new endpoint and token,
  // whatever the sync policy: a restart that lost this record would know the
  // segment only by its previous mount, which the node no longer offers, and
  // would drop every object on it as new memory.
  if (Status s = AwaitLogged(logged, /*now=*/true); !s.ok()) return s;
  return mounted->id;
}

Status MasterService::UnmountSegment(std::string_view name, std::string_view owner_node,
                                     uint64_t owner_token, bool any_owner) {
  auto gone = segments_.Unmount(name, owner_node, OwnerVerifier(name, owner_token), any_owner);
  counters_.unmount.Record(1, gone.ok() ? 0 : 1);
  if (!gone.ok()) return gone.status();
  uint64_t logged = 0;
  if (gone->detached) {
    // Persistent: its objects wait for the same segment's next mount. Nothing
    // is logged: a restore sees it as it was, and has it wait again.
    counters_.pmem_detached_segments.fetch_add(1, std::memory_order_relaxed);
  } else {
    logged = LogUnmounts({&gone->id, 1});
    DropSegmentReplicas({&gone->id, 1});
  }
  SetPolicyCapacities();
  return AwaitLogged(logged);
}

Status MasterService::Heartbeat(std::string_view node) {
  Status s = segments_.Heartbeat(node);
  counters_.heartbeat.Record(1, s.ok() ? 0 : 1);
  return s;
}

size_t MasterService::ReportUnreachable(std::span<const SegmentId> segments, bool spare_last) {
  size_t marked = 0;
  for (SegmentId id : segments) marked += segments_.MarkUnreachable(id, spare_last) ? 1 : 0;
  counters_.report_unreachable.Record(segments.size(), segments.size() - marked);
  return marked;
}

std::vector<SegmentInfo> MasterService::ListSegments() const { return segments_.List(); }

MasterService::PinCounts MasterService::Pins() const {
  PinCounts p;
  p.hard = objects_.hard_pinned();
  p.soft = policies_.SoftCount();
  return p;
}

uint64_t MasterService::CountLeased() const {
  const TimeMs now = clock_.NowMs();
  uint64_t leased = 0;
  for (const auto& shard : objects_.shards()) {
    shard->VisitCompleteInSteps([&](uint32_t slot) {
      const ObjectEntry& e = shard->entry(slot);
      if (e.touch.load(std::memory_order_relaxed) != 0 || e.Leased(now)) ++leased;
    });
  }
  return leased;
}

MasterStats MasterService::Stats() const {
  MasterStats s;
  s.objects = objects_.live();
  s.pending_puts = objects_.pending();
  s.capacity_bytes = segments_.capacity();
  s.used_bytes = segments_.used();
  s.held_bytes = held_.bytes();
  s.bloom_design_keys = objects_.bloom().design_keys();
  s.bloom_estimated_fpr = objects_.bloom().EstimatedFalsePositiveRate();
  s.segments = segments_.mounted_count();
  s.largest_object = LargestObject();
  s.metadata_bytes = objects_.MemoryBytes();
  return s;
}

// ---- Maintenance ----

void MasterService::RunMaintenance() {
  TimeMs now = clock_.NowMs();
  ExpireRestoredSegments();
  std::vector<SegmentId> detached;
  std::vector<SegmentId> dead = segments_.ExpireNodes(&detached);
  counters_.pmem_detached_segments.fetch_add(detached.size(), std::memory_order_relaxed);
  if (!dead.empty()) {
    LogUnmounts(dead);
    DropSegmentReplicas(dead);
  }
  if (!dead.empty() || !detached.empty()) SetPolicyCapacities();
  DiscardExpiredPuts(now);
  ReleaseHeld(now);
  ReclaimDurableFrees(/*sync=*/false);
  {
    PolicyLock order = policies_.Lock();
    FlushTouchesLocked(order);
    ExpireSoftPinsLocked(order, now);
  }
  WatermarkEvict();
  RunPromotions();
  RunVerifications(/*budget_ms=*/200);
  if (objects_.MaybeRebuildBloom())
    counters_.bloom_rebuilds.fetch_add(1, std::memory_order_relaxed);
}

void MasterService::StartBackground(int64_t interval_ms) {
  maintenance_.Start(std::chrono::milliseconds(interval_ms), [this] { RunMaintenance(); });
}

void MasterService::StopBackground() { maintenance_.Stop(); }

void MasterService::BeginShutdown() {
  // Before the copier closes: a move or check that fails from here on may
  // have failed for the close, and is then taken as not done (RunMoves,
  // RunVerifications), never as the node's answer.
  stopping_.store(true, std::memory_order_release);
  if (ReplicaCopier* copier = copier_.load(std::memory_order_acquire)) copier->Close();
}

}  // namespace crescent::master
