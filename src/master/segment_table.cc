#include "master/segment_table.h"

#include <algorithm>

namespace crescent::master {

SegmentTable::SegmentTable(const MasterConfig& config, const Clock& clock)
    : config_(config), clock_(clock), by_id_(new std::atomic<Segment*>[kMaxSegments]) {
  for (uint32_t i = 0; i < kMaxSegments; ++i) by_id_[i].store(nullptr, std::memory_order_relaxed);
}

SegmentTable::~SegmentTable() {
  for (uint32_t i = 0; i < kMaxSegments; ++i) delete by_id_[i].load(std::memory_order_relaxed);
}

namespace {
constexpr uint32_t kSlotBits = 16;
uint32_t SlotOf(SegmentId id) { return id & ((1u << kSlotBits) - 1); }

// Whether `spec` mounts a copy of `held`'s persistent file: the same segment
// name (the file header's UUID) from a file of another identity. A side that
// sent no identity (0) is not told apart.
// A mount that names no file (identity 0) does not prove it holds the file:
// it counts as another file. The identity is never shown to other callers
// (convert.cc leaves it out of listings, as it does the owner token).
bool FromAnotherFile(const SegmentSpec& held, const SegmentSpec& spec) {
  return held.file_identity != 0 && held.file_identity != spec.file_identity;
}

Status CopyRefused(const SegmentSpec& spec, const std::string& owner, const std::string& how) {
  if (spec.file_identity == 0) {
    return Status(ErrorCode::kSegmentAlreadyExists,
                  "persistent segment '" + spec.name + "' " + how + " node '" + owner +
                      "'; a mount that names no file of it (no file identity) cannot take it "
                      "over");
  }
  return Status(ErrorCode::kSegmentAlreadyExists,
                "persistent segment '" + spec.name + "' " + how + " node '" + owner +
                    "', from another file: this file is a copy of that node's (the same "
                    "header). Give node '" +
                    spec.owner_node + "' a file of its own (a new path), or start node '" +
                    owner + "' on this file");
}

}  // namespace

SegmentTable::Segment* SegmentTable::Get(SegmentId id) const {
  uint32_t slot = SlotOf(id);
  if (slot == 0) return nullptr;
  Segment* seg = by_id_[slot].load(std::memory_order_acquire);
  return seg != nullptr && seg->id == id ? seg : nullptr;
}

StatusOr<SegmentTable::MountResult> SegmentTable::Mount(
    const SegmentSpec& spec, const std::function<void(SegmentId)>& before_visible,
    const PreviousMount* previous) {
  if (spec.name.empty()) return Status(ErrorCode::kInvalidArgument, "segment name is empty");
  if (spec.owner_node.empty()) return Status(ErrorCode::kInvalidArgument, "segment owner is empty");
  if (spec.capacity < config_.allocation_alignment) {
    return Status(ErrorCode::kInvalidSize, "segment capacity " + std::to_string(spec.capacity) +
                                               " is below the allocation alignment");
  }
  if (spec.capacity > config_.max_segment_bytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "segment '" + spec.name + "' of " + std::to_string(spec.capacity) +
                      " bytes is larger than this master accepts (--max-segment-size " +
                      std::to_string(config_.max_segment_bytes) + " bytes)");
  }
  std::unique_lock lock(mu_);
  if (auto it = by_name_.find(spec.name); it != by_name_.end()) {
    Segment* mounted = Get(it->second);
    if (IsRepeatLocked(*mounted, spec)) {
      // The same mount again (its answer was lost): the same answer, once.
      MountResult repeat;
      repeat.id = mounted->id;
      repeat.adopted = mounted->adopted;
      repeat.repeated = true;
      return repeat;
    }
  }
  if (auto it = by_name_.find(spec.name); it != by_name_.end()) {
    // A persistent segment's file is held (flock) by one process at a time:
    // a node that mounts it has the file, so the process that mounted it
    // before is gone (killed, and not yet declared dead). Its mount is
    // detached, and taken over below with its objects; the new epoch fences
    // the old process's capabilities.
    // That holds only for the same file: a copy of it has the same name (its
    // header's UUID) but another file identity, and while the node holding the
    // original is alive, the copy must not displace it.
    Segment* old = Get(it->second);
    if (spec.tier != Tier::kPmem || old->spec.tier != Tier::kPmem ||
        old->spec.capacity != spec.capacity) {
      return Status(ErrorCode::kSegmentAlreadyExists, "segment '" + spec.name + "' is mounted");
    }
    // Only its own node may bring the segment back from another file (the
    // file moved), and only once that node is no longer alive.
    if (FromAnotherFile(old->spec, spec) &&
        (OwnerAliveLocked(*old) || spec.owner_node != old->spec.owner_node)) {
      return CopyRefused(spec, old->spec.owner_node, "is mounted by");
    }
    DetachLocked(old);
  }
  MountResult result;
  std::unique_ptr<cache::OffsetAllocator> allocator;
  bool deferred = false;
  std::vector<cache::Allocation> deferred_frees;
  SegmentId id = kNoSegment;
  if (auto r = restored_.find(spec.name); r != restored_.end()) {
    Segment* old = Get(r->second.id);
    // A copy of the file, on another node, must not take over (nor replace)
    // a segment that awaits its own node: that node may be alive, merely not
    // heard from yet (the master restarted, or the node was stopped).
    if (old != nullptr && FromAnotherFile(old->spec, spec) &&
        spec.owner_node != old->spec.owner_node) {
      return CopyRefused(spec, old->spec.owner_node, "awaits");
    }
    const bool same_process = previous != nullptr && old != nullptr &&
                              previous->Proves(old->spec.endpoint, old->spec.owner_token) &&
                              old->spec.owner_node == spec.owner_node;
    const bool same_file = old != nullptr && old->spec.tier == Tier::kPmem &&
                           spec.tier == Tier::kPmem;
    const bool same = old != nullptr && (old->allocator != nullptr || old->allocator_deferred) &&
                      old->spec.capacity == spec.capacity && (same_process || same_file);
    if (same) {
      id = old->id;
      // Taken over at once, even while the restore's completion still
      // rebuilds the allocator: the objects are readable now, and the
      // segment takes new replicas once its allocator is installed.
      allocator = std::move(old->allocator);
      deferred = old->allocator_deferred;
      deferred_frees = std::move(old->deferred_frees);
      old->allocator_deferred = false;
      restored_.erase(r);
      result.adopted = true;
      result.verify = !same_process;
    } else {
      result.replaced = r->second.id;
      DropRestoredLocked(r->second.id);
    }
  }
  if (!result.adopted) {
    auto alloc = cache::OffsetAllocator::Create(spec.capacity, {config_.allocation_alignment});
    if (!alloc.ok()) return alloc.status();
    uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.front();
      free_slots_.pop_front();
    } else if (next_slot_ < kMaxSegments) {
      slot = next_slot_++;
    } else {
      return Status(ErrorCode::kNoSpace, "already " + std::to_string(kMaxSegments - 1) +
                                             " segments are mounted; unmount one first");
    }
    // The next incarnation of the slot (wrapping after 2^16 mounts of it); a
    // slot no segment of this table has used starts at 0.
    const Segment* old = by_id_[slot].load(std::memory_order_relaxed);
    const uint32_t incarnation = old == nullptr ? 0 : (old->id >> kSlotBits) + 1;
    id = (incarnation << kSlotBits) | slot;
    allocator = std::make_unique<cache::OffsetAllocator>(std::move(alloc).value());
  }
  auto seg = std::make_unique<Segment>();
  seg->id = id;
  seg->spec = spec;
  seg->allocator = std::move(allocator);
  seg->allocator_deferred = deferred;
  seg->deferred_frees = std::move(deferred_frees);
  seg->adopted = result.adopted;
  by_name_.emplace(spec.name, id);
  Node& node = nodes_[spec.owner_node];
  node.last_heartbeat = clock_.NowMs();
  node.suspect_since.reset();  // a node that mounts is alive and reachable again
  node.segments.push_back(id);
  const size_t tier = TierIndex(spec.tier);
  capacity_[tier].fetch_add(spec.capacity, std::memory_order_relaxed);
  if (seg->allocator) used_[tier].fetch_add(seg->allocator->used_bytes(), std::memory_order_relaxed);
  if (before_visible) before_visible(id);
  InstallLocked(std::move(seg));
  result.id = id;
  return result;
}

