// MasterService: construction, validation, segments, statistics and the
// maintenance loop. The put, read, remove and eviction paths live in
// master_put.cc, master_read.cc, master_remove.cc and master_eviction.cc.
#include "master/master_service.h"

#include <array>
#include <bit>
#include <random>
#include <span>

#include "common/hash.h"

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
  auto policies = MakePolicies(config);
  if (!policies.ok()) return policies.status();
  std::unique_ptr<MasterService> m(new MasterService(config, clock));
  m->policy_ = std::move(policies->main);
  m->soft_policy_ = std::move(policies->soft);
  m->pmem_policy_ = std::move(policies->pmem);
  m->log_ = log;
  return m;
}

StatusOr<MasterService::Policies> MasterService::MakePolicies(const MasterConfig& config) {
  cache::PolicyOptions options;
  if (config.s3fifo_move_threshold != 0)
    options.s3fifo_move_threshold = config.s3fifo_move_threshold;
  auto policy = cache::MakePolicy(config.eviction_policy, options);
  if (!policy.ok()) return policy.status();
  auto soft = cache::MakePolicy("lru", options);
  if (!soft.ok()) return soft.status();
  auto pmem = cache::MakePolicy(config.eviction_policy, options);
  if (!pmem.ok()) return pmem.status();
  return Policies{std::move(policy).value(), std::move(soft).value(), std::move(pmem).value()};
}

