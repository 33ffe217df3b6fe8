// Read leases: who grants them, how long they hold, and that the deferred touch
// is always seen by the next remove or evict decision.
#include <string>
#include <thread>

#include "master/master_test_util.h"
#include "master/pausing_clock_for_test.h"

namespace crescent::master::testing {
namespace {

class LeaseTest : public MasterTest {
 protected:
  static constexpr int64_t kLease = 5000;
  static constexpr uint64_t kObject = 1024;

  void SetUp() override { config_.lease_ms = kLease; }

  // Mounts one segment of exactly n objects of kObject bytes and fills it.
  std::vector<std::string> Fill(size_t n) {
    Mount("seg-a", n * kObject);
    std::vector<std::string> keys = Keys("obj", n);
    for (const std::string& k : keys) EXPECT_TRUE(Put(k, kObject).ok()) << k;
    EXPECT_EQ(master().Stats().used_bytes, n * kObject);
    return keys;
  }
};

TEST_F(LeaseTest, GetReplicaListGrantsLeaseOfConfiguredLength) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  clock_.Advance(123);
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->lease_expiry, clock_.NowMs() + kLease);
}

TEST_F(LeaseTest, LeaseGrowsWithTheObjectsSize) {
  config_.lease_bytes_per_ms = 1000;
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("big", 250'000).ok());
  auto read = master().GetReplicaList("big");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->lease_expiry, clock_.NowMs() + kLease + 250);
  clock_.Advance(kLease + 249);
  EXPECT_EQ(master().Remove("big").code(), ErrorCode::kObjectLeased);
  clock_.Advance(1);
  EXPECT_TRUE(master().Remove("big").ok());
}

// A location cache's report of its reads (TouchKeys) counts as a read: a
// lease, for the stored keys only; an invalid key refuses the whole call.
TEST_F(LeaseTest, TouchKeysLeasesTheStoredKeysItNames) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(Put("j", 100).ok());
  StatusOr<size_t> touched = master().TouchKeys(std::vector<std::string>{"k", "missing"});
  ASSERT_TRUE(touched.ok()) << touched.status().ToString();
  EXPECT_EQ(*touched, 1u);
  EXPECT_EQ(master().Remove("k").code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(master().Remove("j").ok()) << "not named, not leased";
  EXPECT_EQ(master().TouchKeys(std::vector<std::string>{"k", ""}).status().code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(master().counters().touch_keys.items.load(), 4u);
  clock_.Advance(kLease + 1);
  EXPECT_TRUE(master().Remove("k").ok());
}

TEST_F(LeaseTest, LeasedObjectIsNotRemovedUntilLeaseExpires) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(Readable("k"));
  EXPECT_EQ(master().Remove("k").code(), ErrorCode::kObjectLeased);
  clock_.Advance(kLease - 1);
  EXPECT_EQ(master().Remove("k").code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(*master().Exists("k"));
  clock_.Advance(2);
  EXPECT_TRUE(master().Remove("k").ok());
  EXPECT_FALSE(Readable("k"));
  // The read's capability may still be copying on a node whose clock lags:
  // the space waits out the grace before it is free.
  EXPECT_EQ(master().Stats().held_bytes, 128u);
  clock_.Advance(config_.capability_grace_ms);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(LeaseTest, LeaseExpiresEvenWhenTouchWasNeverFlushed) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(Readable("k"));
  clock_.Advance(kLease + 1);  // no maintenance, no decision in between
  EXPECT_TRUE(master().Remove("k").ok());
}

TEST_F(LeaseTest, ForceRemoveIgnoresLease) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(Readable("k"));
  EXPECT_TRUE(master().Remove("k", /*force=*/true).ok());
  EXPECT_FALSE(Readable("k"));
  EXPECT_EQ(master().Stats().objects, 0u);
}

