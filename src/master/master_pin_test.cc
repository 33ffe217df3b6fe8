// Pins: a hard-pinned object is never evicted (but can be removed); a
// soft-pinned one is evicted only after every unpinned candidate, in LRU order
// among soft pins, until its TTL runs out, after which it competes like any
// other object.
#include <limits>

#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

constexpr uint64_t kPage = 4096;

class PinTest : public MasterTest {
 protected:
  // Nothing heartbeats here, and the clock moves past leases and TTLs.
  PinTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }

  static PutConfig Hard() {
    PutConfig c;
    c.hard_pin = true;
    return c;
  }
  static PutConfig Soft(int64_t ttl_ms) {
    PutConfig c;
    c.soft_pin_ttl_ms = ttl_ms;
    return c;
  }
  bool Present(const std::string& key) {
    auto e = master().Exists(key);  // no lease
    return e.ok() && *e;
  }
  size_t CountPresent(const std::vector<std::string>& keys) {
    size_t n = 0;
    for (const auto& k : keys) n += Present(k) ? 1 : 0;
    return n;
  }
};

// ---- Hard pins ----

TEST_F(PinTest, HardPinnedSurviveWhenEverythingElseMustGo) {
  Mount("seg-a", 8 * kPage);
  auto pinned = Keys("pin", 4);
  for (const auto& k : pinned) ASSERT_TRUE(Put(k, kPage, Hard()).ok());
  auto loose = Keys("loose", 100);
  for (const auto& k : loose) ASSERT_TRUE(Put(k, kPage).ok()) << k;
  EXPECT_EQ(CountPresent(pinned), 4u);
  EXPECT_EQ(CountPresent(loose), 4u);
  EXPECT_EQ(master().counters().evictions.load(), 96u);
  // Evicting "everything" still leaves the pinned objects.
  EXPECT_EQ(master().EvictBytes(uint64_t{1} << 40), 4 * kPage);
  EXPECT_EQ(CountPresent(pinned), 4u);
  EXPECT_EQ(master().Stats().used_bytes, 4 * kPage);
}

TEST_F(PinTest, OnlyHardPinnedLeftMeansNoSpace) {
  Mount("seg-a", 8 * kPage);
  auto pinned = Keys("pin", 8);
  for (const auto& k : pinned) ASSERT_TRUE(Put(k, kPage, Hard()).ok());
  EXPECT_EQ(master().PutStart("new", kPage, {}).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(master().PutStart("new", kPage, Hard()).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(master().EvictBytes(kPage), 0u);
  EXPECT_EQ(CountPresent(pinned), 8u);
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().counters().evictions.load(), 0u);
}

TEST_F(PinTest, HardPinnedSurviveWatermarkRoundsAndLongTimes) {
  config_.high_watermark = 0.5;
  config_.evict_ratio = 1.0;
  Mount("seg-a", 8 * kPage);
  auto pinned = Keys("pin", 6);
  for (const auto& k : pinned) ASSERT_TRUE(Put(k, kPage, Hard()).ok());
  ASSERT_TRUE(Put("loose", kPage).ok());
  for (int round = 0; round < 3; ++round) {
    clock_.Advance(1'000'000);
    master().RunMaintenance();
  }
  EXPECT_EQ(master().counters().eviction_rounds.load(), 3u);
  EXPECT_EQ(CountPresent(pinned), 6u);
  EXPECT_FALSE(Present("loose"));
}

TEST_F(PinTest, HardPinnedObjectsCanStillBeRemoved) {
  Mount("seg-a", 4 * kPage);
  auto pinned = Keys("pin", 4);
  for (const auto& k : pinned) ASSERT_TRUE(Put(k, kPage, Hard()).ok());
  ASSERT_TRUE(master().Remove("pin0").ok());
  EXPECT_FALSE(Present("pin0"));
  EXPECT_EQ(master().Stats().used_bytes, 3 * kPage);
  // The freed space is usable without any eviction.
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  // Prefix removal and the lease rule apply to pinned objects as to any other.
  ASSERT_TRUE(Readable("pin1"));
  EXPECT_EQ(master().Remove("pin1").code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(master().Remove("pin1", /*force=*/true).ok());
  EXPECT_EQ(*master().RemoveByPrefix("pin"), 2u);
  EXPECT_EQ(master().List(""), std::vector<std::string>{"new"});
  EXPECT_EQ(master().Stats().used_bytes, 2 * kPage);               // pin1's until its lease ends
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms);  // lease + grace
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().used_bytes, kPage);
}

