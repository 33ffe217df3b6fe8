// The location cache (ClientConfig::location_cache): a get of a key the client
// read before goes straight to its store node, without asking the master, and
// anything that makes the remembered place wrong sends it back to the master
// at once, never returning another key's bytes: the key removed and put again
// (or its space given to another key) in the same place, an expired
// capability, a node gone. Reads served from the cache still reach the master
// (TouchKeys) and count for eviction. Over TCP and over shared memory, against
// a real master and store node (client_test_util.h).
#include "client/client_test_util.h"

namespace crescent::client_test {
namespace {

constexpr size_t kObject = 256 << 10;

class LocationCacheTest : public WithCluster<::testing::TestWithParam<bool>> {
 protected:
  // A master with short leases and grace, so space freed by a remove is free
  // again within a moment; a segment of `slots` objects of kObject bytes.
  void Start(size_t slots, int64_t ttl_ms = 10'000) {
    server::LocalClusterOptions o = SmallCluster(1, GetParam());
    o.segment_size = slots * kObject;
    o.master.config.lease_ms = 50;
    o.master.config.capability_grace_ms = 20;
    cluster_ = StartCluster(o);
    ASSERT_NE(cluster_, nullptr);
    ClientConfig cc = ConfigFor(*cluster_, GetParam());
    cc.location_cache = 64;
    cc.location_cache_ttl_ms = ttl_ms;
    cc.location_touch_interval_ms = 10;
    client_ = ConnectWith(cc);
    ASSERT_NE(client_, nullptr);
    other_ = ConnectTo(*cluster_, GetParam());  // no location cache
    ASSERT_NE(other_, nullptr);
  }
  void TearDown() override {
    other_.reset();
    WithCluster::TearDown();
  }

  // Keys the master was asked to grant reads for, over all calls.
  uint64_t MasterReads() { return cluster_->master().counters().get_replica_list.items.load(); }
  // Waits until the master holds no removed object's space.
  bool SpaceFree() {
    return Eventually([&] { return cluster_->master().Stats().held_bytes == 0; });
  }
  std::vector<std::byte> MustGet(const std::string& key) {
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::vector<std::byte>{};
  }