void SegmentTable::InstallLocked(std::unique_ptr<Segment> seg) {
  const uint32_t slot = SlotOf(seg->id);
  if (Segment* old = by_id_[slot].load(std::memory_order_relaxed)) retired_.emplace_back(old);
  by_id_[slot].store(seg.release(), std::memory_order_release);
}

void SegmentTable::DropRestoredLocked(SegmentId id) {
  Segment* seg = Get(id);
  if (seg == nullptr) return;
  if (auto it = restored_.find(seg->spec.name); it != restored_.end() && it->second.id == id) {
    restored_.erase(it);
  }
  seg->allocator.reset();
  seg->allocator_deferred = false;
  seg->deferred_frees = {};
  if (restore_finished_) free_slots_.push_back(SlotOf(id));
}

SegmentId SegmentTable::Restore(SegmentId id, const SegmentSpec& spec) {
  std::lock_guard lock(mu_);
  const uint32_t slot = SlotOf(id);
  if (slot == 0) return kNoSegment;
  restore_finished_ = false;
  SegmentId replaced = kNoSegment;
  if (auto it = restored_.find(spec.name); it != restored_.end() && it->second.id != id) {
    replaced = it->second.id;
    DropRestoredLocked(replaced);
  }
  // Another segment in the slot (an id the records did not unmount) is gone.
  if (Segment* old = by_id_[slot].load(std::memory_order_relaxed);
      old != nullptr && old->id != id && IsRestoredLocked(old->id)) {
    DropRestoredLocked(old->id);
  }
  auto seg = std::make_unique<Segment>();
  seg->id = id;
  seg->spec = spec;
  seg->mounted.store(false, std::memory_order_relaxed);
  restored_[spec.name] = {id, kNever};
  InstallLocked(std::move(seg));
  next_slot_ = std::max(next_slot_, slot + 1);
  return replaced;
}