TEST_F(PinTest, RemovedHardPinnedKeyCanBeReputUnpinned) {
  Mount("seg-a", 2 * kPage);
  ASSERT_TRUE(Put("k", kPage, Hard()).ok());
  ASSERT_TRUE(Put("other", kPage, Hard()).ok());
  ASSERT_TRUE(master().Remove("k").ok());
  ASSERT_TRUE(Put("k", kPage).ok());    // unpinned this time
  ASSERT_TRUE(Put("new", kPage).ok());  // evicts the unpinned "k"
  EXPECT_FALSE(Present("k"));
  EXPECT_TRUE(Present("other"));
}

// ---- Soft pins ----

TEST_F(PinTest, SoftPinnedGoOnlyAfterEveryUnpinnedCandidate) {
  Mount("seg-a", 8 * kPage);
  auto soft = Keys("soft", 4);
  for (const auto& k : soft) ASSERT_TRUE(Put(k, kPage, Soft(60'000)).ok());
  // The soft-pinned objects are the oldest, yet a stream of unpinned puts never
  // reaches them: there is always an older unpinned candidate.
  auto loose = Keys("loose", 50);
  for (const auto& k : loose) ASSERT_TRUE(Put(k, kPage).ok()) << k;
  EXPECT_EQ(CountPresent(soft), 4u);
  EXPECT_EQ(CountPresent(loose), 4u);

  // Lease every unpinned object: now a soft-pinned one has to go.
  for (const auto& k : loose) {
    if (Present(k)) {
      ASSERT_TRUE(Readable(k));
    }
  }
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_EQ(CountPresent(soft), 3u);
  EXPECT_EQ(CountPresent(loose), 4u);
}

TEST_F(PinTest, SoftPinnedEvictedInLruOrderAmongThemselves) {
  Mount("seg-a", 4 * kPage);
  auto soft = Keys("soft", 4);
  for (const auto& k : soft) ASSERT_TRUE(Put(k, kPage, Soft(600'000)).ok());
  ASSERT_TRUE(Readable("soft0"));
  clock_.Advance(config_.lease_ms + 1);  // only recency protects soft0 now
  ASSERT_TRUE(Put("a", kPage).ok());
  EXPECT_FALSE(Present("soft1")) << "least recently used soft pin goes first";
  EXPECT_TRUE(Present("soft0"));
  ASSERT_TRUE(Put("b", kPage).ok());
  // Unpinned "a" is a candidate now, so it goes before any soft pin.
  EXPECT_FALSE(Present("a"));
  EXPECT_EQ(CountPresent(soft), 3u);
}

TEST_F(PinTest, LeasedSoftPinnedObjectIsSpared) {
  Mount("seg-a", 2 * kPage);
  ASSERT_TRUE(Put("s0", kPage, Soft(600'000)).ok());
  ASSERT_TRUE(Put("s1", kPage, Soft(600'000)).ok());
  ASSERT_TRUE(Readable("s0"));
  ASSERT_TRUE(Put("x", kPage).ok());
  EXPECT_TRUE(Present("s0"));
  EXPECT_FALSE(Present("s1"));
  ASSERT_TRUE(Readable("x"));
  EXPECT_EQ(master().PutStart("y", kPage, {}).status().code(), ErrorCode::kNoSpace);
  EXPECT_TRUE(Present("s0"));
  EXPECT_TRUE(Present("x"));
}

TEST_F(PinTest, ExpiredSoftPinCompetesLikeAnUnpinnedObject) {
  config_.eviction_policy = "lru";
  Mount("seg-a", 4 * kPage);
  ASSERT_TRUE(Put("soft", kPage, Soft(1000)).ok());
  clock_.Advance(1001);
  master().RunMaintenance();  // the pin has expired
  auto later = Keys("later", 3);
  for (const auto& k : later) ASSERT_TRUE(Put(k, kPage).ok());
  // Full. The expired pin is now the least recently used unpinned object.
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_FALSE(Present("soft"));
  EXPECT_EQ(CountPresent(later), 3u);
}

TEST_F(PinTest, UnexpiredSoftPinOutlivesNewerUnpinnedObjects) {
  // The same sequence as above, without letting the pin expire.
  config_.eviction_policy = "lru";
  Mount("seg-a", 4 * kPage);
  ASSERT_TRUE(Put("soft", kPage, Soft(1'000'000)).ok());
  clock_.Advance(1001);
  master().RunMaintenance();
  auto later = Keys("later", 3);
  for (const auto& k : later) ASSERT_TRUE(Put(k, kPage).ok());
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_TRUE(Present("soft"));
  EXPECT_FALSE(Present("later0"));
}

TEST_F(PinTest, SoftPinExpiresDuringSynchronousEvictionToo) {
  // No RunMaintenance: the PutStart that needs space notices the expiry itself.
  config_.allow_evict_soft_pinned = false;
  config_.lease_ms = 5000;  // loose's lease outlives soft's pin
  Mount("seg-a", 2 * kPage);
  ASSERT_TRUE(Put("soft", kPage, Soft(1000)).ok());
  ASSERT_TRUE(Put("loose", kPage).ok());
  ASSERT_TRUE(Readable("loose"));  // leased: not a candidate
  EXPECT_EQ(master().PutStart("new", kPage, {}).status().code(), ErrorCode::kNoSpace);
  clock_.Advance(1001);
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_FALSE(Present("soft"));
  EXPECT_TRUE(Present("loose"));
}

TEST_F(PinTest, SoftPinnedNeverEvictedWhenDisallowed) {
  config_.allow_evict_soft_pinned = false;
  Mount("seg-a", 4 * kPage);
  auto soft = Keys("soft", 4);
  for (const auto& k : soft) ASSERT_TRUE(Put(k, kPage, Soft(5000)).ok());
  EXPECT_EQ(master().PutStart("new", kPage, {}).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(master().EvictBytes(uint64_t{1} << 40), 0u);
  EXPECT_EQ(CountPresent(soft), 4u);

  // Unpinned objects still go, and the soft pins stay.
  ASSERT_TRUE(master().Remove("soft3").ok());
  ASSERT_TRUE(Put("loose", kPage).ok());
  ASSERT_TRUE(Put("loose2", kPage).ok());
  EXPECT_FALSE(Present("loose"));
  EXPECT_EQ(CountPresent(soft), 3u);

  // Once the pins expire the objects are ordinary candidates (the eviction
  // itself notices the expiry).
  clock_.Advance(5001);
  EXPECT_EQ(master().EvictBytes(uint64_t{1} << 40), 4 * kPage);
  EXPECT_EQ(CountPresent(soft), 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(PinTest, RemovedSoftPinnedObjectStaysGoneAfterItsExpiry) {
  Mount("seg-a", 4 * kPage);
  ASSERT_TRUE(Put("soft", kPage, Soft(1000)).ok());
  ASSERT_TRUE(master().Remove("soft").ok());
  // The slot is reused by a new object before the old pin's expiry comes due.
  ASSERT_TRUE(Put("soft", kPage).ok());
  clock_.Advance(1001);
  master().RunMaintenance();
  EXPECT_TRUE(Present("soft"));
  EXPECT_EQ(master().Stats().objects, 1u);
  // The re-put object is tracked exactly once: it is evicted once, cleanly.
  EXPECT_EQ(master().EvictBytes(uint64_t{1} << 40), kPage);
  EXPECT_EQ(master().Stats().objects, 0u);
  EXPECT_EQ(master().EvictBytes(uint64_t{1} << 40), 0u);
}

// The longest TTL a client can send (INT64_MAX ms) must not wrap the pin's end
// into the past (signed overflow: the object would lose its pin at once).
TEST_F(PinTest, TheLongestSoftPinDoesNotOverflow) {
  config_.eviction_policy = "lru";
  Mount("seg-a", 4 * kPage);
  ASSERT_TRUE(Put("soft", kPage, Soft(std::numeric_limits<int64_t>::max())).ok());
  clock_.Advance(1001);
  master().RunMaintenance();
  for (const auto& k : Keys("later", 3)) ASSERT_TRUE(Put(k, kPage).ok());
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_TRUE(Present("soft"));
  EXPECT_FALSE(Present("later0"));
}

TEST_F(PinTest, NegativeSoftPinIsRejected) {
  Mount("seg-a", 4 * kPage);
  EXPECT_EQ(master().PutStart("k", kPage, Soft(-1)).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

}  // namespace
}  // namespace crescent::master::testing
