#include "cache/offset_allocator.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "common/hash.h"
#include "common/hex_for_test.h"

namespace crescent::cache {
namespace {

using offset_bins::BinMin;
using offset_bins::CeilBin;
using offset_bins::FloorBin;
using offset_bins::kNumBins;

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

OffsetAllocator MustCreate(uint64_t size, uint64_t granularity = 64) {
  auto a = OffsetAllocator::Create(size, {.granularity = granularity});
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return std::move(a).value();
}

Allocation MustAllocate(OffsetAllocator& a, uint64_t size) {
  auto r = a.Allocate(size);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Allocation{};
}

std::vector<Allocation> AllocateMany(OffsetAllocator& a, int count, uint64_t size) {
  std::vector<Allocation> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) out.push_back(MustAllocate(a, size));
  return out;
}

// Rewrites the trailing checksum, so a test can hand Restore() a blob whose
// payload is wrong but whose checksum is right.
void Reseal(std::string& blob) {
  const size_t body = blob.size() - 8;
  const uint64_t sum =
      HashBytes(std::span(reinterpret_cast<const unsigned char*>(blob.data()), body));
  for (int i = 0; i < 8; ++i) blob[body + i] = static_cast<char>((sum >> (8 * i)) & 0xFF);
}

TEST(OffsetBinsTest, FloorAndCeilBracketEverySize) {
  std::vector<uint64_t> sizes;
  for (uint64_t s = 1; s < 5000; ++s) sizes.push_back(s);
  for (int e = 3; e < 64; ++e) {
    const uint64_t p = uint64_t{1} << e;
    for (uint64_t d : {p - 1, p, p + 1, p + p / 16, p + p / 8 - 1}) sizes.push_back(d);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) sizes.push_back(rng() >> (rng() % 64));
  sizes.push_back(~uint64_t{0});
  for (uint64_t s : sizes) {
    if (s == 0) continue;
    const uint32_t f = FloorBin(s);
    ASSERT_LT(f, kNumBins);
    EXPECT_LE(BinMin(f), s);
    if (f + 1 < kNumBins) {
      EXPECT_LT(s, BinMin(f + 1)) << s;
    }
    const uint32_t c = CeilBin(s);
    if (c < kNumBins) {
      EXPECT_GE(BinMin(c), s);
    }
    EXPECT_LT(BinMin(c - 1), s);  // c is the lowest such bin
  }
}

TEST(OffsetBinsTest, BinsGrowByLessThanAnEighth) {
  for (uint32_t b = 0; b + 1 < kNumBins; ++b) {
    ASSERT_LT(BinMin(b), BinMin(b + 1));
    if (b >= 8) {
      EXPECT_LE(BinMin(b + 1) - BinMin(b), BinMin(b) / 8);
    }
    EXPECT_EQ(FloorBin(BinMin(b)), b);
  }
}

TEST(OffsetAllocatorTest, CreateValidatesOptions) {
  EXPECT_EQ(OffsetAllocator::Create(MiB, {.granularity = 0}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OffsetAllocator::Create(MiB, {.granularity = 96}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OffsetAllocator::Create(MiB, {.granularity = uint64_t{1} << 33}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OffsetAllocator::Create(63, {.granularity = 64}).status().code(),
            ErrorCode::kInvalidArgument);
  // At most 2^62 - 1 granules: only 1- and 2-byte granules can exceed it.
  EXPECT_EQ(OffsetAllocator::Create(~uint64_t{0}, {.granularity = 1}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OffsetAllocator::Create(~uint64_t{0}, {.granularity = 2}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OffsetAllocator::Create(OffsetAllocator::kMaxUnits + 1, {.granularity = 1})
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(OffsetAllocator::Create(OffsetAllocator::kMaxUnits, {.granularity = 1}).ok());
  OffsetAllocator a = MustCreate(1000);  // the 40-byte tail below one granule is not managed
  EXPECT_EQ(a.capacity(), 960u);
  EXPECT_EQ(a.granularity(), 64u);
  EXPECT_TRUE(a.Validate().ok());
}

TEST(OffsetAllocatorTest, AllocatesAndFrees) {
  OffsetAllocator a = MustCreate(MiB);
  EXPECT_EQ(a.Allocate(0).status().code(), ErrorCode::kInvalidSize);

  Allocation x = MustAllocate(a, 100);
  Allocation y = MustAllocate(a, 64);
  EXPECT_EQ(x.offset, 0u);
  EXPECT_EQ(y.offset, 128u);
  EXPECT_EQ(*a.SizeOf(x), 128u);
  EXPECT_EQ(*a.SizeOf(y), 64u);

  OffsetAllocatorStats s = a.Stats();
  EXPECT_EQ(s.capacity_bytes, MiB);
  EXPECT_EQ(s.used_bytes, 192u);
  EXPECT_EQ(s.free_bytes, MiB - 192);
  EXPECT_EQ(s.largest_free_bytes, MiB - 192);
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.free_regions, 1u);

  ASSERT_TRUE(a.Free(x).ok());
  EXPECT_EQ(a.Stats().free_regions, 2u);
  ASSERT_TRUE(a.Free(y).ok());
  s = a.Stats();
  EXPECT_EQ(s.used_bytes, 0u);
  EXPECT_EQ(s.allocations, 0u);
  EXPECT_EQ(s.free_regions, 1u);
  EXPECT_EQ(s.largest_free_bytes, MiB);
  EXPECT_TRUE(a.Validate().ok());
}

TEST(OffsetAllocatorTest, OffsetsAndSizesFollowTheGranularity) {
  for (uint64_t g : {uint64_t{1}, uint64_t{64}, uint64_t{4096}, 2 * MiB}) {
    OffsetAllocator a = MustCreate(256 * MiB, g);
    std::mt19937_64 rng(g);
    uint64_t used = 0;
    for (int i = 0; i < 60; ++i) {
      const uint64_t size = 1 + rng() % (3 * MiB);
      auto r = a.Allocate(size);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->offset % g, 0u);
      const uint64_t rounded = (size + g - 1) / g * g;
      EXPECT_EQ(*a.SizeOf(*r), rounded);
      used += rounded;
    }
    EXPECT_EQ(a.used_bytes(), used);
    EXPECT_TRUE(a.Validate().ok());
  }
}

TEST(OffsetAllocatorTest, FillsExactlyThenRefusesThenReusesAHole) {
  // 17 granules is not a bin boundary, so the final hole is found only by the
  // bounded scan of its floor bin; the fill must still be exact.
  constexpr uint64_t kObject = 17 * 64;
  OffsetAllocator a = MustCreate(100 * kObject);
  std::vector<Allocation> live = AllocateMany(a, 100, kObject);
  EXPECT_EQ(a.free_bytes(), 0u);
  EXPECT_EQ(a.Stats().free_regions, 0u);
  EXPECT_EQ(a.Allocate(1).status().code(), ErrorCode::kNoSpace);

  ASSERT_TRUE(a.Free(live[42]).ok());
  EXPECT_EQ(a.Allocate(kObject + 1).status().code(), ErrorCode::kNoSpace);
  Allocation again = MustAllocate(a, kObject);
  EXPECT_EQ(again.offset, live[42].offset);
  EXPECT_EQ(a.Allocate(1).status().code(), ErrorCode::kNoSpace);
  EXPECT_TRUE(a.Validate().ok());
}

TEST(OffsetAllocatorTest, OversizedRequestsFailWithoutOverflow) {
  OffsetAllocator a = MustCreate(MiB);
  EXPECT_EQ(a.Allocate(MiB + 1).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(a.Allocate(~uint64_t{0}).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(a.Allocate(~uint64_t{0} - 64).status().code(), ErrorCode::kNoSpace);
  // The largest allocator (2^62 - 1 granules of 4 bytes) hands out its whole range.
  EXPECT_TRUE(MustCreate(~uint64_t{0}, 4).Allocate(~uint64_t{0} - 3).ok());
}

TEST(OffsetAllocatorTest, CoalescesNeighboursInEveryOrder) {
  constexpr int kBlocks = 5;
  constexpr uint64_t kBlock = 4 * KiB;
  std::vector<int> order(kBlocks);
  std::iota(order.begin(), order.end(), 0);
  do {
    OffsetAllocator a = MustCreate(kBlocks * kBlock);
    std::vector<Allocation> blocks = AllocateMany(a, kBlocks, kBlock);
    std::vector<bool> freed(kBlocks, false);
    for (int i : order) {
      ASSERT_TRUE(a.Free(blocks[i]).ok());
      freed[i] = true;
      uint64_t runs = 0;
      uint64_t longest = 0;
      for (int j = 0, run = 0; j < kBlocks; ++j) {
        run = freed[j] ? run + 1 : 0;
        if (run == 1) ++runs;
        longest = std::max<uint64_t>(longest, run);
      }
      const OffsetAllocatorStats s = a.Stats();
      EXPECT_EQ(s.free_regions, runs);
      EXPECT_EQ(s.largest_free_bytes, longest * kBlock);
      ASSERT_TRUE(a.Validate().ok()) << a.Validate().ToString();
    }
    EXPECT_EQ(a.Stats().largest_free_bytes, kBlocks * kBlock);
    EXPECT_EQ(a.Stats().free_regions, 1u);
    EXPECT_EQ(a.Stats().allocations, 0u);
    EXPECT_EQ(MustAllocate(a, kBlocks * kBlock).offset, 0u);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(OffsetAllocatorTest, AlternatingFreesFragmentThenHolesRefill) {
  OffsetAllocator a = MustCreate(64 * KiB);
  std::vector<Allocation> blocks = AllocateMany(a, 64, KiB);
  std::set<uint64_t> holes;
  for (int i = 0; i < 64; i += 2) {
    ASSERT_TRUE(a.Free(blocks[i]).ok());
    holes.insert(blocks[i].offset);
  }
  OffsetAllocatorStats s = a.Stats();
  EXPECT_EQ(s.free_bytes, 32 * KiB);
  EXPECT_EQ(s.largest_free_bytes, KiB);
  EXPECT_EQ(s.free_regions, 32u);
  EXPECT_EQ(a.Allocate(KiB + 1).status().code(), ErrorCode::kNoSpace);

  for (int i = 0; i < 32; ++i) {
    Allocation x = MustAllocate(a, KiB);
    EXPECT_EQ(holes.erase(x.offset), 1u) << "not a hole: " << x.offset;
  }
  s = a.Stats();
  EXPECT_EQ(s.free_bytes, 0u);
  EXPECT_EQ(s.free_regions, 0u);
  EXPECT_EQ(s.largest_free_bytes, 0u);
  EXPECT_TRUE(a.Validate().ok());
}

TEST(OffsetAllocatorTest, RejectsDoubleFreeAndBogusHandles) {
  OffsetAllocator a = MustCreate(MiB);
  Allocation x = MustAllocate(a, 4 * KiB);
  Allocation keep = MustAllocate(a, 4 * KiB);
  const std::string before = a.Serialise();

  for (Allocation bogus :
       {Allocation{x.offset, 1000000, x.generation},
        Allocation{x.offset + 64, x.node, x.generation},
        Allocation{x.offset + 1, x.node, x.generation},
        Allocation{x.offset, x.node, x.generation + 1}, Allocation{0, ~uint32_t{0}, 0}}) {
    EXPECT_EQ(a.Free(bogus).code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(a.SizeOf(bogus).status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(a.Serialise(), before);  // refused frees change nothing

  ASSERT_TRUE(a.Free(x).ok());
  EXPECT_EQ(a.Free(x).code(), ErrorCode::kInvalidArgument);

  // The slot and offset are handed out again; the stale handle must not free
  // the new owner's region.
  Allocation y = MustAllocate(a, 4 * KiB);
  ASSERT_EQ(y.node, x.node);
  ASSERT_EQ(y.offset, x.offset);
  EXPECT_EQ(a.Free(x).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(a.SizeOf(y).ok());
  EXPECT_TRUE(a.Free(y).ok());
  EXPECT_TRUE(a.Free(keep).ok());
  EXPECT_EQ(a.Stats().allocations, 0u);
  EXPECT_TRUE(a.Validate().ok());
}

// A seeded random workload: mixed sizes, frees in random order.
struct Workload {
  explicit Workload(uint64_t seed) : rng(seed) {}
  uint64_t NextSize() {
    const uint64_t kind = rng() % 20;
    if (kind < 10) return 1 + rng() % (8 * KiB);
    if (kind < 17) return 64 * KiB;
    return MiB + rng() % (3 * MiB);
  }
  std::mt19937_64 rng;
};

TEST(OffsetAllocatorTest, SerialiseRestoreContinues) {
  OffsetAllocator a = MustCreate(64 * MiB, 256);
  Workload w(11);
  std::vector<Allocation> live;
  for (int i = 0; i < 3000; ++i) {
    if (!live.empty() && w.rng() % 2 == 0) {
      const size_t k = w.rng() % live.size();
      ASSERT_TRUE(a.Free(live[k]).ok());
      live[k] = live.back();
      live.pop_back();
    } else if (auto r = a.Allocate(w.NextSize()); r.ok()) {
      live.push_back(*r);
    }
  }
  const std::string blob = a.Serialise();
  auto restored = OffsetAllocator::Restore(blob);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  OffsetAllocator& b = *restored;
  EXPECT_EQ(b.Serialise(), blob);
  EXPECT_EQ(b.granularity(), 256u);
  const OffsetAllocatorStats sa = a.Stats();
  const OffsetAllocatorStats sb = b.Stats();
  EXPECT_EQ(sb.used_bytes, sa.used_bytes);
  EXPECT_EQ(sb.largest_free_bytes, sa.largest_free_bytes);
  EXPECT_EQ(sb.allocations, sa.allocations);
  EXPECT_EQ(sb.free_regions, sa.free_regions);
  EXPECT_EQ(sb.node_slots, sa.node_slots);

  // The same operations on both give the same answers, handles included.
  for (int i = 0; i < 3000; ++i) {
    if (!live.empty() && w.rng() % 2 == 0) {
      const size_t k = w.rng() % live.size();
      ASSERT_TRUE(a.Free(live[k]).ok());
      ASSERT_TRUE(b.Free(live[k]).ok());
      live[k] = live.back();
      live.pop_back();
    } else {
      const uint64_t size = w.NextSize();
      auto ra = a.Allocate(size);
      auto rb = b.Allocate(size);
      ASSERT_EQ(ra.ok(), rb.ok());
      if (ra.ok()) {
        ASSERT_EQ(*ra, *rb);
        live.push_back(*ra);
      }
    }
  }
  EXPECT_EQ(a.Serialise(), b.Serialise());
  for (const Allocation& x : live) ASSERT_TRUE(b.Free(x).ok());
  EXPECT_EQ(b.Stats().free_regions, 1u);
  EXPECT_EQ(b.Stats().largest_free_bytes, 64 * MiB);
  EXPECT_TRUE(b.Validate().ok());
}

std::string SmallBlob() {
  OffsetAllocator a = MustCreate(MiB);
  std::vector<Allocation> xs;
  xs.reserve(12);
  for (int i = 0; i < 12; ++i) xs.push_back(MustAllocate(a, (i + 1) * KiB));
  for (int i : {1, 2, 5, 9}) EXPECT_TRUE(a.Free(xs[i]).ok());
  return a.Serialise();
}

// SmallBlob() as Serialise() wrote it before the shared codec
// (common/coding.h): a saved allocator restores, and saves to the same bytes.
TEST(OffsetAllocatorRestoreTest, TheBlobIsTheGoldenBytes) {
  const std::string golden =
      "434f4641020000003c00000000000000068080010d0c0c01100102500740040950050a600d70070f"
      "8001081190010912a00115b0010b17c0010c18a076042201012401052a01095e010c0102c514f0bc"
      "44551b65";
  EXPECT_EQ(HexForTest(SmallBlob()), golden);
  auto restored = OffsetAllocator::Restore(UnhexForTest(golden));
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(HexForTest(restored->Serialise()), golden);
}

TEST(OffsetAllocatorRestoreTest, RejectsTruncatedAndPaddedBlobs) {
  const std::string blob = SmallBlob();
  ASSERT_TRUE(OffsetAllocator::Restore(blob).ok());
  for (size_t n = 0; n < blob.size(); ++n) {
    EXPECT_EQ(OffsetAllocator::Restore(blob.substr(0, n)).status().code(), ErrorCode::kCorruptData)
        << "prefix of " << n << " bytes";
  }
  EXPECT_EQ(OffsetAllocator::Restore(blob + '\0').status().code(), ErrorCode::kCorruptData);
}

TEST(OffsetAllocatorRestoreTest, RejectsEveryFlippedByte) {
  const std::string blob = SmallBlob();
  for (size_t i = 0; i < blob.size(); ++i) {
    for (int bit : {0, 7}) {
      std::string bad = blob;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_EQ(OffsetAllocator::Restore(bad).status().code(), ErrorCode::kCorruptData)
          << "byte " << i << " bit " << bit;
    }
  }
}

TEST(OffsetAllocatorRestoreTest, UnknownVersionIsUnsupported) {
  // Version 1 (per-slot generations, 32-byte nodes) is no longer read; nor is a
  // future version.
  for (char version : {1, 3}) {
    std::string blob = SmallBlob();
    blob[4] = version;
    Reseal(blob);
    const Status s = OffsetAllocator::Restore(blob).status();
    EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
    EXPECT_NE(s.message().find("version " + std::to_string(version)), std::string::npos)
        << s.ToString();
  }
}

// With a valid checksum the parser itself must catch inconsistent content:
// every edited payload byte either restores a self-consistent allocator (a
// changed generation is legal) or is refused, and never crashes.
TEST(OffsetAllocatorRestoreTest, ResealedPayloadEditsAreCaughtByValidation) {
  const std::string blob = SmallBlob();
  int refused = 0;
  for (size_t i = 16; i + 8 < blob.size(); ++i) {
    for (int v : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
      std::string bad = blob;
      bad[i] = static_cast<char>(v);
      if (bad == blob) continue;
      Reseal(bad);
      auto r = OffsetAllocator::Restore(bad);
      if (r.ok()) {
        EXPECT_TRUE(r->Validate().ok());
      } else {
        EXPECT_EQ(r.status().code(), ErrorCode::kCorruptData);
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
}

// Random edits of a real payload (overwrites, then a cut), resealed with a
// matching length and checksum: the parser must refuse or yield a valid state.
RC_GTEST_PROP(OffsetAllocatorRestoreTest, EditedResealedPayloadNeverCrashes,
              (const std::vector<std::pair<uint16_t, uint8_t>>& edits, uint16_t cut)) {
  static const std::string kBlob = SmallBlob();
  std::string payload = kBlob.substr(16, kBlob.size() - 24);
  for (const auto& [pos, value] : edits) payload[pos % payload.size()] = static_cast<char>(value);
  payload.resize(payload.size() - cut % 4);
  std::string blob = kBlob.substr(0, 8);
  for (int i = 0; i < 8; ++i) blob.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xFF));
  blob += payload;
  blob.append(8, '\0');
  Reseal(blob);
  auto r = OffsetAllocator::Restore(blob);
  if (r.ok()) {
    RC_ASSERT(r->Validate().ok());
  } else {
    RC_ASSERT(r.status().code() == ErrorCode::kCorruptData);
  }
}

// The model: live allocations and maximal free intervals, both keyed by offset.
class Model {
 public:
  explicit Model(uint64_t capacity) : capacity_(capacity) { AddFree(0, capacity); }

  // Checks that [offset, offset + size) lies in one free interval and takes it.
  ::testing::AssertionResult Take(uint64_t offset, uint64_t size) {
    auto it = free_.upper_bound(offset);
    if (it == free_.begin()) return ::testing::AssertionFailure() << "not in a free interval";
    --it;
    const auto [start, length] = *it;
    if (offset + size > start + length || offset + size > capacity_) {
      return ::testing::AssertionFailure() << "overlaps a live allocation or the end";
    }
    RemoveFree(it);
    if (offset > start) AddFree(start, offset - start);
    if (start + length > offset + size) AddFree(offset + size, start + length - offset - size);
    used_ += size;
    return ::testing::AssertionSuccess();
  }

  void Give(uint64_t offset, uint64_t size) {
    used_ -= size;
    uint64_t start = offset;
    uint64_t end = offset + size;
    auto next = free_.lower_bound(offset);
    if (next != free_.end() && next->first == end) {
      end += next->second;
      next = RemoveFree(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        RemoveFree(prev);
      }
    }
    AddFree(start, end - start);
  }

  uint64_t used() const { return used_; }
  uint64_t free_regions() const { return free_.size(); }
  uint64_t largest() const { return lengths_.empty() ? 0 : *lengths_.rbegin(); }

 private:
  void AddFree(uint64_t offset, uint64_t length) {
    free_.emplace(offset, length);
    lengths_.insert(length);
  }
  std::map<uint64_t, uint64_t>::iterator RemoveFree(std::map<uint64_t, uint64_t>::iterator it) {
    lengths_.erase(lengths_.find(it->second));
    return free_.erase(it);
  }

  uint64_t capacity_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> free_;
  std::multiset<uint64_t> lengths_;
};

TEST(OffsetAllocatorTest, RandomisedAgainstIntervalModel) {
  constexpr uint64_t kCapacity = 64 * MiB;
  constexpr uint64_t kGranularity = 64;
  OffsetAllocator a = MustCreate(kCapacity, kGranularity);
  Model model(kCapacity);
  Workload w(20240601);
  std::vector<std::pair<Allocation, uint64_t>> live;  // handle, rounded size
  std::vector<Allocation> dead;
  int refusals = 0;
  int scanned_fits = 0;  // fits found only by the bounded scan of the floor bin

  for (int op = 0; op < 150000; ++op) {
    const uint64_t dice = w.rng() % 100;
    if (dice < 44 && !live.empty()) {
      const size_t k = w.rng() % live.size();
      const auto [x, size] = live[k];
      ASSERT_TRUE(a.Free(x).ok()) << "op " << op;
      model.Give(x.offset, size);
      dead.push_back(x);
      live[k] = live.back();
      live.pop_back();
    } else if (dice < 46 && !dead.empty()) {
      ASSERT_EQ(a.Free(dead[w.rng() % dead.size()]).code(), ErrorCode::kInvalidArgument);
    } else {
      const uint64_t size = w.NextSize();
      const uint64_t rounded = (size + kGranularity - 1) / kGranularity * kGranularity;
      const uint64_t guaranteed = BinMin(CeilBin(rounded / kGranularity)) * kGranularity;
      const bool needs_scan = model.largest() < guaranteed;
      auto r = a.Allocate(size);
      if (r.ok()) {
        scanned_fits += needs_scan ? 1 : 0;
        ASSERT_EQ(r->offset % kGranularity, 0u);
        ASSERT_TRUE(model.Take(r->offset, rounded)) << "op " << op << " offset " << r->offset;
        ASSERT_EQ(*a.SizeOf(*r), rounded);
        live.emplace_back(*r, rounded);
      } else {
        ASSERT_EQ(r.status().code(), ErrorCode::kNoSpace);
        // Good fit: refused only when no region reaches the request's ceiling bin.
        ASSERT_TRUE(needs_scan) << "op " << op;
        ++refusals;
      }
    }
    const OffsetAllocatorStats s = a.Stats();
    ASSERT_EQ(s.used_bytes, model.used());
    ASSERT_EQ(s.free_bytes, kCapacity - model.used());
    ASSERT_EQ(s.allocations, live.size());
    ASSERT_EQ(s.free_regions, model.free_regions());
    ASSERT_EQ(s.largest_free_bytes, model.largest());
    if (op % 5000 == 0) {
      ASSERT_TRUE(a.Validate().ok()) << a.Validate().ToString();
    }
    if (op % 25000 == 24999) {
      auto restored = OffsetAllocator::Restore(a.Serialise());
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      a = std::move(restored).value();
    }
  }
  EXPECT_GT(refusals, 100);  // the workload really ran the allocator full
  EXPECT_GT(scanned_fits, 0);
  for (const auto& [x, size] : live) ASSERT_TRUE(a.Free(x).ok());
  EXPECT_EQ(a.Stats().free_regions, 1u);
  EXPECT_EQ(a.Stats().largest_free_bytes, kCapacity);
  EXPECT_TRUE(a.Validate().ok());
}

// Rebuild: the state a restarted master derives from its restored replicas.
TEST(OffsetAllocatorRebuildTest, KeepsHandlesAndContinues) {
  auto orig = OffsetAllocator::Create(1 << 20, {64});
  ASSERT_TRUE(orig.ok());
  std::vector<Allocation> live;
  std::vector<OffsetAllocator::UsedRegion> used;
  for (int i = 0; i < 40; ++i) {
    auto a = orig->Allocate(1000 + i * 37);
    ASSERT_TRUE(a.ok());
    live.push_back(*a);
  }
  // Free every third, so the rebuilt state has gaps between used regions.
  for (size_t i = 0; i < live.size(); i += 3) ASSERT_TRUE(orig->Free(live[i]).ok());
  for (size_t i = 0; i < live.size(); ++i) {
    if (i % 3 == 0) continue;
    used.push_back({live[i], 1000 + i * 37});
  }
  std::reverse(used.begin(), used.end());  // order does not matter
  auto rebuilt = OffsetAllocator::Rebuild(1 << 20, {64}, used);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_TRUE(rebuilt->Validate().ok());
  EXPECT_EQ(rebuilt->used_bytes(), orig->used_bytes());
  EXPECT_EQ(rebuilt->allocation_count(), orig->allocation_count());
  EXPECT_EQ(rebuilt->Stats().free_regions, orig->Stats().free_regions);
  // Every restored handle frees exactly its region; a freed one is not live.
  for (const auto& u : used) {
    auto size = rebuilt->SizeOf(u.allocation);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(*size, (u.bytes + 63) / 64 * 64);
  }
  EXPECT_FALSE(rebuilt->SizeOf(live[0]).ok());
  // New allocations never overlap restored ones, and their generations are new.
  std::vector<Allocation> fresh;
  for (;;) {
    auto a = rebuilt->Allocate(4096);
    if (!a.ok()) break;
    for (const auto& u : used) {
      EXPECT_NE(a->generation, u.allocation.generation);
      const uint64_t end = u.allocation.offset + (u.bytes + 63) / 64 * 64;
      EXPECT_TRUE(a->offset + 4096 <= u.allocation.offset || a->offset >= end);
    }
    fresh.push_back(*a);
  }
  EXPECT_FALSE(fresh.empty());
  for (const auto& u : used) ASSERT_TRUE(rebuilt->Free(u.allocation).ok());
  for (const auto& a : fresh) ASSERT_TRUE(rebuilt->Free(a).ok());
  EXPECT_EQ(rebuilt->used_bytes(), 0u);
  EXPECT_EQ(rebuilt->Stats().free_regions, 1u);
  EXPECT_TRUE(rebuilt->Validate().ok());
}

// Past 1 MiB of nodes (~44K regions) the node table lives in a mapping it
// grows inside (node_array.h) instead of copying at each doubling: an
// allocator that crosses it keeps every handle, serialises, restores and
// rebuilds as a small one does, and its moved-to owner continues.
TEST(OffsetAllocatorTest, GrowsPastTheMappedNodeTableAndKeepsEveryHandle) {
  constexpr int kCount = 200'000;
  OffsetAllocator grown = MustCreate(uint64_t{kCount} * 4 * KiB, 64);
  std::vector<Allocation> live = AllocateMany(grown, kCount, 4 * KiB);
  ASSERT_EQ(grown.allocation_count(), static_cast<uint64_t>(kCount));
  EXPECT_GE(grown.Stats().node_slots, static_cast<uint64_t>(kCount));
  std::vector<OffsetAllocator::UsedRegion> used;
  for (size_t i = 0; i < live.size(); ++i) {
    if (i % 2 == 0) {
      ASSERT_TRUE(grown.Free(live[i]).ok());
    } else {
      used.push_back({live[i], 4 * KiB});
    }
  }
  ASSERT_TRUE(grown.Validate().ok());
  OffsetAllocator a = std::move(grown);  // the mapped table moves with it
  for (const auto& u : used) ASSERT_EQ(*a.SizeOf(u.allocation), 4 * KiB);

  auto restored = OffsetAllocator::Restore(a.Serialise());
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->Serialise(), a.Serialise());
  auto rebuilt = OffsetAllocator::Rebuild(uint64_t{kCount} * 4 * KiB, {64}, used);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  for (OffsetAllocator* x : {&a, &*restored, &*rebuilt}) {
    EXPECT_EQ(x->used_bytes(), used.size() * 4 * KiB);
    // The holes refill exactly, then the allocator is full.
    for (int i = 0; i < kCount / 2; ++i) ASSERT_TRUE(x->Allocate(4 * KiB).ok()) << i;
    EXPECT_FALSE(x->Allocate(64).ok());
    for (const auto& u : used) ASSERT_TRUE(x->Free(u.allocation).ok());
    EXPECT_TRUE(x->Validate().ok());
  }
}

TEST(OffsetAllocatorRebuildTest, EmptyAndFull) {
  auto empty = OffsetAllocator::Rebuild(4096, {64}, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->free_bytes(), 4096u);
  auto full = OffsetAllocator::Rebuild(4096, {64}, {{{0, 5, 9}, 4096}});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->free_bytes(), 0u);
  EXPECT_FALSE(full->Allocate(64).ok());
  ASSERT_TRUE(full->Free({0, 5, 9}).ok());
  EXPECT_TRUE(full->Validate().ok());
}

TEST(OffsetAllocatorRebuildTest, RefusesInconsistentRegions) {
  auto refused = [](std::vector<OffsetAllocator::UsedRegion> used) {
    auto r = OffsetAllocator::Rebuild(4096, {64}, std::move(used));
    return !r.ok() && r.status().code() == ErrorCode::kCorruptData;
  };
  EXPECT_TRUE(refused({{{0, 1, 1}, 128}, {{64, 2, 2}, 64}}));    // overlap
  EXPECT_TRUE(refused({{{0, 1, 1}, 64}, {{128, 1, 2}, 64}}));    // one node twice
  EXPECT_TRUE(refused({{{4032, 1, 1}, 128}}));                   // past the end
  EXPECT_TRUE(refused({{{8192, 1, 1}, 64}}));                    // outside
  EXPECT_TRUE(refused({{{32, 1, 1}, 64}}));                      // off the granularity
  EXPECT_TRUE(refused({{{0, 1, 0}, 64}}));                       // generation 0
  EXPECT_TRUE(refused({{{0, 1, 1}, 0}}));                        // no bytes
  EXPECT_TRUE(refused({{{0, ~uint32_t{0}, 1}, 64}}));            // no such node
}

}  // namespace
}  // namespace crescent::cache