void SegmentTable::ForgetRestored(SegmentId id) {
  std::lock_guard lock(mu_);
  const uint32_t slot = SlotOf(id);
  const Segment* old = by_id_[slot].load(std::memory_order_relaxed);
  if (slot == 0 || (old != nullptr && (old->id == id || IsRestoredLocked(old->id) ||
                                       old->mounted.load(std::memory_order_relaxed)))) {
    DropRestoredLocked(id);
    return;
  }
  // Not held (unmounted before the snapshot): the slot's id from then on.
  // FinishRestore frees the slot for reuse.
  restore_finished_ = false;
  auto seg = std::make_unique<Segment>();
  seg->id = id;
  seg->mounted.store(false, std::memory_order_relaxed);
  InstallLocked(std::move(seg));
  next_slot_ = std::max(next_slot_, slot + 1);
}

bool SegmentTable::IsRestoredLocked(SegmentId id) const {
  const Segment* seg = Get(id);
  if (seg == nullptr || seg->mounted.load(std::memory_order_relaxed)) return false;
  auto it = restored_.find(seg->spec.name);
  return it != restored_.end() && it->second.id == id;
}

void SegmentTable::DeferAllocator(SegmentId id) {
  std::lock_guard lock(mu_);
  if (!IsRestoredLocked(id)) return;
  Segment* seg = Get(id);
  seg->allocator.reset();
  seg->allocator_deferred = true;
}

