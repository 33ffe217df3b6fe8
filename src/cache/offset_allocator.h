// OffsetAllocator: an O(1) two-level segregated-fit (TLSF-style) allocator of
// offsets inside one memory segment. The master uses one per segment to place
// object replicas; it never touches the segment's bytes.
//
// Invariants (checked by Validate(), and by Restore() on every blob):
//  - The range [0, capacity) is tiled exactly by regions, each free or used,
//    kept in a list in address order. A region's size is not stored: it is the
//    distance to the next region's offset (or to capacity for the last), so
//    sizes and offsets can never disagree.
//  - No two free regions are adjacent: Free() merges with free neighbours at
//    once, so a free region is always maximal.
//  - Every free region is in exactly one bin list, the bin FloorBin(size); the
//    bitmaps have a bit set exactly for the non-empty bins.
//  - Every node slot is a region (free or used) or on the free-slot list. An
//    Allocation names its slot and a generation drawn from one allocator-wide
//    32-bit counter (never 0) each time a region is handed out, so a stale or
//    forged handle is refused by Free() instead of releasing someone else's
//    region (a stale handle could alias only once the counter has wrapped and
//    handed its slot the very same value again). Only used regions keep a
//    generation, in the field a free region uses for its bin link.
//  - Capacity is at most 2^62 - 1 granules (the node keeps its state in the
//    top two bits of the offset word); Create() refuses more.
//  - All offsets and sizes are whole multiples of the granularity; internally
//    everything is counted in granules ("units").
//
// Bin math (sizes in units). A size is binned like a tiny float with a 3-bit
// mantissa: sizes 0..7 get bins 0..7 exactly; a larger size with top bit e
// (e = floor(log2 size) >= 3) gets bin ((e - 2) << 3) | m, where m is the 3
// bits below the top bit. Bin b therefore covers [BinMin(b), BinMin(b + 1)):
// the first level (b >> 3) is a power-of-two class and the second level (b & 7)
// splits it into 8 equal parts, so a bin spans at most 1/8 of its lower bound.
// 496 bins cover every 64-bit size: a 64-bit map marks the non-empty first
// levels, and one 8-bit map per first level marks its non-empty bins.
//  - Free() files a region under FloorBin(size) (rounding down).
//  - Allocate(n) looks for the first non-empty bin >= CeilBin(n) (rounding up):
//    every region there is >= n, so the head of its list fits ("good fit") and
//    two count-trailing-zeros find it. Only when no such bin exists does it
//    also look at up to kFallbackScan regions in FloorBin(n), whose sizes
//    straddle n; this lets the last exact-size hole of a full segment be used.
//    Allocation fails with kNoSpace only if no region >= BinMin(CeilBin(n))
//    exists and none of those scanned fits.
//
// Not thread-safe: the owner (the master's segment table) serialises calls.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cache/node_array.h"
#include "crescent/status.h"

namespace crescent::cache {

namespace offset_bins {

inline constexpr uint32_t kMantissaBits = 3;
inline constexpr uint32_t kBinsPerLevel = 1u << kMantissaBits;    // second-level bins
inline constexpr uint32_t kNumBins = 496;                         // FloorBin(~0) + 1
inline constexpr uint32_t kNumLevels = kNumBins / kBinsPerLevel;  // first-level classes

// The bin a region of `size` units is filed under: BinMin(b) <= size < BinMin(b + 1).
constexpr uint32_t FloorBin(uint64_t size) {
  if (size < kBinsPerLevel) return static_cast<uint32_t>(size);
  const uint32_t e = 63u - static_cast<uint32_t>(std::countl_zero(size));
  const uint32_t m = static_cast<uint32_t>(size >> (e - kMantissaBits)) & (kBinsPerLevel - 1);
  return ((e - kMantissaBits + 1) << kMantissaBits) | m;
}

// The smallest size (in units) filed under bin `b` (b < kNumBins).
constexpr uint64_t BinMin(uint32_t b) {
  if (b < kBinsPerLevel) return b;
  const uint32_t e = (b >> kMantissaBits) + kMantissaBits - 1;
  const uint64_t m = b & (kBinsPerLevel - 1);
  return (kBinsPerLevel | m) << (e - kMantissaBits);
}

// The lowest bin all of whose regions hold `size` units; may be kNumBins
// (no bin can guarantee the fit).
constexpr uint32_t CeilBin(uint64_t size) {
  const uint32_t b = FloorBin(size);
  return BinMin(b) < size ? b + 1 : b;
}

static_assert(FloorBin(~uint64_t{0}) + 1 == kNumBins);

}  // namespace offset_bins

// A live allocation. Keep all three fields: Free() needs the node and
// generation to find and authenticate it, and checks the offset as well.
struct Allocation {
  uint64_t offset = 0;      // bytes from the segment start; a multiple of the granularity
  uint32_t node = 0;        // handle: the allocator's node slot
  uint32_t generation = 0;  // the slot's generation when it was handed out