TEST_F(LeaseTest, EveryReadExtendsTheLease) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(Readable("k"));
  clock_.Advance(kLease / 2);
  master().RunMaintenance();  // flushes the first touch
  ASSERT_TRUE(Readable("k"));
  clock_.Advance(kLease / 2 + 1);  // past the first lease, inside the second
  EXPECT_EQ(master().Remove("k").code(), ErrorCode::kObjectLeased);
  clock_.Advance(kLease / 2);
  EXPECT_TRUE(master().Remove("k").ok());
}

TEST_F(LeaseTest, ProbesGrantNoLeaseByDefault) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("a", 100).ok());
  ASSERT_TRUE(Put("b", 100).ok());
  ASSERT_TRUE(Put("c", 100).ok());
  EXPECT_TRUE(*master().Exists("a"));
  EXPECT_TRUE(master().Remove("a").ok());
  std::vector<std::string> keys = {"b", "c"};
  EXPECT_EQ(master().BatchExists(keys).leading, 2u);
  EXPECT_EQ(*master().BatchQueryPrefix(keys), 2u);
  master().RunMaintenance();
  for (const Status& s : master().BatchRemove(keys)) EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(LeaseTest, ExistsGrantsLeaseWhenConfigured) {
  config_.exists_grants_lease = true;
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("a", 100).ok());
  ASSERT_TRUE(Put("b", 100).ok());
  EXPECT_TRUE(*master().Exists("a"));
  EXPECT_EQ(master().Remove("a").code(), ErrorCode::kObjectLeased);
  std::vector<std::string> keys = {"b"};
  EXPECT_EQ(master().BatchExists(keys).leading, 1u);
  EXPECT_EQ(master().Remove("b").code(), ErrorCode::kObjectLeased);
  clock_.Advance(kLease + 1);
  EXPECT_TRUE(master().Remove("a").ok());
  EXPECT_TRUE(master().Remove("b").ok());
}

TEST_F(LeaseTest, BatchGetLeasesEveryReturnedKey) {
  Mount("seg-a", 1 << 20);
  std::vector<std::string> keys = Keys("k", 4);
  for (const std::string& k : keys) ASSERT_TRUE(Put(k, 100).ok());
  std::vector<std::string> asked = {keys[0], keys[1], "missing", keys[2]};
  auto reads = master().BatchGetReplicaList(asked);
  ASSERT_EQ(reads.size(), 4u);
  EXPECT_TRUE(reads[0].ok());
  EXPECT_TRUE(reads[1].ok());
  EXPECT_EQ(reads[2].status().code(), ErrorCode::kObjectNotFound);
  ASSERT_TRUE(reads[3].ok());
  EXPECT_EQ(reads[3]->lease_expiry, clock_.NowMs() + kLease);
  auto removed = master().BatchRemove(asked);
  EXPECT_EQ(removed[0].code(), ErrorCode::kObjectLeased);
  EXPECT_EQ(removed[1].code(), ErrorCode::kObjectLeased);
  EXPECT_EQ(removed[2].code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(removed[3].code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(master().Remove(keys[3]).ok());  // not asked for, not leased
}

TEST_F(LeaseTest, PrefixModeBatchGetLeasesOnlyTheReturnedPrefix) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("p0", 100).ok());
  ASSERT_TRUE(Put("p1", 100).ok());
  ASSERT_TRUE(Put("p3", 100).ok());
  std::vector<std::string> asked = {"p0", "p1", "p2", "p3"};
  auto reads = master().BatchGetReplicaList(asked, /*prefix_mode=*/true);
  ASSERT_EQ(reads.size(), 3u);  // the prefix, and the miss that ended it
  EXPECT_TRUE(reads[0].ok());
  EXPECT_TRUE(reads[1].ok());
  EXPECT_EQ(reads[2].status().code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().Remove("p0").code(), ErrorCode::kObjectLeased);
  EXPECT_EQ(master().Remove("p1").code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(master().Remove("p3").ok());  // after the first miss: never read
}

TEST_F(LeaseTest, ReadIsSeenByRemoveAroundMaintenance) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("before", 100).ok());
  ASSERT_TRUE(Put("after", 100).ok());
  // Read, then a maintenance pass flushes the touch into the lease.
  ASSERT_TRUE(Readable("before"));
  master().RunMaintenance();
  EXPECT_EQ(master().Remove("before").code(), ErrorCode::kObjectLeased);
  // Maintenance first, then a read that only the remove itself can flush.
  master().RunMaintenance();
  ASSERT_TRUE(Readable("after"));
  EXPECT_EQ(master().Remove("after").code(), ErrorCode::kObjectLeased);
  master().RunMaintenance();
  EXPECT_EQ(master().Remove("after").code(), ErrorCode::kObjectLeased);
  clock_.Advance(kLease + 1);
  master().RunMaintenance();
  EXPECT_TRUE(master().Remove("before").ok());
  EXPECT_TRUE(master().Remove("after").ok());
}