Status SegmentTable::RebuildAllocator(SegmentId id,
                                      std::vector<cache::OffsetAllocator::UsedRegion> used) {
  uint64_t capacity = 0;
  {
    std::lock_guard lock(mu_);
    const Segment* seg = Get(id);
    if (seg == nullptr || !seg->allocator_deferred) {
      return Status(ErrorCode::kSegmentNotFound,
                    "segment " + std::to_string(id) + " has no allocator to rebuild");
    }
    capacity = seg->spec.capacity;  // immutable
  }
  auto alloc =
      cache::OffsetAllocator::Rebuild(capacity, {config_.allocation_alignment}, std::move(used));
  if (!alloc.ok()) return alloc.status();
  std::lock_guard lock(mu_);
  // Dropped meanwhile (expired, or replaced by a mount with new memory); a
  // segment taken over meanwhile is the mount's Segment under the same id.
  Segment* seg = Get(id);
  if (seg == nullptr || !seg->allocator_deferred) return Status::Ok();
  seg->allocator = std::make_unique<cache::OffsetAllocator>(std::move(alloc).value());
  for (const cache::Allocation& a : seg->deferred_frees) (void)seg->allocator->Free(a);
  seg->deferred_frees = {};
  seg->allocator_deferred = false;
  if (seg->mounted.load(std::memory_order_relaxed)) {
    used_[TierIndex(seg->spec.tier)].fetch_add(seg->allocator->used_bytes(),
                                               std::memory_order_relaxed);
  }
  return Status::Ok();
}

void SegmentTable::FinishRestore(TimeMs deadline) {
  std::lock_guard lock(mu_);
  const TimeMs pmem_deadline = clock_.NowMs() + config_.pmem_grace_ms;
  for (auto& [name, waiting] : restored_) {
    const Segment* seg = Get(waiting.id);
    const bool pmem = seg != nullptr && seg->spec.tier == Tier::kPmem;
    waiting.deadline = pmem ? std::max(deadline, pmem_deadline) : deadline;
  }
  restore_finished_ = true;
  free_slots_.clear();
  for (uint32_t slot = 1; slot < next_slot_; ++slot) {
    const Segment* seg = by_id_[slot].load(std::memory_order_relaxed);
    if (seg == nullptr || !IsRestoredLocked(seg->id)) free_slots_.push_back(slot);
  }
}

std::vector<SegmentId> SegmentTable::DeferredIds() const {
  std::lock_guard lock(mu_);
  std::vector<SegmentId> out;
  for (uint32_t slot = 1; slot < next_slot_; ++slot) {
    const Segment* seg = by_id_[slot].load(std::memory_order_relaxed);
    if (seg != nullptr && seg->allocator_deferred) out.push_back(seg->id);
  }
  return out;
}

bool SegmentTable::DropUnrebuildable(SegmentId id) {
  std::lock_guard lock(mu_);
  Segment* seg = Get(id);
  if (seg == nullptr) return false;
  if (!seg->mounted.load(std::memory_order_relaxed)) {
    DropRestoredLocked(id);
    return false;
  }
  seg->allocator_deferred = false;
  seg->deferred_frees = {};
  UnmountLocked(seg);
  // A node left with no segment is forgotten: its next heartbeat is told to
  // mount again, and gets a fresh segment.
  if (auto it = nodes_.find(seg->spec.owner_node); it != nodes_.end() && it->second.segments.empty()) {
    nodes_.erase(it);
  }
  return true;
}

bool SegmentTable::IsRepeatLocked(const Segment& mounted, const SegmentSpec& spec) const {
  return spec.owner_token != 0 && mounted.spec.owner_token == spec.owner_token &&
         mounted.spec.endpoint == spec.endpoint && mounted.spec.owner_node == spec.owner_node &&
         mounted.spec.capacity == spec.capacity && mounted.spec.tier == spec.tier;
}

