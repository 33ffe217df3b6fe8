// Prefix queries: BatchQueryPrefix, BatchExists and BatchGetReplicaList in
// prefix mode stop at the first miss; the Bloom filter answers definite misses
// only, is rebuilt when it outgrows its design load, and never changes an answer.
#include "cache/counting_bloom_filter.h"
#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

class PrefixTest : public MasterTest {
 protected:
  PrefixTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }

  void PutAll(const std::vector<std::string>& keys, uint64_t size = 64) {
    for (const auto& k : keys) ASSERT_TRUE(Put(k, size).ok()) << k;
  }
  size_t QueryPrefix(const std::vector<std::string>& keys) {
    auto n = master().BatchQueryPrefix(keys);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : ~size_t{0};
  }
  uint64_t BloomNegatives() { return master().counters().bloom_negatives.load(); }
};

TEST_F(PrefixTest, QueryPrefixCountsLeadingCompleteKeys) {
  Mount("seg-a", 1 << 20);
  auto keys = Keys("page/", 10);
  PutAll(keys);
  EXPECT_EQ(QueryPrefix(keys), 10u);
  EXPECT_EQ(QueryPrefix({}), 0u);
  EXPECT_EQ(QueryPrefix({"page/0", "page/1"}), 2u);
  // The answer depends on the order asked, not on what else is stored.
  EXPECT_EQ(QueryPrefix({"nope", "page/0", "page/1"}), 0u);
  EXPECT_EQ(QueryPrefix({"page/3", "page/3", "page/9"}), 3u);
}

TEST_F(PrefixTest, QueryPrefixStopsAtAGapInTheMiddle) {
  Mount("seg-a", 1 << 20);
  auto keys = Keys("page/", 10);
  PutAll(keys);
  ASSERT_TRUE(master().Remove("page/4").ok());
  EXPECT_EQ(QueryPrefix(keys), 4u);
  // Keys after the gap are still there, but do not count.
  EXPECT_EQ(QueryPrefix(std::vector<std::string>(keys.begin() + 5, keys.end())), 5u);
  ASSERT_TRUE(Put("page/4", 64).ok());
  EXPECT_EQ(QueryPrefix(keys), 10u);
}

TEST_F(PrefixTest, PendingKeyCountsAsAMiss) {
  Mount("seg-a", 1 << 20);
  auto keys = Keys("page/", 6);
  uint64_t token = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i == 3) {
      auto start = master().PutStart(keys[i], 64, {});
      ASSERT_TRUE(start.ok());
      token = start->token;
    } else {
      ASSERT_TRUE(Put(keys[i], 64).ok());
    }
  }
  EXPECT_EQ(QueryPrefix(keys), 3u);
  auto exists = master().BatchExists(keys);
  EXPECT_TRUE(exists.statuses.empty());
  EXPECT_EQ(exists.leading, 3u);
  EXPECT_FALSE(exists.present[3]);
  auto reads = master().BatchGetReplicaList(keys, /*prefix_mode=*/true);
  ASSERT_EQ(reads.size(), 4u);  // the prefix, and the pending key that ended it
  EXPECT_EQ(reads[3].status().code(), ErrorCode::kObjectNotFound);  // not yet published
  ASSERT_TRUE(master().PutEnd(keys[3], token).ok());
  EXPECT_EQ(QueryPrefix(keys), 6u);
}

TEST_F(PrefixTest, KeysOnAnUnmountedSegmentAreMisses) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  auto keys = Keys("page/", 6);
  for (size_t i = 0; i < keys.size(); ++i) {
    PutConfig where;
    where.preferred_segment = i == 2 ? "seg-b" : "seg-a";
    ASSERT_TRUE(Put(keys[i], 64, where).ok());
  }
  EXPECT_EQ(QueryPrefix(keys), 6u);
  ASSERT_TRUE(master().UnmountSegment("seg-b", "node-b").ok());
  EXPECT_EQ(QueryPrefix(keys), 2u);
  EXPECT_EQ(master().BatchExists(keys).leading, 2u);
  auto reads = master().BatchGetReplicaList(keys, /*prefix_mode=*/true);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_FALSE(reads[2].ok());
}