TEST_F(LeaseTest, LeaseIsHonouredWhenTouchQueueOverflows) {
  config_.touch_queue_capacity = 2;
  Mount("seg-a", 1 << 20);
  std::vector<std::string> keys = Keys("k", 10);
  for (const std::string& k : keys) ASSERT_TRUE(Put(k, 100).ok());
  for (const std::string& k : keys) ASSERT_TRUE(Readable(k));
  EXPECT_EQ(master().EvictBytes(1 << 20), 0u);
  for (const Status& s : master().BatchRemove(keys)) EXPECT_EQ(s.code(), ErrorCode::kObjectLeased);
  EXPECT_EQ(master().Stats().objects, keys.size());
}

// A read that finds the touch queue full must not leave the object's touch
// flag set: only a read that sets the flag queues the object, so every later
// read would bypass the policy, and a hot object would be evicted as cold.
TEST_F(LeaseTest, AReadThatOverflowsTheTouchQueueDoesNotHideLaterReads) {
  config_.touch_queue_capacity = 2;
  config_.eviction_policy = "lru";
  config_.high_watermark = 1.0;  // no eviction but the one asked for below
  Mount("seg-a", 5 * kObject);   // maintenance never finds it full
  std::vector<std::string> keys = Keys("k", 4);
  for (const std::string& k : keys) ASSERT_TRUE(Put(k, kObject).ok());  // LRU: k0 .. k3
  ASSERT_TRUE(Readable(keys[1]));
  ASSERT_TRUE(Readable(keys[2]));  // the queue is full
  ASSERT_TRUE(Readable(keys[0]));  // overflows: the policy misses this one
  master().RunMaintenance();       // LRU: k0, k3, k1, k2
  clock_.Advance(kLease + config_.capability_grace_ms);
  ASSERT_TRUE(Readable(keys[0]));  // k0 is hot again: LRU k3, k1, k2, k0
  master().RunMaintenance();
  clock_.Advance(kLease + config_.capability_grace_ms);
  ASSERT_TRUE(Put("new", kObject).ok());   // the last free space
  ASSERT_TRUE(Put("new2", kObject).ok());  // evicts the coldest
  EXPECT_FALSE(*master().Exists(keys[3])) << "the coldest object should have gone";
  EXPECT_TRUE(*master().Exists(keys[0])) << "the object read last was evicted";
}

TEST_F(LeaseTest, LeaseDoesNotPassToANewObjectInTheSameSlot) {
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(Readable("k"));  // touch pending, never flushed
  // The unmount drops "k" without any lease decision.
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  Mount("seg-b", 1 << 20, "node-b");
  ASSERT_TRUE(Put("k", 100).ok());  // same key: same shard, reused slot
  master().RunMaintenance();        // the old id in the touch queue is stale
  EXPECT_TRUE(master().Remove("k").ok());

  ASSERT_TRUE(Put("k2", 100).ok());
  ASSERT_TRUE(Readable("k2"));
  ASSERT_TRUE(master().Remove("k2", /*force=*/true).ok());
  ASSERT_TRUE(Put("k2", 100).ok());
  EXPECT_TRUE(master().Remove("k2").ok());
}