std::vector<SegmentId> SegmentTable::RestoredIds() const {
  std::lock_guard lock(mu_);
  std::vector<SegmentId> out;
  for (const auto& [name, waiting] : restored_) out.push_back(waiting.id);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<SegmentId, SegmentSpec>> SegmentTable::Waiting() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<SegmentId, SegmentSpec>> out;
  for (const auto& [name, waiting] : restored_) {
    if (const Segment* seg = Get(waiting.id)) out.emplace_back(waiting.id, seg->spec);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<SegmentId> SegmentTable::UnmountedIds() const {
  std::lock_guard lock(mu_);
  std::vector<SegmentId> out;
  for (uint32_t slot = 1; slot < next_slot_; ++slot) {
    const Segment* seg = by_id_[slot].load(std::memory_order_relaxed);
    if (seg == nullptr || seg->mounted.load(std::memory_order_relaxed)) continue;
    auto waiting = restored_.find(seg->spec.name);
    if (waiting == restored_.end() || waiting->second.id != seg->id) out.push_back(seg->id);
  }
  return out;
}

std::vector<SegmentId> SegmentTable::ExpireRestored() {
  std::lock_guard lock(mu_);
  const TimeMs now = clock_.NowMs();
  std::vector<SegmentId> gone;
  for (const auto& [name, waiting] : restored_) {
    if (now >= waiting.deadline) gone.push_back(waiting.id);
  }
  for (SegmentId id : gone) DropRestoredLocked(id);
  std::sort(gone.begin(), gone.end());
  return gone;
}

std::vector<SegmentTable::NodeInfo> SegmentTable::Nodes() const {
  const TimeMs now = clock_.NowMs();
  std::lock_guard lock(mu_);
  std::vector<NodeInfo> out;
  for (const auto& [name, n] : nodes_) {
    out.push_back({name, now - n.last_heartbeat, n.suspect_since.has_value(), n.segments.size()});
  }
  std::sort(out.begin(), out.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.node < b.node; });
  return out;
}

size_t SegmentTable::restored_count() const {
  std::lock_guard lock(mu_);
  return restored_.size();
}

void SegmentTable::UnmountLocked(Segment* seg) {
  seg->mounted.store(false, std::memory_order_release);
  by_name_.erase(seg->spec.name);
  const size_t tier = TierIndex(seg->spec.tier);
  capacity_[tier].fetch_sub(seg->spec.capacity, std::memory_order_relaxed);
  if (seg->allocator) used_[tier].fetch_sub(seg->allocator->used_bytes(), std::memory_order_relaxed);
  seg->allocator.reset();
  seg->allocator_deferred = false;
  seg->deferred_frees = {};
  auto it = nodes_.find(seg->spec.owner_node);
  if (it != nodes_.end()) {
    auto& segs = it->second.segments;
    segs.erase(std::remove(segs.begin(), segs.end(), seg->id), segs.end());
  }
  free_slots_.push_back(SlotOf(seg->id));
}

void SegmentTable::DetachLocked(Segment* seg) {
  seg->mounted.store(false, std::memory_order_release);
  by_name_.erase(seg->spec.name);
  const size_t tier = TierIndex(seg->spec.tier);
  capacity_[tier].fetch_sub(seg->spec.capacity, std::memory_order_relaxed);
  if (seg->allocator) used_[tier].fetch_sub(seg->allocator->used_bytes(), std::memory_order_relaxed);
  auto it = nodes_.find(seg->spec.owner_node);
  if (it != nodes_.end()) {
    auto& segs = it->second.segments;
    segs.erase(std::remove(segs.begin(), segs.end(), seg->id), segs.end());
  }
  restored_[seg->spec.name] = {seg->id, clock_.NowMs() + config_.pmem_grace_ms};
}

bool SegmentTable::LeaveLocked(Segment* seg) {
  if (seg->spec.tier == Tier::kPmem) {
    DetachLocked(seg);
    return true;
  }
  UnmountLocked(seg);
  return false;
}

StatusOr<SegmentTable::UnmountResult> SegmentTable::Unmount(std::string_view name,
                                                            std::string_view owner, uint64_t token,
                                                            bool any_owner) {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) {
    return Status(ErrorCode::kSegmentNotFound,
                  "segment '" + std::string(name) + "' is not mounted");
  }
  Segment* seg = Get(it->second);
  if (any_owner) {
    const bool detached = LeaveLocked(seg);
    return UnmountResult{seg->id, detached};
  }
  if (seg->spec.owner_node != owner) {
    return Status(ErrorCode::kNotOwner,
                  "segment '" + std::string(name) + "' is owned by '" + seg->spec.owner_node + "'");
  }
  if (seg->spec.owner_token != 0 && seg->spec.owner_token != token) {
    return Status(ErrorCode::kNotOwner, "segment '" + std::string(name) +
                                            "' was mounted by another incarnation of node '" +
                                            seg->spec.owner_node + "' (owner token mismatch)");
  }
  const bool detached = LeaveLocked(seg);
  return UnmountResult{seg->id, detached};
}