MasterService::MasterService(const MasterConfig& config, const Clock& clock)
    : config_(config),
      clock_(clock),
      incarnation_((uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()),
      segments_(config_, clock),
      shard_mask_(config.num_shards - 1),
      bloom_(config.bloom_expected_keys, config.bloom_false_positive_rate, config.num_shards),
      touch_queue_(config.touch_queue_capacity) {
  shards_.reserve(config.num_shards);
  for (uint32_t i = 0; i < config.num_shards; ++i)
    shards_.push_back(std::make_unique<ObjectShard>(i));
}

MasterService::~MasterService() {
  restore_stop_.store(true, std::memory_order_relaxed);
  if (restore_thread_.joinable()) restore_thread_.join();
  StopBackground();
}

Status MasterService::ValidateKey(std::string_view key) const {
  if (key.empty()) return Status(ErrorCode::kInvalidKey, "key is empty");
  if (key.size() > config_.max_key_length) {
    return Status(ErrorCode::kInvalidKey, "key of " + std::to_string(key.size()) +
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

MasterService::Located MasterService::Locate(std::string_view key) const {
  uint64_t h = HashKey(key);
  // The low bits pick the Bloom probes; shard by the high bits.
  return {shards_[(h >> 56) & shard_mask_].get(), h};
}

// ---- Operation log ----

uint64_t MasterService::LogChange(const LogRecord& record) {
  if (log_ == nullptr) return 0;
  StatusOr<uint64_t> at = log_->Append(EncodeLogRecord(record));
  return at.ok() ? *at : kLogFailed;
}

Status MasterService::WaitLogged(uint64_t position, bool now) {
  if (log_ == nullptr || position == 0) return Status::Ok();
  return position == kLogFailed ? Status(ErrorCode::kIoError, "the append failed")
         : now                  ? log_->SyncThrough(position)
                                : log_->WaitDurable(position);
}

Status MasterService::AwaitLogged(uint64_t position, bool now) {
  Status s = WaitLogged(position, now);
  if (!s.ok()) {
    return Status(ErrorCode::kIoError,
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

StatusOr<SegmentId> MasterService::MountSegment(const SegmentSpec& spec,
                                                const PreviousMount* previous, bool* adopted) {
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
  {
    std::lock_guard lock(policy_mu_);
    SetPolicyCapacitiesLocked();
  }
  // On stable storage before the node learns its new endpoint and token,
  // whatever the sync policy: a restart that lost this record would know the
  // segment only by its previous mount, which the node no longer offers, and
  // would drop every object on it as new memory.
  if (Status s = AwaitLogged(logged, /*now=*/true); !s.ok()) return s;
  return mounted->id;
}

Status MasterService::UnmountSegment(std::string_view name, std::string_view owner_node,
                                     uint64_t owner_token) {
  auto gone = segments_.Unmount(name, owner_node, owner_token);
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
  {
    std::lock_guard lock(policy_mu_);
    SetPolicyCapacitiesLocked();
  }
  return AwaitLogged(logged);
}

Status MasterService::Heartbeat(std::string_view node) {
  Status s = segments_.Heartbeat(node);
  counters_.heartbeat.Record(1, s.ok() ? 0 : 1);
  return s;
}

size_t MasterService::ReportUnreachable(std::span<const SegmentId> segments) {
  size_t marked = 0;
  for (SegmentId id : segments) marked += segments_.MarkUnreachable(id) ? 1 : 0;
  counters_.report_unreachable.Record(segments.size(), segments.size() - marked);
  return marked;
}

std::vector<SegmentInfo> MasterService::ListSegments() const { return segments_.List(); }

MasterService::PinCounts MasterService::Pins() const {
  PinCounts p;
  p.hard = hard_pinned_.load(std::memory_order_relaxed);
  std::lock_guard lock(policy_mu_);
  p.soft = soft_policy_->Count();
  return p;
}

uint64_t MasterService::CountLeased() const {
  const TimeMs now = clock_.NowMs();
  uint64_t leased = 0;
  for (const auto& shard : shards_) {
    shard->VisitCompleteInSteps([&](uint32_t slot) {
      const ObjectEntry& e = shard->entry(slot);
      if (e.touch.load(std::memory_order_relaxed) != 0 || e.Leased(now)) ++leased;
    });
  }
  return leased;
}

MasterStats MasterService::Stats() const {
  MasterStats s;
  s.objects = live_objects_.load(std::memory_order_relaxed);
  s.pending_puts = pending_count_.load(std::memory_order_relaxed);
  s.capacity_bytes = segments_.capacity();
  s.used_bytes = segments_.used();
  s.held_bytes = held_.bytes();
  s.bloom_design_keys = bloom_.design_keys();
  s.bloom_estimated_fpr = bloom_.EstimatedFalsePositiveRate();
  s.segments = segments_.mounted_count();
  s.largest_object = LargestObject();
  uint64_t meta = bloom_.MemoryBytes();
  for (const auto& shard : shards_) {
    std::shared_lock lock(shard->mutex());
    meta += shard->MemoryBytes();
  }
  s.metadata_bytes = meta;
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
  if (!dead.empty() || !detached.empty()) {
    std::lock_guard lock(policy_mu_);
    SetPolicyCapacitiesLocked();
  }
  DiscardExpiredPuts(now);
  ReleaseHeld(now);
  ReclaimDurableFrees(/*sync=*/false);
  {
    std::lock_guard lock(policy_mu_);
    FlushTouchesLocked();
    ExpireSoftPinsLocked(now);
  }
  WatermarkEvict();
  RunPromotions();
  RunVerifications(/*budget_ms=*/200);
  MaybeRebuildBloom();
}

void MasterService::StartBackground(int64_t interval_ms) {
  std::lock_guard lock(bg_mu_);
  if (bg_thread_.joinable()) return;
  bg_stop_ = false;
  bg_thread_ = std::thread([this, interval_ms] {
    std::unique_lock lock(bg_mu_);
    while (!bg_stop_) {
      lock.unlock();
      RunMaintenance();
      lock.lock();
      bg_cv_.wait_for(lock, std::chrono::milliseconds(interval_ms), [this] { return bg_stop_; });
    }
  });
}

void MasterService::StopBackground() {
  {
    std::lock_guard lock(bg_mu_);
    bg_stop_ = true;
  }
  bg_cv_.notify_all();
  if (bg_thread_.joinable()) bg_thread_.join();
}

void MasterService::BeginShutdown() {
  // Before the copier closes: a move or check that fails from here on may
  // have failed for the close, and is then taken as not done (RunMoves,
  // RunVerifications), never as the node's answer.
  stopping_.store(true, std::memory_order_release);
  if (ReplicaCopier* copier = copier_.load(std::memory_order_acquire)) copier->Close();
}

void MasterService::MaybeRebuildBloom() {
  // A restore's completion builds the filter for the restored count itself.
  if (!bloom_ready_.load(std::memory_order_acquire)) return;
  uint64_t live = live_objects_.load(std::memory_order_relaxed);
  if (live <= bloom_.design_keys()) return;
  // Another pass already rebuilding leaves this one nothing to do.
  std::unique_lock rebuild(rebuild_mu_, std::try_to_lock);
  if (!rebuild.owns_lock()) return;
  live = live_objects_.load(std::memory_order_relaxed);
  if (live <= bloom_.design_keys()) return;  // rebuilt since the first look
  RebuildBloomLocked(std::max<uint64_t>(2 * live, 2 * bloom_.design_keys()));
}

void MasterService::AddShardToNextBloomLocked(const ObjectShard& shard) {
  // In runs, so that the filter loads the counters of the next keys while it
  // updates these (CountingBloomFilter::AddHashes).
  constexpr size_t kRun = 256;
  std::array<uint64_t, kRun> run;
  size_t n = 0;
  shard.VisitAll([&](uint32_t slot) {
    const ObjectEntry& e = shard.entry(slot);
    if (e.state != EntryState::kComplete) return;
    run[n++] = e.Hash();
    if (n == kRun) {
      bloom_.AddToNext(run);
      n = 0;
    }
  });
  bloom_.AddToNext(std::span<const uint64_t>(run.data(), n));
  bloom_.MarkMigrated(shard.index());
}

void MasterService::RebuildBloomLocked(uint64_t design_keys) {
  bloom_.BeginRebuild(design_keys);
  for (const auto& shard : shards_) {
    // Shared lock: readers continue; this shard's writers wait for the scan.
    std::shared_lock lock(shard->mutex());
    AddShardToNextBloomLocked(*shard);
  }
  bloom_.FinishRebuild();
  counters_.bloom_rebuilds.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace crescent::master