  friend bool operator==(const Allocation&, const Allocation&) = default;
};

struct OffsetAllocatorOptions {
  // Power of two, 1 .. 2^32. Every offset is a multiple of it and every
  // request is rounded up to a multiple of it.
  uint64_t granularity = 64;
};

struct OffsetAllocatorStats {
  uint64_t capacity_bytes = 0;      // managed bytes: size rounded down to the granularity
  uint64_t used_bytes = 0;          // sum of allocation sizes after rounding up
  uint64_t free_bytes = 0;          // capacity_bytes - used_bytes
  uint64_t largest_free_bytes = 0;  // exact size of the largest free region
  uint64_t allocations = 0;         // live allocations
  uint64_t free_regions = 0;        // maximal free regions (1 when empty, 0 when full)
  uint64_t node_slots = 0;          // node table length: memory is node_slots * 24 bytes
};

class OffsetAllocator {
 public:
  // How many regions of FloorBin(n) Allocate(n) inspects when no bin can
  // guarantee a fit. A constant, so allocation stays O(1).
  static constexpr uint32_t kFallbackScan = 32;
  // The most granules one allocator manages (2^62 - 1): with the default 64-byte
  // granularity any 64-bit size fits; only granularities of 1 or 2 bytes can
  // reach it, at 4 or 8 EiB.
  static constexpr uint64_t kMaxUnits = (uint64_t{1} << 62) - 1;

  // Manages [0, size rounded down to the granularity). kInvalidArgument if the
  // granularity is not a power of two in range, the range holds no granule, or
  // it holds more than kMaxUnits granules.
  static StatusOr<OffsetAllocator> Create(uint64_t size, OffsetAllocatorOptions options = {});

  // Reserves `size` bytes rounded up to the granularity. kInvalidSize for 0;
  // kNoSpace if no free region fits (see the bin math above) or, in theory,
  // when the node table already has 2^32 - 1 slots.
  StatusOr<Allocation> Allocate(uint64_t size);

  // Releases a live allocation and merges it with its free neighbours.
  // kInvalidArgument (and no change) if `allocation` is not live: freed
  // already, never handed out by this allocator, or a stale copy of a handle
  // whose slot has since been reused.
  Status Free(const Allocation& allocation);

  // Bytes reserved for a live allocation (its request rounded up).
  StatusOr<uint64_t> SizeOf(const Allocation& allocation) const;

  uint64_t capacity() const { return capacity_units_ << shift_; }
  uint64_t granularity() const { return uint64_t{1} << shift_; }
  uint64_t used_bytes() const { return used_units_ << shift_; }
  uint64_t free_bytes() const { return (capacity_units_ - used_units_) << shift_; }
  uint64_t allocation_count() const { return allocations_; }

  // O(1) except largest_free_bytes, which is exact and costs one scan of the
  // highest non-empty bin (stopping early at a region of the bin's top size).
  OffsetAllocatorStats Stats() const;

  // The whole state, including node slots, generations and list orders, in a
  // versioned little-endian form: "COFA", version (2), payload length, varint
  // payload, XXH3-64 of everything before it. About 6-10 bytes per region.
  std::string Serialise() const;