TEST_F(PrefixTest, BatchExistsReportsEachKeyAndTheLeadingCount) {
  Mount("seg-a", 1 << 20);
  PutAll({"a", "b", "d"});
  auto r = master().BatchExists(std::vector<std::string>{"a", "b", "c", "d", "e"});
  EXPECT_TRUE(r.statuses.empty());
  EXPECT_EQ(r.present, (std::vector<bool>{true, true, false, true, false}));
  EXPECT_EQ(r.leading, 2u);
  auto none = master().BatchExists(std::vector<std::string>{"zz", "a"});
  EXPECT_EQ(none.present, (std::vector<bool>{false, true}));
  EXPECT_EQ(none.leading, 0u);
  auto empty = master().BatchExists(std::vector<std::string>{});
  EXPECT_TRUE(empty.present.empty());
  EXPECT_EQ(empty.leading, 0u);
}

TEST_F(PrefixTest, ExistenceProbesGrantNoLeaseByDefault) {
  Mount("seg-a", 1 << 20);
  PutAll({"a", "b"});
  ASSERT_EQ(master().BatchExists(std::vector<std::string>{"a", "b"}).leading, 2u);
  ASSERT_EQ(QueryPrefix({"a", "b"}), 2u);
  EXPECT_TRUE(master().Remove("a").ok()) << "a probe must not block removal";
  EXPECT_TRUE(master().Remove("b").ok());
}