TEST_F(LeaseTest, LeasedObjectsAreNotEvictedAndPutFailsWithNoSpace) {
  std::vector<std::string> keys = Fill(4);
  for (const std::string& k : keys) ASSERT_TRUE(Readable(k));
  EXPECT_EQ(master().EvictBytes(1 << 20), 0u);
  EXPECT_EQ(master().PutStart("new", kObject, {}).status().code(), ErrorCode::kNoSpace);
  for (const std::string& k : keys) EXPECT_TRUE(*master().Exists(k)) << k;
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  // Once the leases run out the same put evicts.
  clock_.Advance(kLease + config_.capability_grace_ms);  // and the capability grace
  EXPECT_TRUE(master().PutStart("new", kObject, {}).ok());
  EXPECT_EQ(master().counters().evictions.load(), 1u);
}

TEST_F(LeaseTest, ExpiredLeaseNoLongerProtectsFromEviction) {
  std::vector<std::string> keys = Fill(4);
  ASSERT_TRUE(Readable(keys[2]));
  clock_.Advance(kLease + config_.capability_grace_ms);
  EXPECT_EQ(master().EvictBytes(1 << 20), 4 * kObject);
  EXPECT_EQ(master().Stats().objects, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

// A reader preempted between reading the clock and touching the entry must not
// shorten the lease a later reader was already granted.
TEST_F(LeaseTest, LaterReadLeaseHoldsWhenAnEarlierReadTouchesLast) {
  PausingClock pausing(clock_);
  auto created = MasterService::Create(config_, pausing);
  ASSERT_TRUE(created.ok());
  MasterService& m = **created;
  ASSERT_TRUE(m.MountSegment({"seg-a", 1 << 20, "node-a", "node-a:7000", Tier::kDram}).ok());
  auto start = m.PutStart("k", 100, {});
  ASSERT_TRUE(start.ok());
  ASSERT_TRUE(m.PutEnd("k", start->token).ok());

  pausing.Arm();
  StatusOr<ReadResult> early = Status(ErrorCode::kInternal, "not run");
  std::thread reader([&] { early = m.GetReplicaList("k"); });
  pausing.WaitUntilPaused();  // the early reader holds time t0
  clock_.Advance(100);
  auto late = m.GetReplicaList("k");  // reads at t0 + 100 and touches first
  pausing.Resume();                   // the early reader touches with t0
  reader.join();
  ASSERT_TRUE(early.ok());
  ASSERT_TRUE(late.ok());
  ASSERT_EQ(late->lease_expiry, early->lease_expiry + 100);

  clock_.Advance(kLease - 50);  // past the early lease, inside the late one
  ASSERT_LT(clock_.NowMs(), late->lease_expiry);
  EXPECT_EQ(m.Remove("k").code(), ErrorCode::kObjectLeased);
  clock_.Advance(51);
  EXPECT_TRUE(m.Remove("k").ok());
}

// The deferred touch must protect a just-read object under every policy.
class LeaseEvictionTest : public LeaseTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    LeaseTest::SetUp();
    config_.eviction_policy = GetParam();
  }
};

TEST_P(LeaseEvictionTest, JustReadObjectSurvivesEvictBytes) {
  std::vector<std::string> keys = Fill(16);
  ASSERT_TRUE(Readable(keys[0]));  // the oldest insert
  ASSERT_TRUE(Readable(keys[9]));
  EXPECT_EQ(master().EvictBytes(uint64_t{1} << 40), 14 * kObject);
  for (size_t i = 0; i < keys.size(); ++i) {
    bool read = i == 0 || i == 9;
    EXPECT_EQ(*master().Exists(keys[i]), read) << keys[i];
  }
  EXPECT_EQ(master().counters().evictions.load(), 14u);
  EXPECT_EQ(master().Stats().used_bytes, 2 * kObject);
}