  // Rebuilds exactly the state that produced `blob`: handles issued before
  // Serialise() stay valid and later operations behave identically.
  // kCorruptData for anything malformed, truncated or inconsistent (never a
  // crash); kUnsupported for an intact blob of another version (version 1,
  // with per-slot generations, is not read).
  static StatusOr<OffsetAllocator> Restore(std::string_view blob);

  // One live allocation for Rebuild(): its handle, and the bytes it was
  // requested for (rounded up to the granularity as Allocate() does).
  struct UsedRegion {
    Allocation allocation;
    uint64_t bytes = 0;
  };
  // An allocator of `size` bytes in which exactly `used` are live, with those
  // very handles (node slots, generations, offsets), and everything else free:
  // what a restarted master rebuilds from the replicas it restored. Later
  // allocations hand out generations above the highest one given. The order of
  // `used` does not matter. kCorruptData (naming the first culprit) if two
  // overlap or share a node slot, one lies outside the range or off the
  // granularity, has no bytes, or has generation 0.
  static StatusOr<OffsetAllocator> Rebuild(uint64_t size, OffsetAllocatorOptions options,
                                           std::vector<UsedRegion> used);

  // Checks every invariant above in O(slots); kInternal naming the first
  // broken one. For tests and for Restore().
  Status Validate() const;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};

  enum class State : uint8_t { kSpare = 0, kFree = 1, kUsed = 2 };

  // 24 bytes. Regions link to their address neighbours; free regions also to
  // their bin neighbours (their bin is FloorBin of their size, not stored). A
  // used region keeps its generation where a free one keeps bin_prev; a spare
  // slot (no region) uses bin_next for the free-slot list.
  struct Node {
    uint64_t word = 0;  // offset in units (low 62 bits) | state << 62
    uint32_t prev = kNone;
    uint32_t next = kNone;
    uint32_t bin_prev = kNone;  // free: bin list; used: generation; spare: unused
    uint32_t bin_next = kNone;  // free: bin list; spare: free-slot list

    uint64_t offset() const { return word & kMaxUnits; }
    State state() const { return static_cast<State>(word >> 62); }
    void set_offset(uint64_t units) { word = (word & ~kMaxUnits) | units; }
    void set_state(State s) { word = (word & kMaxUnits) | (uint64_t{static_cast<uint8_t>(s)} << 62); }
    uint32_t generation() const { return bin_prev; }
  };
  static_assert(sizeof(Node) == 24);

  OffsetAllocator() { bin_heads_.fill(kNone); }

  uint64_t RegionSize(uint32_t n) const {
    const uint32_t next = nodes_[n].next;
    return (next == kNone ? capacity_units_ : nodes_[next].offset()) - nodes_[n].offset();
  }
  uint32_t FindFit(uint64_t units) const;
  uint32_t NewSlot();
  void ReleaseSlot(uint32_t n);
  // Merges region `gone` into its left neighbour `keep`, freeing gone's slot.
  void Absorb(uint32_t keep, uint32_t gone);
  void InsertFree(uint32_t n);
  void RemoveFree(uint32_t n);
  Status CheckLive(const Allocation& allocation) const;

  uint32_t shift_ = 0;  // log2(granularity)
  uint64_t capacity_units_ = 0;
  uint64_t used_units_ = 0;
  uint64_t allocations_ = 0;
  uint64_t free_regions_ = 0;
  uint32_t last_generation_ = 0;   // the generation handed out last (0: none yet)
  uint32_t first_region_ = kNone;  // the region at offset 0
  uint32_t spare_head_ = kNone;    // free-slot list
  uint64_t level_map_ = 0;         // bit l: some bin of first level l is non-empty
  std::array<uint8_t, offset_bins::kNumLevels> bin_maps_{};  // bit s: bin (l<<3)|s non-empty
  std::array<uint32_t, offset_bins::kNumBins> bin_heads_;    // kNone when empty
  NodeArray<Node> nodes_;  // grows without copying once big: no pause at a doubling
};

}  // namespace crescent::cache