Status SegmentTable::Heartbeat(std::string_view node) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(std::string(node));
  if (it == nodes_.end()) {
    return Status(ErrorCode::kNodeUnknown, "node '" + std::string(node) + "' is unknown; remount");
  }
  Node& n = it->second;
  n.last_heartbeat = clock_.NowMs();
  // A heartbeat sent before the report may arrive after it: only one that
  // comes a hold time later clears the suspicion.
  if (n.suspect_since && n.last_heartbeat - *n.suspect_since >= config_.suspect_hold_ms) {
    n.suspect_since.reset();
  }
  return Status::Ok();
}

bool SegmentTable::MarkUnreachable(SegmentId id, bool spare_last) {
  std::lock_guard lock(mu_);
  Segment* seg = Get(id);
  if (seg == nullptr || !seg->mounted.load(std::memory_order_relaxed)) return false;
  auto it = nodes_.find(seg->spec.owner_node);
  if (it == nodes_.end()) return false;
  if (it->second.suspect_since) return true;
  // With spare_last, never the last while it heartbeats: a report that would
  // leave no node with segments unsuspected is ignored unless that node has
  // gone silent too (a client that reports every live node would refuse every
  // put). A dead last node is still marked, so that puts fail fast
  // (UNAVAILABLE) rather than hold its space, and evict, retrying on it.
  const TimeMs now = clock_.NowMs();
  const bool another_unsuspected =
      std::any_of(nodes_.begin(), nodes_.end(), [&](const auto& other) {
        return other.first != it->first && !other.second.segments.empty() &&
               !other.second.suspect_since;
      });
  const bool heard_lately = now - it->second.last_heartbeat <= 2 * config_.suspect_hold_ms;
  if (spare_last && !another_unsuspected && heard_lately) return false;
  it->second.suspect_since = now;
  return true;
}

bool SegmentTable::OwnerAliveLocked(const Segment& seg) const {
  auto it = nodes_.find(seg.spec.owner_node);
  return it != nodes_.end() &&
         clock_.NowMs() - it->second.last_heartbeat <= config_.heartbeat_ttl_ms;
}

bool SegmentTable::SuspectLocked(const Segment& seg) const {
  auto it = nodes_.find(seg.spec.owner_node);
  return it != nodes_.end() && it->second.suspect_since.has_value();
}

std::vector<SegmentId> SegmentTable::ExpireNodes(std::vector<SegmentId>* detached) {
  std::vector<SegmentId> gone;
  TimeMs now = clock_.NowMs();
  std::lock_guard lock(mu_);
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (now - it->second.last_heartbeat <= config_.heartbeat_ttl_ms) {
      ++it;
      continue;
    }
    std::vector<SegmentId> segs = it->second.segments;
    for (SegmentId id : segs) {
      if (!LeaveLocked(Get(id))) {
        gone.push_back(id);
      } else if (detached != nullptr) {
        detached->push_back(id);
      }
    }
    nodes_.erase(it++);
  }
  return gone;
}

std::vector<ReplicaSlot> SegmentTable::Allocate(uint64_t size, uint32_t count,
                                                const PutConfig& config, std::optional<Tier> only) {
  std::vector<ReplicaSlot> out;
  std::lock_guard lock(mu_);
  // Rank mounted segments: preferred, then DRAM before PMEM, within a tier
  // local before remote, then most free space.
  struct Candidate {
    Segment* seg;
    int rank;
    uint64_t free;
  };
  std::vector<Candidate> cands;
  cands.reserve(by_name_.size());
  for (const auto& [name, id] : by_name_) {
    Segment* seg = Get(id);
    // A taken-over segment whose allocator is being rebuilt places nothing yet.
    if (!seg->allocator || SuspectLocked(*seg) || (only && seg->spec.tier != *only)) continue;
    int rank = 1 + 2 * static_cast<int>(seg->spec.tier);
    if (!config.preferred_segment.empty() && name == config.preferred_segment) {
      rank = 0;
    } else if (config.local_node.empty() || seg->spec.owner_node != config.local_node) {
      rank += 1;
    }
    cands.push_back({seg, rank, seg->allocator->free_bytes()});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.free != b.free) return a.free > b.free;
    return a.seg->id < b.seg->id;
  });
  for (const Candidate& c : cands) {
    if (out.size() >= count) break;
    uint64_t before = c.seg->allocator->used_bytes();
    auto alloc = c.seg->allocator->Allocate(size);
    if (!alloc.ok()) continue;
    out.push_back({c.seg->id, alloc->node, alloc->generation, alloc->offset});
    used_[TierIndex(c.seg->spec.tier)].fetch_add(c.seg->allocator->used_bytes() - before,
                                                 std::memory_order_relaxed);
  }
  return out;
}

