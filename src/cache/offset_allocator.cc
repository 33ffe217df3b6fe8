#include "cache/offset_allocator.h"

#include <algorithm>
#include <span>
#include <utility>

#include "common/coding.h"
#include "common/hash.h"

namespace crescent::cache {

using offset_bins::BinMin;
using offset_bins::CeilBin;
using offset_bins::FloorBin;
using offset_bins::kBinsPerLevel;
using offset_bins::kMantissaBits;
using offset_bins::kNumBins;
using offset_bins::kNumLevels;

static_assert(kNumLevels <= 64, "level_map_ has one bit per first level");

namespace {

constexpr char kMagic[4] = {'C', 'O', 'F', 'A'};
// Version 2: per-region generations and one counter (version 1 kept one per slot).
constexpr uint16_t kVersion = 2;
// magic, version, reserved, payload length; the checksum follows the payload.
constexpr size_t kHeaderBytes = 4 + 2 + 2 + 8;
constexpr size_t kChecksumBytes = 8;
constexpr uint32_t kMaxShift = 32;

uint64_t Checksum(std::string_view bytes) {
  return HashBytes(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

Status Corrupt(const std::string& what) {
  return Status(ErrorCode::kCorruptData, "offset allocator blob: " + what);
}

}  // namespace

StatusOr<OffsetAllocator> OffsetAllocator::Create(uint64_t size, OffsetAllocatorOptions options) {
  const uint64_t g = options.granularity;
  if (!std::has_single_bit(g) || std::countr_zero(g) > static_cast<int>(kMaxShift)) {
    return Status(ErrorCode::kInvalidArgument,
                  "granularity must be a power of two up to 2^32, got " + std::to_string(g));
  }
  OffsetAllocator a;
  a.shift_ = static_cast<uint32_t>(std::countr_zero(g));
  a.capacity_units_ = size >> a.shift_;
  if (a.capacity_units_ == 0) {
    return Status(
        ErrorCode::kInvalidArgument,
        "range of " + std::to_string(size) + " bytes holds no granule of " + std::to_string(g));
  }
  if (a.capacity_units_ > kMaxUnits) {
    return Status(ErrorCode::kInvalidArgument,
                  "range of " + std::to_string(size) + " bytes holds " +
                      std::to_string(a.capacity_units_) + " granules of " + std::to_string(g) +
                      "; an allocator manages at most 2^62 - 1 granules");
  }
  a.nodes_.emplace_back();
  a.first_region_ = 0;
  a.InsertFree(0);
  return a;
}

StatusOr<Allocation> OffsetAllocator::Allocate(uint64_t size) {
  if (size == 0) return Status(ErrorCode::kInvalidSize, "allocation size must be positive");
  const uint64_t units = (size >> shift_) + ((size & (granularity() - 1)) != 0 ? 1 : 0);
  const auto no_space = [&] {
    return Status(ErrorCode::kNoSpace, "no free region fits " + std::to_string(size) + " bytes");
  };
  if (units > capacity_units_ - used_units_) return no_space();
  const uint32_t n = FindFit(units);
  if (n == kNone) return no_space();

  // Carve the front of region n; the rest, if any, becomes a new free region.
  const uint64_t region = RegionSize(n);
  uint32_t rest = kNone;
  if (region > units) {
    rest = NewSlot();  // may grow nodes_: take references only after this
    if (rest == kNone) return Status(ErrorCode::kNoSpace, "node table full");
  }
  RemoveFree(n);
  if (rest != kNone) {
    Node& r = nodes_[rest];
    Node& a = nodes_[n];
    r.set_offset(a.offset() + units);
    r.prev = n;
    r.next = a.next;
    if (a.next != kNone) nodes_[a.next].prev = rest;
    a.next = rest;
    InsertFree(rest);
  }
  Node& a = nodes_[n];
  a.set_state(State::kUsed);
  if (++last_generation_ == 0) last_generation_ = 1;
  a.bin_prev = last_generation_;
  used_units_ += units;
  ++allocations_;
  return Allocation{a.offset() << shift_, n, last_generation_};
}

Status OffsetAllocator::Free(const Allocation& allocation) {
  if (Status s = CheckLive(allocation); !s.ok()) return s;
  uint32_t n = allocation.node;
  used_units_ -= RegionSize(n);
  --allocations_;

  const uint32_t prev = nodes_[n].prev;
  if (prev != kNone && nodes_[prev].state() == State::kFree) {
    RemoveFree(prev);
    Absorb(prev, n);
    n = prev;
  }
  const uint32_t next = nodes_[n].next;
  if (next != kNone && nodes_[next].state() == State::kFree) {
    RemoveFree(next);
    Absorb(n, next);
  }
  InsertFree(n);
  return Status::Ok();
}

StatusOr<uint64_t> OffsetAllocator::SizeOf(const Allocation& allocation) const {
  if (Status s = CheckLive(allocation); !s.ok()) return s;
  return RegionSize(allocation.node) << shift_;
}

OffsetAllocatorStats OffsetAllocator::Stats() const {
  OffsetAllocatorStats s;
  s.capacity_bytes = capacity();
  s.used_bytes = used_bytes();
  s.free_bytes = free_bytes();
  s.allocations = allocations_;
  s.free_regions = free_regions_;
  s.node_slots = nodes_.size();
  if (level_map_ != 0) {
    const uint32_t level = 63u - static_cast<uint32_t>(std::countl_zero(level_map_));
    const uint32_t sub = 31u - static_cast<uint32_t>(std::countl_zero(uint32_t{bin_maps_[level]}));
    const uint32_t b = (level << kMantissaBits) | sub;
    const uint64_t top = b + 1 < kNumBins ? BinMin(b + 1) - 1 : ~uint64_t{0};
    uint64_t largest = 0;
    for (uint32_t n = bin_heads_[b]; n != kNone && largest != top; n = nodes_[n].bin_next) {
      largest = std::max(largest, RegionSize(n));
    }
    s.largest_free_bytes = largest << shift_;
  }
  return s;
}

StatusOr<OffsetAllocator> OffsetAllocator::Rebuild(uint64_t size, OffsetAllocatorOptions options,
                                                   std::vector<UsedRegion> used) {
  auto Bad = [](const std::string& what) {
    return Status(ErrorCode::kCorruptData, "offset allocator rebuild: " + what);
  };
  StatusOr<OffsetAllocator> created = Create(size, options);
  if (!created.ok()) return created.status();
  OffsetAllocator a = std::move(created).value();
  if (used.empty()) return a;
  auto by_offset = [](const UsedRegion& x, const UsedRegion& y) {
    return x.allocation.offset < y.allocation.offset;
  };
  // A restore hands them over merged in order already.
  if (!std::is_sorted(used.begin(), used.end(), by_offset)) {
    std::sort(used.begin(), used.end(), by_offset);
  }
  const uint64_t gmask = a.granularity() - 1;
  uint64_t slots = 0;
  for (const UsedRegion& u : used) {
    const Allocation& h = u.allocation;
    if (u.bytes == 0 || h.generation == 0 || (h.offset & gmask) != 0 || h.node >= kNone - 1) {
      // The message is made only here: a restore passes millions of regions.
      return Bad("allocation at offset " + std::to_string(h.offset) + " (node " +
                 std::to_string(h.node) +
                 "): no bytes, generation 0, off the granularity or a bad node");
    }
    slots = std::max<uint64_t>(slots, uint64_t{h.node} + 1);
  }
  // Used regions keep their slots; free gaps take the unused slots, lowest
  // first, then new ones past the highest; the slots left over are spares.
  std::vector<uint8_t> taken(slots, 0);
  for (const UsedRegion& u : used) {
    if (taken[u.allocation.node] != 0) {
      return Bad("two allocations share node " + std::to_string(u.allocation.node));
    }
    taken[u.allocation.node] = 1;
  }
  a.nodes_.assign(slots, Node{});
  uint32_t next_unused = 0;
  auto gap_slot = [&]() -> uint32_t {
    while (next_unused < slots && taken[next_unused] != 0) ++next_unused;
    if (next_unused < slots) {
      taken[next_unused] = 1;
      return next_unused++;
    }
    a.nodes_.emplace_back();
    return static_cast<uint32_t>(a.nodes_.size() - 1);
  };
  uint32_t prev = kNone;
  uint64_t at = 0;  // units: where the next region starts
  std::vector<uint32_t> free_regions;
  auto append = [&](uint32_t n, uint64_t offset_units) {
    Node& x = a.nodes_[n];
    x.set_offset(offset_units);
    x.prev = prev;
    x.next = kNone;
    if (prev == kNone) {
      a.first_region_ = n;
    } else {
      a.nodes_[prev].next = n;
    }
    prev = n;
  };
  for (const UsedRegion& u : used) {
    const uint64_t offset = u.allocation.offset >> a.shift_;
    const uint64_t units = (u.bytes >> a.shift_) + ((u.bytes & gmask) != 0 ? 1 : 0);
    if (offset < at) {
      return Bad("allocation at offset " + std::to_string(u.allocation.offset) +
                     " overlaps the one before it");
    }
    if (offset > a.capacity_units_ || units > a.capacity_units_ - offset) {
      return Bad("allocation at offset " + std::to_string(u.allocation.offset) + " of " +
                     std::to_string(u.bytes) + " bytes ends past the segment");
    }
    if (offset > at) {
      const uint32_t g = gap_slot();
      append(g, at);
      free_regions.push_back(g);
    }
    append(u.allocation.node, offset);
    Node& x = a.nodes_[u.allocation.node];
    x.set_state(State::kUsed);
    x.bin_prev = u.allocation.generation;
    a.last_generation_ = std::max(a.last_generation_, u.allocation.generation);
    a.used_units_ += units;
    ++a.allocations_;
    at = offset + units;
  }
  if (at < a.capacity_units_) {
    const uint32_t g = gap_slot();
    append(g, at);
    free_regions.push_back(g);
  }
  a.free_regions_ = 0;
  a.level_map_ = 0;
  a.bin_maps_.fill(0);
  a.bin_heads_.fill(kNone);
  // Sizes come from the next region's offset: file the free ones once every
  // region is linked.
  for (uint32_t n : free_regions) a.InsertFree(n);
  a.spare_head_ = kNone;
  for (uint32_t n = static_cast<uint32_t>(slots); n-- > 0;) {
    if (taken[n] == 0) a.ReleaseSlot(n);
  }
  if (Status s = a.Validate(); !s.ok()) return Bad("rebuilt state: " + s.message());
  return a;
}

uint32_t OffsetAllocator::FindFit(uint64_t units) const {
  const uint32_t want = CeilBin(units);
  if (want < kNumBins) {
    uint32_t level = want >> kMantissaBits;
    uint32_t bits = bin_maps_[level] & (0xFFu << (want & (kBinsPerLevel - 1)));
    if (bits == 0) {
      const uint64_t levels = level_map_ & (~uint64_t{0} << (level + 1));
      if (levels != 0) {
        level = static_cast<uint32_t>(std::countr_zero(levels));
        bits = bin_maps_[level];
      }
    }
    if (bits != 0) {
      return bin_heads_[(level << kMantissaBits) | static_cast<uint32_t>(std::countr_zero(bits))];
    }
  }
  // No bin guarantees a fit. Regions of FloorBin(units) straddle the request
  // (when it is not a bin boundary): look at a bounded number of them.
  const uint32_t floor = FloorBin(units);
  if (floor == want) return kNone;
  uint32_t n = bin_heads_[floor];
  for (uint32_t i = 0; n != kNone && i < kFallbackScan; ++i, n = nodes_[n].bin_next) {
    if (RegionSize(n) >= units) return n;
  }
  return kNone;
}

uint32_t OffsetAllocator::NewSlot() {
  if (spare_head_ != kNone) {
    const uint32_t n = spare_head_;
    spare_head_ = nodes_[n].bin_next;
    nodes_[n].bin_next = kNone;
    return n;
  }
  if (nodes_.size() >= kNone) return kNone;
  nodes_.emplace_back();
  return static_cast<uint32_t>(nodes_.size() - 1);
}

void OffsetAllocator::ReleaseSlot(uint32_t n) {
  Node& x = nodes_[n];
  x = Node{};
  x.bin_next = spare_head_;
  spare_head_ = n;
}

void OffsetAllocator::Absorb(uint32_t keep, uint32_t gone) {
  const uint32_t after = nodes_[gone].next;
  nodes_[keep].next = after;
  if (after != kNone) nodes_[after].prev = keep;
  ReleaseSlot(gone);
}

void OffsetAllocator::InsertFree(uint32_t n) {
  const uint32_t b = FloorBin(RegionSize(n));
  Node& x = nodes_[n];
  x.set_state(State::kFree);
  x.bin_prev = kNone;
  x.bin_next = bin_heads_[b];
  if (x.bin_next != kNone) nodes_[x.bin_next].bin_prev = n;
  bin_heads_[b] = n;
  bin_maps_[b >> kMantissaBits] |= static_cast<uint8_t>(1u << (b & (kBinsPerLevel - 1)));
  level_map_ |= uint64_t{1} << (b >> kMantissaBits);
  ++free_regions_;
}

void OffsetAllocator::RemoveFree(uint32_t n) {
  const uint32_t b = FloorBin(RegionSize(n));  // its size has not changed since InsertFree
  Node& x = nodes_[n];
  if (x.bin_prev != kNone) {
    nodes_[x.bin_prev].bin_next = x.bin_next;
  } else {
    bin_heads_[b] = x.bin_next;
  }
  if (x.bin_next != kNone) nodes_[x.bin_next].bin_prev = x.bin_prev;
  x.bin_prev = kNone;
  x.bin_next = kNone;
  if (bin_heads_[b] == kNone) {
    const uint32_t level = b >> kMantissaBits;
    bin_maps_[level] &= static_cast<uint8_t>(~(1u << (b & (kBinsPerLevel - 1))));
    if (bin_maps_[level] == 0) level_map_ &= ~(uint64_t{1} << level);
  }
  --free_regions_;
}

Status OffsetAllocator::CheckLive(const Allocation& allocation) const {
  const uint32_t n = allocation.node;
  if (n >= nodes_.size() || nodes_[n].state() != State::kUsed ||
      nodes_[n].generation() != allocation.generation ||
      (allocation.offset & (granularity() - 1)) != 0 ||
      nodes_[n].offset() != allocation.offset >> shift_) {
    return Status(ErrorCode::kInvalidArgument, "not a live allocation (node " + std::to_string(n) +
                                                   ", offset " + std::to_string(allocation.offset) +
                                                   ")");
  }
  return Status::Ok();
}

// Payload, all varints:
//   shift, capacity_units, slot_count, last generation handed out,
//   region_count, then per region in address order: slot << 1 | used, size,
//     and for a used region its generation,
//   bin_count, then per non-empty bin, ascending: bin, length, slots in list order,
//   spare_count, then the spare slots in list order.
std::string OffsetAllocator::Serialise() const {
  std::string payload;
  payload.reserve(16 + nodes_.size() * 10);
  PutVarint(payload, shift_);
  PutVarint(payload, capacity_units_);
  PutVarint(payload, nodes_.size());
  PutVarint(payload, last_generation_);

  PutVarint(payload, allocations_ + free_regions_);
  for (uint32_t n = first_region_; n != kNone; n = nodes_[n].next) {
    const bool used = nodes_[n].state() == State::kUsed;
    PutVarint(payload, (uint64_t{n} << 1) | (used ? 1 : 0));
    PutVarint(payload, RegionSize(n));
    if (used) PutVarint(payload, nodes_[n].generation());
  }

  uint64_t bins = 0;
  for (uint8_t map : bin_maps_) bins += static_cast<uint64_t>(std::popcount(map));
  PutVarint(payload, bins);
  for (uint32_t b = 0; b < kNumBins; ++b) {
    if (bin_heads_[b] == kNone) continue;
    uint64_t length = 0;
    for (uint32_t n = bin_heads_[b]; n != kNone; n = nodes_[n].bin_next) ++length;
    PutVarint(payload, b);
    PutVarint(payload, length);
    for (uint32_t n = bin_heads_[b]; n != kNone; n = nodes_[n].bin_next) PutVarint(payload, n);
  }

  PutVarint(payload, nodes_.size() - allocations_ - free_regions_);
  for (uint32_t n = spare_head_; n != kNone; n = nodes_[n].bin_next) PutVarint(payload, n);

  std::string out(kMagic, sizeof(kMagic));
  PutFixed16(out, kVersion);
  PutFixed16(out, 0);
  PutFixed64(out, payload.size());
  out += payload;
  PutFixed64(out, Checksum(out));
  return out;
}

StatusOr<OffsetAllocator> OffsetAllocator::Restore(std::string_view blob) {
  if (blob.size() < kHeaderBytes + kChecksumBytes) return Corrupt("truncated header");
  if (blob.substr(0, sizeof(kMagic)) != std::string_view(kMagic, sizeof(kMagic))) {
    return Corrupt("bad magic");
  }
  if (DecodeFixed64(blob.data() + 8) != blob.size() - kHeaderBytes - kChecksumBytes) {
    return Corrupt("length mismatch (truncated or padded)");
  }
  const size_t body_end = blob.size() - kChecksumBytes;
  if (Checksum(blob.substr(0, body_end)) != DecodeFixed64(blob.data() + body_end)) {
    return Corrupt("checksum mismatch");
  }
  if (const uint64_t version = DecodeFixed16(blob.data() + 4); version != kVersion) {
    return Status(ErrorCode::kUnsupported,
                  "offset allocator blob version " + std::to_string(version) +
                      " is not supported (this build reads version " +
                      std::to_string(kVersion) + ")");
  }

  ByteReader in(blob.substr(kHeaderBytes, body_end - kHeaderBytes));
  OffsetAllocator a;
  uint64_t shift = 0;
  uint64_t slots = 0;
  uint64_t last_generation = 0;
  if (!in.Varint(&shift) || !in.Varint(&a.capacity_units_) || !in.Varint(&slots) ||
      !in.Varint(&last_generation)) {
    return Corrupt("truncated header fields");
  }
  if (last_generation > ~uint32_t{0}) return Corrupt("bad generation counter");
  a.last_generation_ = static_cast<uint32_t>(last_generation);
  if (shift > kMaxShift || a.capacity_units_ == 0 || a.capacity_units_ > kMaxUnits ||
      (a.capacity_units_ << shift) >> shift != a.capacity_units_) {
    return Corrupt("bad granularity or capacity");
  }
  a.shift_ = static_cast<uint32_t>(shift);
  // Every slot costs at least one byte (in the region or the spare list):
  // bound before allocating.
  if (slots == 0 || slots >= kNone || slots > in.remaining()) return Corrupt("bad slot count");
  a.nodes_.resize(slots);

  uint64_t regions = 0;
  if (!in.Varint(&regions) || regions == 0 || regions > slots) return Corrupt("bad region count");
  uint64_t offset = 0;
  uint32_t prev = kNone;
  uint64_t free_regions = 0;
  for (uint64_t i = 0; i < regions; ++i) {
    uint64_t tag = 0;
    uint64_t size = 0;
    if (!in.Varint(&tag) || !in.Varint(&size)) return Corrupt("truncated region list");
    const uint64_t n = tag >> 1;
    if (n >= slots || a.nodes_[n].state() != State::kSpare) return Corrupt("bad region slot");
    if (size == 0 || size > a.capacity_units_ - offset) return Corrupt("bad region size");
    Node& x = a.nodes_[n];
    x.set_offset(offset);
    x.prev = prev;
    if (prev == kNone) {
      a.first_region_ = static_cast<uint32_t>(n);
    } else {
      a.nodes_[prev].next = static_cast<uint32_t>(n);
    }
    if ((tag & 1) != 0) {
      uint64_t generation = 0;
      if (!in.Varint(&generation) || generation > ~uint32_t{0}) return Corrupt("bad generation");
      x.set_state(State::kUsed);
      x.bin_prev = static_cast<uint32_t>(generation);
      a.used_units_ += size;
      ++a.allocations_;
    } else {
      x.set_state(State::kFree);
      ++free_regions;
    }
    offset += size;
    prev = static_cast<uint32_t>(n);
  }
  if (offset != a.capacity_units_) return Corrupt("regions do not cover the range");

  // Bin lists, rebuilt in their saved order so later choices are identical.
  std::vector<bool> listed(slots, false);
  uint64_t bins = 0;
  if (!in.Varint(&bins) || bins > kNumBins) return Corrupt("bad bin count");
  uint64_t last_bin = 0;
  for (uint64_t i = 0; i < bins; ++i) {
    uint64_t b = 0;
    uint64_t length = 0;
    if (!in.Varint(&b) || !in.Varint(&length)) return Corrupt("truncated bin list");
    if (b >= kNumBins || (i > 0 && b <= last_bin) || length == 0 || length > free_regions) {
      return Corrupt("bad bin header");
    }
    last_bin = b;
    uint32_t tail = kNone;
    for (uint64_t j = 0; j < length; ++j) {
      uint64_t n = 0;
      if (!in.Varint(&n) || n >= slots || listed[n] || a.nodes_[n].state() != State::kFree ||
          FloorBin(a.RegionSize(static_cast<uint32_t>(n))) != b) {
        return Corrupt("bad bin entry");
      }
      listed[n] = true;
      Node& x = a.nodes_[n];
      x.bin_prev = tail;
      if (tail == kNone) {
        a.bin_heads_[b] = static_cast<uint32_t>(n);
      } else {
        a.nodes_[tail].bin_next = static_cast<uint32_t>(n);
      }
      tail = static_cast<uint32_t>(n);
      ++a.free_regions_;
    }
    a.bin_maps_[b >> kMantissaBits] |= static_cast<uint8_t>(1u << (b & (kBinsPerLevel - 1)));
    a.level_map_ |= uint64_t{1} << (b >> kMantissaBits);
  }
  if (a.free_regions_ != free_regions) return Corrupt("free region missing from bins");

  uint64_t spares = 0;
  if (!in.Varint(&spares) || spares != slots - regions) return Corrupt("bad spare count");
  uint32_t tail = kNone;
  for (uint64_t i = 0; i < spares; ++i) {
    uint64_t n = 0;
    if (!in.Varint(&n) || n >= slots || listed[n] || a.nodes_[n].state() != State::kSpare) {
      return Corrupt("bad spare slot");
    }
    listed[n] = true;
    if (tail == kNone) {
      a.spare_head_ = static_cast<uint32_t>(n);
    } else {
      a.nodes_[tail].bin_next = static_cast<uint32_t>(n);
    }
    tail = static_cast<uint32_t>(n);
  }
  if (in.remaining() != 0) return Corrupt("trailing bytes");
  if (Status s = a.Validate(); !s.ok()) return Corrupt(s.message());
  return a;
}

Status OffsetAllocator::Validate() const {
  const auto broken = [](const char* what) {
    return Status(ErrorCode::kInternal, std::string("offset allocator invariant: ") + what);
  };
  const uint64_t slots = nodes_.size();
  if (slots == 0 || slots >= kNone) return broken("slot count");
  if (capacity_units_ == 0 || capacity_units_ > kMaxUnits || shift_ > kMaxShift) {
    return broken("capacity or granularity");
  }

  // Address list: tiles [0, capacity) with positive sizes; no adjacent frees.
  uint64_t live = 0;
  uint64_t used = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t offset = 0;
  uint32_t prev = kNone;
  bool prev_free = false;
  for (uint32_t n = first_region_; n != kNone; n = nodes_[n].next) {
    if (n >= slots || ++live > slots) return broken("address list leaves the table or loops");
    const Node& x = nodes_[n];
    if (x.state() == State::kSpare || x.prev != prev) return broken("address list links");
    if (x.next != kNone && x.next >= slots) return broken("address list leaves the table");
    const uint64_t end = x.next == kNone ? capacity_units_ : nodes_[x.next].offset();
    if (x.offset() != offset || end <= offset || end > capacity_units_) {
      return broken("regions do not tile the range");
    }
    if (x.state() == State::kFree) {
      if (prev_free) return broken("adjacent free regions");
      ++frees;
    } else {
      ++allocations;
      used += end - offset;
    }
    prev_free = x.state() == State::kFree;
    offset = end;
    prev = n;
  }
  if (offset != capacity_units_) return broken("regions do not tile the range");
  uint64_t region_slots = 0;
  for (const Node& x : nodes_.span()) region_slots += x.state() != State::kSpare ? 1 : 0;
  if (region_slots != live) return broken("a region slot is off the address list");

  // Bins: bitmaps mirror the lists; each free region is in the bin of its size.
  if ((level_map_ >> kNumLevels) != 0) return broken("level map");
  for (uint32_t level = 0; level < kNumLevels; ++level) {
    if (((level_map_ >> level) & 1) != (bin_maps_[level] != 0 ? 1u : 0u)) {
      return broken("level map");
    }
  }
  uint64_t binned = 0;
  for (uint32_t b = 0; b < kNumBins; ++b) {
    const bool bit = ((bin_maps_[b >> kMantissaBits] >> (b & (kBinsPerLevel - 1))) & 1) != 0;
    if (bit != (bin_heads_[b] != kNone)) return broken("bin map");
    uint32_t bin_prev = kNone;
    for (uint32_t n = bin_heads_[b]; n != kNone; n = nodes_[n].bin_next) {
      if (n >= slots || ++binned > frees) return broken("bin list leaves the table or loops");
      const Node& x = nodes_[n];
      if (x.state() != State::kFree || x.bin_prev != bin_prev ||
          FloorBin(RegionSize(n)) != b) {
        return broken("bin list entry");
      }
      bin_prev = n;
    }
  }
  if (binned != frees) return broken("free region missing from bins");

  uint64_t spares = 0;
  for (uint32_t n = spare_head_; n != kNone; n = nodes_[n].bin_next) {
    if (n >= slots || ++spares > slots - live)
      return broken("spare list leaves the table or loops");
    if (nodes_[n].state() != State::kSpare) return broken("spare list entry");
  }
  if (spares != slots - live) return broken("spare slot missing from the spare list");

  if (used_units_ != used || allocations_ != allocations || free_regions_ != frees) {
    return broken("counters");
  }
  return Status::Ok();
}

}  // namespace crescent::cache