TEST_P(LeaseEvictionTest, JustReadObjectSurvivesPutStartEviction) {
  std::vector<std::string> keys = Fill(8);
  ASSERT_TRUE(Readable(keys[0]));
  // Each new put needs one object's space; the read one is never chosen.
  for (const std::string& k : Keys("new", 7)) {
    ASSERT_TRUE(Put(k, kObject).ok()) << k;
    ASSERT_TRUE(*master().Exists(keys[0])) << "evicted while leased, at " << k;
  }
  // Which others went is the policy's choice; that one went per put is not.
  EXPECT_EQ(master().counters().evictions.load(), 7u);
  EXPECT_EQ(master().Stats().objects, keys.size());
  EXPECT_TRUE(Readable(keys[0]));
}

TEST_P(LeaseEvictionTest, JustReadObjectSurvivesWatermarkEviction) {
  config_.evict_ratio = 1.0;  // one round would evict everything it may
  std::vector<std::string> keys = Fill(8);
  ASSERT_TRUE(Readable(keys[3]));
  master().RunMaintenance();
  EXPECT_EQ(master().counters().eviction_rounds.load(), 1u);
  EXPECT_EQ(master().Stats().objects, 1u);
  EXPECT_TRUE(Readable(keys[3]));
}

INSTANTIATE_TEST_SUITE_P(Policies, LeaseEvictionTest,
                         ::testing::Values("lru", "fifo", "sieve", "s3fifo", "prefix-lru",
                                           "learned", "adaptive"));

// Readers must not starve writers. Two readers poll the newest keys while one
// writer puts new ones into a segment of 64 objects, on the shipped defaults,
// at the pace of a user's `crescent put` (one put per 50 ms; the clock is
// simulated, so the test is exact). Every object is read right after its put,
// so the read lease (plus the fencing grace) decides how many objects stay
// unevictable at once. With 10 s leases all 64 were always leased and most puts
// failed with NO_SPACE; a lease as long as a transfer leaves the writer free.
TEST(ReadersAndWriterTest, TwoReadersPollingNewKeysDoNotStarveAWriter) {
  constexpr uint64_t kObject = 64 << 10;
  constexpr int64_t kStepMs = 50;
  constexpr int kPuts = 1000;
  ManualClock clock;
  auto created = MasterService::Create(MasterConfig{}, clock);
  ASSERT_TRUE(created.ok());
  MasterService& m = **created;
  ASSERT_TRUE(m.MountSegment({"seg-a", 64 * kObject, "node-a", "node-a:7000", Tier::kDram}).ok());
  int no_space = 0;
  int reads = 0;
  for (int i = 0; i < kPuts; ++i) {
    ASSERT_TRUE(m.Heartbeat("node-a").ok());
    const std::string key = "k" + std::to_string(i);
    auto start = m.PutStart(key, kObject, {});
    if (start.ok()) {
      ASSERT_TRUE(m.PutEnd(key, start->token).ok());
    } else {
      ASSERT_EQ(start.status().code(), ErrorCode::kNoSpace) << start.status().ToString();
      ++no_space;
    }
    // Reader one polls the two newest keys, reader two the two before them.
    for (int back = 0; back < 4; ++back) {
      if (i - back >= 0 && m.GetReplicaList("k" + std::to_string(i - back)).ok()) ++reads;
    }
    m.RunMaintenance();
    clock.Advance(kStepMs);
  }
  EXPECT_GT(reads, kPuts) << "the readers did read";
  EXPECT_EQ(no_space, 0) << no_space << " of " << kPuts << " puts failed with NO_SPACE";
}

}  // namespace
}  // namespace crescent::master::testing