  std::unique_ptr<Client> other_;
};

TEST_P(LocationCacheTest, ACachedGetAsksNoMaster) {
  ASSERT_NO_FATAL_FAILURE(Start(4));
  const std::vector<std::byte> value = Pattern(kObject, 1);
  ASSERT_TRUE(other_->Put("k", Bytes(value)).ok());
  EXPECT_TRUE(MustGet("k") == value);  // asks the master, remembers the place
  const uint64_t asked = MasterReads();
  EXPECT_EQ(client_->Counters().location_misses, 1u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(MustGet("k") == value);
  std::vector<std::byte> into(kObject);
  ASSERT_TRUE(client_->RegisterBuffer(into.data(), into.size()).ok());
  StatusOr<size_t> n = client_->GetInto("k", into.data(), into.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_TRUE(into == value);
  EXPECT_EQ(MasterReads(), asked) << "a cached get asked the master";
  const ClientCounters c = client_->Counters();
  EXPECT_EQ(c.location_hits, 4u);
  EXPECT_EQ(c.location_fallbacks_checksum + c.location_fallbacks_expired +
                c.location_fallbacks_refused + c.location_fallbacks_unreachable,
            0u);
  EXPECT_NE(client_->Metrics().find("crescent_client_location_cache_total{result=\"hit\"} 4"),
            std::string::npos);
  // The client's own remove forgets the place.
  ASSERT_TRUE(client_->Remove("k", /*force=*/true).ok());
  EXPECT_EQ(client_->Get("k").status().code(), ErrorCode::kObjectNotFound);
}

// The key removed by another client and put again with other bytes, in the
// very space the cache remembers (the segment holds two objects, the other
// slot taken by a key that stays): the bytes
// no longer match the remembered checksum, and the master's read returns the
// new value. Then the space goes to another key: never its bytes.
TEST_P(LocationCacheTest, ARemovedAndReplacedKeyNeverReturnsForeignBytes) {
  ASSERT_NO_FATAL_FAILURE(Start(2));
  const std::vector<std::byte> first = Pattern(kObject, 1);
  const std::vector<std::byte> second = Pattern(kObject, 2);
  const std::vector<std::byte> foreign = Pattern(kObject, 3);
  Status put = client_->Put("k", Bytes(first));
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_TRUE(MustGet("k") == first);
  ASSERT_TRUE(other_->Put("pad", Bytes(Pattern(kObject, 9))).ok());  // the segment is full

  ASSERT_TRUE(other_->Remove("k", /*force=*/true).ok());
  ASSERT_TRUE(SpaceFree());
  ASSERT_TRUE(other_->Put("k", Bytes(second)).ok());
  EXPECT_TRUE(MustGet("k") == second);
  EXPECT_EQ(client_->Counters().location_fallbacks_checksum, 1u);

  ASSERT_TRUE(other_->Remove("k", /*force=*/true).ok());
  ASSERT_TRUE(SpaceFree());
  ASSERT_TRUE(other_->Put("other", Bytes(foreign)).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get("k");
  EXPECT_EQ(got.status().code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(client_->Counters().location_fallbacks_checksum, 2u);
  EXPECT_EQ(client_->Counters().checksum_mismatches, 0u) << "reused space is no corruption";
}

TEST_P(LocationCacheTest, AnExpiredCapabilityAsksTheMaster) {
  ASSERT_NO_FATAL_FAILURE(Start(4, /*ttl_ms=*/300));
  const std::vector<std::byte> value = Pattern(kObject, 1);
  ASSERT_TRUE(other_->Put("k", Bytes(value)).ok());
  EXPECT_TRUE(MustGet("k") == value);
  EXPECT_TRUE(MustGet("k") == value);
  EXPECT_EQ(client_->Counters().location_hits, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const uint64_t asked = MasterReads();
  EXPECT_TRUE(MustGet("k") == value);
  EXPECT_EQ(MasterReads(), asked + 1);
  EXPECT_EQ(client_->Counters().location_fallbacks_expired, 1u);
}

TEST_P(LocationCacheTest, ADeadNodeAsksTheMaster) {
  ASSERT_NO_FATAL_FAILURE(Start(4));
  const std::vector<std::byte> value = Pattern(kObject, 1);
  ASSERT_TRUE(client_->Put("k", Bytes(value)).ok());
  EXPECT_TRUE(MustGet("k") == value);  // from the cache (the put's place)
  cluster_->StopNode(0);
  const uint64_t asked = MasterReads();
  const uint64_t hits = client_->Counters().location_hits;
  StatusOr<std::vector<std::byte>> got = client_->Get("k");
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(MasterReads(), asked + 1);
  EXPECT_EQ(client_->Counters().location_fallbacks_unreachable, 1u);
  EXPECT_EQ(client_->Counters().location_hits, hits);
}

// An LRU master evicts the object not read since, not the one read only
// through the cache: the cache's reads reach it as touches.
TEST_P(LocationCacheTest, ReadsFromTheCacheKeepCountingForEviction) {
  ASSERT_NO_FATAL_FAILURE(Start(5));
  const std::vector<std::byte> value = Pattern(kObject, 1);
  for (const char* k : {"a", "b", "c", "d"}) ASSERT_TRUE(other_->Put(k, Bytes(value)).ok());
  for (const char* k : {"a", "b", "c", "d"}) EXPECT_TRUE(MustGet(k) == value);  // the master's
  // The master replays reads into its policy at its maintenance passes (50 ms
  // apart), each object's first read since the last pass: let one pass by.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t touched = cluster_->master().counters().touch_keys.items.load();
  EXPECT_TRUE(MustGet("a") == value);  // the cache's: now the most recent
  EXPECT_EQ(client_->Counters().location_hits, 1u);
  ASSERT_TRUE(
      Eventually([&] { return cluster_->master().counters().touch_keys.items.load() > touched; }));
  // The client counts a report once the master's answer is back, a moment
  // after the master counted the keys.
  EXPECT_TRUE(Eventually([&] { return client_->Counters().location_touches_sent == 1u; }))
      << client_->Counters().location_touches_sent;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every lease over
  ASSERT_TRUE(other_->Put("e", Bytes(value)).ok());
  ASSERT_TRUE(other_->Put("f", Bytes(value)).ok());  // evicts
  EXPECT_EQ(Present(other_->BatchExists(std::vector<std::string>{"a", "b"})),
            (std::vector<int>{1, 0}));
}

// A put remembers where it wrote: the first get of its key asks no master.
TEST_P(LocationCacheTest, AGetAfterItsPutAsksNoMaster) {
  ASSERT_NO_FATAL_FAILURE(Start(4));
  const std::vector<std::byte> value = Pattern(kObject, 4);
  ASSERT_TRUE(client_->Put("k", Bytes(value)).ok());
  const uint64_t asked = MasterReads();
  EXPECT_TRUE(MustGet("k") == value);
  EXPECT_EQ(MasterReads(), asked);
  EXPECT_EQ(client_->Counters().location_hits, 1u);
}

// A prefix fetch reads the pages the cache holds without the master, and asks
// it only from the first page it does not hold.
TEST_P(LocationCacheTest, APrefixGetReadsCachedPagesAndAsksForTheRest) {
  ASSERT_NO_FATAL_FAILURE(Start(8));
  const std::vector<std::string> keys{"p0", "p1", "p2", "p3"};
  std::vector<std::vector<std::byte>> values;
  for (uint32_t i = 0; i < 4; ++i) values.push_back(Pattern(kObject, 10 + i));
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(other_->Put(keys[i], Bytes(values[i])).ok());
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(MustGet(keys[i]) == values[i]);  // p0, p1 cached
  std::vector<std::vector<std::byte>> into(4, std::vector<std::byte>(kObject));
  std::vector<void*> ptrs;
  std::vector<size_t> caps(4, kObject);
  for (auto& b : into) {
    ASSERT_TRUE(client_->RegisterBuffer(b.data(), b.size()).ok());
    ptrs.push_back(b.data());
  }
  const uint64_t asked = MasterReads();
  StatusOr<size_t> n = client_->GetPrefixInto(keys, ptrs, caps);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(into[i] == values[i]) << i;
  EXPECT_EQ(MasterReads(), asked + 2) << "p2 and p3 asked (p3 is not stored), not p0 and p1";
  n = client_->GetPrefixInto(keys, ptrs, caps);  // now p0..p2 cached
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(client_->Counters().location_hits, 5u);
}

INSTANTIATE_TEST_SUITE_P(Transports, LocationCacheTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent::client_test