TEST_F(PrefixTest, ExistsGrantsLeaseWhenConfigured) {
  config_.exists_grants_lease = true;
  Mount("seg-a", 1 << 20);
  PutAll({"a", "b"});
  ASSERT_EQ(master().BatchExists(std::vector<std::string>{"a"}).leading, 1u);
  EXPECT_EQ(master().Remove("a").code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(master().Remove("b").ok());
  clock_.Advance(config_.lease_ms + 1);
  EXPECT_TRUE(master().Remove("a").ok());
}

TEST_F(PrefixTest, BatchGetReplicaListPrefixModeStopsAtFirstMiss) {
  Mount("seg-a", 1 << 20);
  PutAll({"k0", "k1", "k2"}, 100);
  std::vector<std::string> keys = {"k0", "k1", "missing", "k2"};
  auto prefix = master().BatchGetReplicaList(keys, /*prefix_mode=*/true);
  ASSERT_EQ(prefix.size(), 3u);
  EXPECT_EQ(prefix[2].status().code(), ErrorCode::kObjectNotFound);  // why it ended
  prefix.pop_back();
  for (const auto& r : prefix) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->size, 100u);
    EXPECT_EQ(r->lease_expiry, clock_.NowMs() + config_.lease_ms);
  }
  // Only the returned prefix was leased.
  EXPECT_EQ(master().Remove("k0").code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(master().Remove("k2").ok());

  auto all = master().BatchGetReplicaList(keys, /*prefix_mode=*/false);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_TRUE(all[0].ok());
  EXPECT_TRUE(all[1].ok());
  EXPECT_EQ(all[2].status().code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(all[3].status().code(), ErrorCode::kObjectNotFound);  // removed above
}

// One bad key never spoils a batch: it gets its own INVALID_KEY and the other
// keys their answers. In a prefix it ends the prefix like a miss (it cannot be
// stored); only as the first key does it fail the prefix query as a whole.
TEST_F(PrefixTest, InvalidKeysAreRefusedOneByOne) {
  config_.max_key_length = 8;
  Mount("seg-a", 1 << 20);
  PutAll({"a", "b"});
  std::vector<std::string> empty_key = {"a", "", "b"};
  std::vector<std::string> long_key = {"a", "b", "123456789"};
  EXPECT_EQ(QueryPrefix(empty_key), 1u);
  EXPECT_EQ(QueryPrefix(long_key), 2u);
  EXPECT_EQ(master().BatchQueryPrefix(std::vector<std::string>{"", "a"}).status().code(),
            ErrorCode::kInvalidKey);
  BatchExistsResult exists = master().BatchExists(empty_key);
  EXPECT_EQ(exists.present, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(exists.leading, 1u);
  ASSERT_EQ(exists.statuses.size(), 3u);
  EXPECT_TRUE(exists.statuses[0].ok());
  EXPECT_EQ(exists.statuses[1].code(), ErrorCode::kInvalidKey);
  EXPECT_TRUE(exists.statuses[2].ok());
  exists = master().BatchExists(long_key);
  EXPECT_EQ(exists.present, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(exists.statuses[2].code(), ErrorCode::kInvalidKey);
  // Replica lists answer per key; prefix mode stops at the bad one, with its error.
  auto prefix = master().BatchGetReplicaList(empty_key, /*prefix_mode=*/true);
  ASSERT_EQ(prefix.size(), 2u);
  EXPECT_TRUE(prefix[0].ok());
  EXPECT_EQ(prefix[1].status().code(), ErrorCode::kInvalidKey);
  auto per_key = master().BatchGetReplicaList(long_key);
  ASSERT_EQ(per_key.size(), 3u);
  EXPECT_TRUE(per_key[0].ok() && per_key[1].ok());
  EXPECT_EQ(per_key[2].status().code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(master().counters().query_prefix.failures.load(), 1u);
  // A chain over a bad key: it is refused, the page after it starts unlinked.
  auto chain = master().BatchPutStart(std::vector<std::string>{"c0", "123456789", "c2"},
                                      std::vector<uint64_t>{64, 64, 64}, {}, /*chain=*/true);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_TRUE(chain[0].ok());
  EXPECT_EQ(chain[1].status().code(), ErrorCode::kInvalidKey);
  EXPECT_TRUE(chain[2].ok()) << chain[2].status().ToString();
  // A key of exactly the limit is fine.
  ASSERT_TRUE(Put("12345678", 64).ok());
  EXPECT_EQ(QueryPrefix({"a", "b", "12345678"}), 3u);
}

TEST_F(PrefixTest, PrefixLengthHistogramRecordsEachQuery) {
  Mount("seg-a", 1 << 20);
  auto keys = Keys("page/", 100);
  PutAll(keys);
  const auto& hist = master().counters().prefix_length;
  auto query_n = [&](size_t n) {
    std::vector<std::string> q(keys.begin(), keys.begin() + n);
    q.emplace_back("missing");
    EXPECT_EQ(QueryPrefix(q), n);
  };
  query_n(0);    // bucket 0
  query_n(1);    // bucket 1: [1, 2)
  query_n(3);    // bucket 2: [2, 4)
  query_n(5);    // bucket 3: [4, 8)
  query_n(7);    // bucket 3
  query_n(100);  // bucket 7: [64, 128)
  EXPECT_EQ(hist[0].load(), 1u);
  EXPECT_EQ(hist[1].load(), 1u);
  EXPECT_EQ(hist[2].load(), 1u);
  EXPECT_EQ(hist[3].load(), 2u);
  EXPECT_EQ(hist[7].load(), 1u);
  uint64_t total = 0;
  for (const auto& b : hist) total += b.load();
  EXPECT_EQ(total, 6u);
  EXPECT_EQ(master().counters().prefix_hit_keys.load(), 0u + 1 + 3 + 5 + 7 + 100);
  EXPECT_EQ(master().counters().prefix_miss_keys.load(), 6u);
  // Prefix-mode replica lists record too.
  master().BatchGetReplicaList(std::vector<std::string>(keys.begin(), keys.begin() + 2), true);
  EXPECT_EQ(hist[2].load(), 2u);
}

TEST_F(PrefixTest, BloomFalsePositivesStillAnswerExactly) {
  // A filter designed for 16 keys at 50% false positives, loaded with 200:
  // most absent keys pass it, and the index must answer them.
  config_.bloom_expected_keys = 16;
  config_.bloom_false_positive_rate = 0.5;
  Mount("seg-a", 1 << 20);
  auto present = Keys("present/", 200);
  PutAll(present);
  auto absent = Keys("absent/", 2000);

  // The filter the master builds, replayed on the side: it says exactly which
  // absent keys are definite negatives.
  cache::CountingBloomFilter replica(16, 0.5);
  for (const auto& k : present) replica.Add(k);
  uint64_t definite = 0;
  for (const auto& k : absent) definite += replica.MayContain(k) ? 0 : 1;
  ASSERT_LT(definite, absent.size()) << "the test needs false positives";

  uint64_t before = BloomNegatives();
  for (const auto& k : absent) {
    EXPECT_EQ(QueryPrefix({k}), 0u) << k;
  }
  EXPECT_EQ(BloomNegatives() - before, definite);

  before = BloomNegatives();
  for (const auto& k : absent) {
    EXPECT_FALSE(*master().Exists(k)) << k;
    EXPECT_EQ(master().GetReplicaList(k).status().code(), ErrorCode::kObjectNotFound) << k;
  }
  EXPECT_EQ(BloomNegatives() - before, 2 * definite);

  // Present keys are never filter negatives.
  before = BloomNegatives();
  EXPECT_EQ(QueryPrefix(present), present.size());
  for (const auto& k : present) EXPECT_TRUE(*master().Exists(k)) << k;
  EXPECT_EQ(BloomNegatives(), before);

  // A false-positive key inside a prefix ends it exactly there.
  for (const auto& k : absent) {
    if (!replica.MayContain(k)) continue;
    std::vector<std::string> q = {present[0], present[1], k, present[2]};
    EXPECT_EQ(QueryPrefix(q), 2u);
    EXPECT_EQ(master().BatchExists(q).present, (std::vector<bool>{true, true, false, true}));
    break;
  }
}

TEST_F(PrefixTest, RemovedKeysAnswerAbsentThroughTheFilter) {
  config_.bloom_expected_keys = 16;
  config_.bloom_false_positive_rate = 0.5;
  Mount("seg-a", 1 << 20);
  auto keys = Keys("k/", 300);
  PutAll(keys);
  for (size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(master().Remove(keys[i]).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(*master().Exists(keys[i]), i % 2 == 1) << keys[i];
    EXPECT_EQ(QueryPrefix({keys[i]}), i % 2) << keys[i];
  }
}

TEST_F(PrefixTest, BloomIsRebuiltWhenItOutgrowsItsDesignLoad) {
  config_.bloom_expected_keys = 64;
  Mount("seg-a", 1 << 20);
  auto present = Keys("present/", 1000);
  PutAll(present);
  MasterStats before = master().Stats();
  EXPECT_EQ(before.bloom_design_keys, 64u);
  EXPECT_EQ(master().counters().bloom_rebuilds.load(), 0u);

  master().RunMaintenance();
  MasterStats after = master().Stats();
  EXPECT_GE(master().counters().bloom_rebuilds.load(), 1u);
  EXPECT_GE(after.bloom_design_keys, 1000u);
  EXPECT_LT(after.bloom_estimated_fpr, before.bloom_estimated_fpr);

  // Every present key is still present, every absent one absent...
  EXPECT_EQ(QueryPrefix(present), present.size());
  auto absent = Keys("absent/", 1000);
  uint64_t neg_before = BloomNegatives();
  for (const auto& k : absent) EXPECT_EQ(QueryPrefix({k}), 0u) << k;
  // ...and the rebuilt filter answers most misses alone again (design FPR 1%).
  EXPECT_GE(BloomNegatives() - neg_before, 900u);

  // No further rebuild while the load fits; removes and puts stay exact.
  master().RunMaintenance();
  EXPECT_EQ(master().counters().bloom_rebuilds.load(), 1u);
  for (size_t i = 0; i < 500; ++i) ASSERT_TRUE(master().Remove(present[i]).ok());
  auto tail = std::vector<std::string>(present.begin() + 500, present.end());
  EXPECT_EQ(QueryPrefix(tail), 500u);
  EXPECT_EQ(QueryPrefix(present), 0u);
  for (size_t i = 0; i < 500; ++i) EXPECT_FALSE(*master().Exists(present[i]));
}

TEST_F(PrefixTest, BloomKeepsGrowing) {
  config_.bloom_expected_keys = 8;
  Mount("seg-a", 1 << 22);
  std::vector<std::string> all;
  uint64_t design = 8;
  for (int step = 0; step < 4; ++step) {
    auto more = Keys("s" + std::to_string(step) + "/", 40u << step);
    PutAll(more);
    all.insert(all.end(), more.begin(), more.end());
    master().RunMaintenance();
    EXPECT_GT(master().Stats().bloom_design_keys, design);
    design = master().Stats().bloom_design_keys;
    EXPECT_GE(design, all.size());
    EXPECT_EQ(QueryPrefix(all), all.size());
  }
  EXPECT_EQ(master().counters().bloom_rebuilds.load(), 4u);
}

}  // namespace
}  // namespace crescent::master::testing