void SegmentTable::Free(const ReplicaSlot& replica) {
  std::lock_guard lock(mu_);
  Segment* seg = Get(replica.segment);
  if (seg != nullptr && seg->allocator_deferred) {
    seg->deferred_frees.push_back({replica.offset, replica.alloc_node, replica.alloc_generation});
    return;
  }
  if (seg == nullptr || !seg->allocator) return;
  uint64_t before = seg->allocator->used_bytes();
  (void)seg->allocator->Free(
      cache::Allocation{replica.offset, replica.alloc_node, replica.alloc_generation});
  // A segment waiting for its node (restored, detached) is not counted in used_.
  if (seg->mounted.load(std::memory_order_relaxed)) {
    used_[TierIndex(seg->spec.tier)].fetch_sub(before - seg->allocator->used_bytes(),
                                               std::memory_order_relaxed);
  }
}

Tier SegmentTable::TierOf(SegmentId id) const {
  const Segment* seg = Get(id);
  return seg != nullptr ? seg->spec.tier : Tier::kDram;
}

std::string SegmentTable::OwnerOf(SegmentId id) const {
  const Segment* seg = Get(id);
  return seg != nullptr ? seg->spec.owner_node : std::string();
}

bool SegmentTable::HasSpace(SegmentId id) const {
  std::lock_guard lock(mu_);
  const Segment* seg = Get(id);
  return seg != nullptr && (seg->allocator != nullptr || seg->allocator_deferred);
}

bool SegmentTable::IsMounted(SegmentId id) const {
  Segment* seg = Get(id);
  return seg != nullptr && seg->mounted.load(std::memory_order_acquire);
}

const std::string* SegmentTable::MountedEndpoint(SegmentId id) const {
  Segment* seg = Get(id);
  if (seg == nullptr || !seg->mounted.load(std::memory_order_acquire)) return nullptr;
  return &seg->spec.endpoint;
}

uint64_t SegmentTable::largest_segment() const {
  std::lock_guard lock(mu_);
  uint64_t largest = 0;
  // The managed size (capacity rounded down to the alignment): an object larger
  // than that can never be placed, and must not trigger eviction.
  const uint64_t align = std::max<uint64_t>(1, config_.allocation_alignment);
  for (const auto& [name, id] : by_name_) {
    const Segment* seg = Get(id);
    largest = std::max(largest, seg->allocator ? seg->allocator->capacity()
                                               : seg->spec.capacity / align * align);
  }
  return largest;
}

size_t SegmentTable::mounted_count() const {
  std::lock_guard lock(mu_);
  return by_name_.size();
}

size_t SegmentTable::placeable_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [name, id] : by_name_) n += SuspectLocked(*Get(id)) ? 0 : 1;
  return n;
}

std::vector<SegmentInfo> SegmentTable::List() const {
  std::vector<SegmentInfo> out;
  std::lock_guard lock(mu_);
  for (const auto& [name, id] : by_name_) {
    const Segment* seg = Get(id);
    SegmentInfo info;
    info.id = id;
    info.spec = seg->spec;
    if (seg->allocator) {  // else its allocator is being rebuilt: nothing known yet
      info.used_bytes = seg->allocator->used_bytes();
      info.allocations = seg->allocator->allocation_count();
      info.largest_free = seg->allocator->Stats().largest_free_bytes;
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

}  // namespace crescent::master
