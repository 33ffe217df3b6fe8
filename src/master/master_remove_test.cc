// Removal and listing: Remove, BatchRemove, RemoveByPrefix, RemoveAll and List.
#include <algorithm>
#include <set>

#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

class RemoveTest : public MasterTest {
 protected:
  // Tests jump the clock past leases; the store node must not expire meanwhile.
  RemoveTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }
  // How long a forced remove holds a just-read object's space: its lease and
  // a tenth of it as grace.
  int64_t HoldMs() const { return config_.lease_ms + config_.capability_grace_ms; }

  void SetUp() override { Mount("seg-a", 1 << 20); }

  void PutAll(const std::vector<std::string>& keys, uint64_t size = 100) {
    for (const std::string& k : keys) ASSERT_TRUE(Put(k, size).ok()) << k;
  }
};

TEST_F(RemoveTest, RemovedKeyIsGoneEverywhereAndItsSpaceFreed) {
  ASSERT_TRUE(Put("keep", 100).ok());
  uint64_t used_before = master().Stats().used_bytes;
  ASSERT_TRUE(Put("k", 4096).ok());
  ASSERT_GT(master().Stats().used_bytes, used_before);
  ASSERT_TRUE(master().Remove("k").ok());
  EXPECT_EQ(master().GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(*master().Exists("k"));
  std::vector<std::string> probe = {"k"};
  EXPECT_EQ(*master().BatchQueryPrefix(probe), 0u);
  EXPECT_EQ(master().List(""), std::vector<std::string>{"keep"});
  EXPECT_EQ(master().Stats().used_bytes, used_before);
  EXPECT_EQ(master().Stats().objects, 1u);
  EXPECT_TRUE(Readable("keep"));
  // The key may be put again, with a different size.
  ASSERT_TRUE(Put("k", 50).ok());
  EXPECT_EQ(master().GetReplicaList("k")->size, 50u);
}

TEST_F(RemoveTest, RemoveUnknownKeyIsNotFound) {
  EXPECT_EQ(master().Remove("nope").code(), ErrorCode::kObjectNotFound);
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(master().Remove("k").ok());
  EXPECT_EQ(master().Remove("k").code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().Remove("k", /*force=*/true).code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().counters().remove.failures.load(), 3u);
}

TEST_F(RemoveTest, RemoveInvalidKeyIsRefused) {
  EXPECT_EQ(master().Remove("").code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(master().Remove(std::string(config_.max_key_length + 1, 'k')).code(),
            ErrorCode::kInvalidKey);
}

TEST_F(RemoveTest, RemovingAPendingPutIsNotReadyAndLeavesItIntact) {
  auto start = master().PutStart("k", 100, {});
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(master().Remove("k").code(), ErrorCode::kObjectNotReady);
  EXPECT_EQ(master().Remove("k", /*force=*/true).code(), ErrorCode::kObjectNotReady);
  EXPECT_EQ(master().Stats().pending_puts, 1u);
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  EXPECT_TRUE(Readable("k"));
}

TEST_F(RemoveTest, BatchRemoveReportsEachKeyInOrder) {
  PutAll({"a", "b", "leased", "c"});
  ASSERT_TRUE(Readable("leased"));
  ASSERT_TRUE(master().PutStart("pending", 100, {}).ok());
  std::vector<std::string> keys = {"b", "missing", "", "leased", "a", "pending", "a"};
  auto out = master().BatchRemove(keys);
  ASSERT_EQ(out.size(), keys.size());
  EXPECT_TRUE(out[0].ok());
  EXPECT_EQ(out[1].code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(out[2].code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(out[3].code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(out[4].ok());
  EXPECT_EQ(out[5].code(), ErrorCode::kObjectNotReady);
  EXPECT_EQ(out[6].code(), ErrorCode::kObjectNotFound);  // removed just before
  EXPECT_EQ(master().List(""), (std::vector<std::string>{"c", "leased"}));
  EXPECT_EQ(master().Stats().objects, 2u);
}

TEST_F(RemoveTest, ForcedBatchRemoveTakesLeasedKeys) {
  PutAll({"a", "b"});
  ASSERT_TRUE(Readable("a"));
  std::vector<std::string> keys = {"a", "b"};
  for (const Status& s : master().BatchRemove(keys, /*force=*/true)) EXPECT_TRUE(s.ok());
  EXPECT_TRUE(master().List("").empty());
  // "b" was not read: its space is free at once; "a"'s waits for its lease.
  EXPECT_EQ(master().Stats().held_bytes, 128u);  // 100 bytes, 64-byte aligned
  EXPECT_GT(master().Stats().used_bytes, 0u);
  clock_.Advance(HoldMs());
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

// A reader that got a capability before a forced remove may still be copying
// the bytes: the range is not handed to another put until the lease is over,
// so that reader never sees another object's bytes in it.
TEST_F(RemoveTest, ForcedRemoveOfALeasedObjectHoldsItsSpaceUntilTheLeaseEnds) {
  ASSERT_TRUE(Put("k", 4096).ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  const uint64_t offset = read->replicas[0].offset;
  ASSERT_TRUE(master().Remove("k", /*force=*/true).ok());
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_EQ(master().Stats().held_bytes, 4096u);

  auto other = master().PutStart("other", 4096, {});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->replicas[0].offset, offset) << "a held range was handed out";
  clock_.Advance(HoldMs() - 1);  // the lease and its grace
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 4096u) << "released before the lease ended";

  clock_.Advance(1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  auto third = master().PutStart("third", 4096, {});
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->replicas[0].offset, offset) << "the released range is reusable";
}

// With no maintenance pass in between, a put that finds no room first frees
// held space whose lease has ended, rather than evicting or failing.
TEST_F(RemoveTest, APutReclaimsHeldSpaceThatHasComeDue) {
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  Mount("two-objects", 2 * 4096);
  PutConfig pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(Put("pin", 4096, pinned).ok());  // nothing to evict but "k"
  ASSERT_TRUE(Put("k", 4096).ok());
  ASSERT_TRUE(Readable("k"));
  ASSERT_TRUE(master().Remove("k", /*force=*/true).ok());
  EXPECT_EQ(master().PutStart("x", 4096, {}).status().code(), ErrorCode::kNoSpace);
  clock_.Advance(HoldMs());
  EXPECT_TRUE(Put("x", 4096).ok());
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(master().counters().evictions.load(), 0u);
}

// Held space lives in its segment's allocator: when the segment goes, so does
// the hold, and the accounts still add up.
TEST_F(RemoveTest, HeldSpaceGoesWithItsSegment) {
  ASSERT_TRUE(Put("k", 4096).ok());
  ASSERT_TRUE(Readable("k"));
  ASSERT_TRUE(master().Remove("k", /*force=*/true).ok());
  ASSERT_EQ(master().Stats().held_bytes, 4096u);
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  Mount("seg-b", 1 << 20, "node-b");
  clock_.Advance(HoldMs());
  master().RunMaintenance();  // the old slot must not touch seg-b's allocator
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_TRUE(Put("again", 4096).ok());
}

// Watermark eviction counts live objects only: held space frees itself, and
// evicting live objects for it would lose them for nothing.
TEST_F(RemoveTest, HeldSpaceDoesNotTriggerWatermarkEviction) {
  config_.high_watermark = 0.5;
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  Mount("small", 64 << 10);
  ASSERT_TRUE(Put("live", 16 << 10).ok());
  ASSERT_TRUE(Put("big", 24 << 10).ok());
  ASSERT_TRUE(Readable("big"));
  ASSERT_TRUE(master().Remove("big", /*force=*/true).ok());
  ASSERT_GE(master().Stats().used_bytes, 32u << 10);  // at the mark, counting held space
  master().RunMaintenance();
  EXPECT_TRUE(*master().Exists("live"));
  EXPECT_EQ(master().counters().evictions.load(), 0u);
}

// An object that nobody holds a lease on goes at once, forced or not.
TEST_F(RemoveTest, ForcedRemoveOfAnUnleasedObjectFreesAtOnce) {
  ASSERT_TRUE(Put("k", 4096).ok());
  ASSERT_TRUE(master().Remove("k", /*force=*/true).ok());
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(RemoveTest, RemoveByPrefixTakesOnlyKeysUnderThePrefix) {
  std::vector<std::string> m1 = Keys("model-1/page-", 30);
  PutAll(m1);
  PutAll({"model-1", "model-10/page-0", "model-2/page-0", "other"});
  auto n = master().RemoveByPrefix("model-1/");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, m1.size());
  for (const std::string& k : m1) EXPECT_FALSE(*master().Exists(k)) << k;
  EXPECT_EQ(master().List(""),
            (std::vector<std::string>{"model-1", "model-10/page-0", "model-2/page-0", "other"}));
  EXPECT_EQ(master().Stats().objects, 4u);
  // A prefix that is itself a key takes that key too.
  EXPECT_EQ(*master().RemoveByPrefix("model-1"), 2u);
  EXPECT_EQ(master().List(""), (std::vector<std::string>{"model-2/page-0", "other"}));
  EXPECT_EQ(*master().RemoveByPrefix("nothing-here"), 0u);
}

TEST_F(RemoveTest, RemoveByPrefixSkipsLeasedUnlessForced) {
  PutAll(Keys("t/", 5));
  ASSERT_TRUE(Readable("t/1"));
  ASSERT_TRUE(Readable("t/3"));
  EXPECT_EQ(*master().RemoveByPrefix("t/"), 3u);
  EXPECT_EQ(master().List("t/"), (std::vector<std::string>{"t/1", "t/3"}));
  EXPECT_EQ(*master().RemoveByPrefix("t/", /*force=*/true), 2u);
  EXPECT_TRUE(master().List("t/").empty());
  EXPECT_EQ(master().Stats().held_bytes,
            256u);  // t/1 and t/3 (64-byte aligned), until their leases end
  clock_.Advance(HoldMs());
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(RemoveTest, RemoveByPrefixLeavesPendingPutsAlone) {
  PutAll({"t/done"});
  auto start = master().PutStart("t/pending", 100, {});
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(*master().RemoveByPrefix("t/"), 1u);
  ASSERT_TRUE(master().PutEnd("t/pending", start->token).ok());
  EXPECT_EQ(master().List("t/"), std::vector<std::string>{"t/pending"});
}

TEST_F(RemoveTest, RemoveByPrefixRefusesOverlongPrefix) {
  PutAll({"a"});
  auto n = master().RemoveByPrefix(std::string(config_.max_key_length + 1, 'a'));
  EXPECT_EQ(n.status().code(), ErrorCode::kInvalidKey);
  EXPECT_TRUE(Readable("a"));
}

TEST_F(RemoveTest, RemoveAllEmptiesTheStoreExceptLeasedObjects) {
  std::vector<std::string> keys = Keys("x", 50);
  PutAll(keys, 1000);
  ASSERT_TRUE(Readable("x7"));
  EXPECT_EQ(master().RemoveAll(), 49u);
  EXPECT_EQ(master().List(""), std::vector<std::string>{"x7"});
  EXPECT_EQ(master().Stats().objects, 1u);
  EXPECT_EQ(master().RemoveAll(/*force=*/true), 1u);
  EXPECT_TRUE(master().List("").empty());
  MasterStats stats = master().Stats();
  EXPECT_EQ(stats.objects, 0u);
  EXPECT_EQ(stats.held_bytes, 1024u);  // x7's (64-byte aligned), until its lease ends
  clock_.Advance(HoldMs());
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_EQ(master().RemoveAll(), 0u);
  // Everything can be put again.
  PutAll(keys, 1000);
  EXPECT_EQ(master().List("").size(), keys.size());
}

TEST_F(RemoveTest, ListReturnsKeysUnderPrefixInOrder) {
  std::vector<std::string> keys = {"b/2", "a/1", "b/10", "b/1", "c", "b", "ba", "a/0"};
  PutAll(keys);
  ASSERT_TRUE(master().PutStart("b/pending", 100, {}).ok());  // not listed
  std::vector<std::string> all = master().List("");
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(all, sorted);
  EXPECT_EQ(master().List("b/"), (std::vector<std::string>{"b/1", "b/10", "b/2"}));
  EXPECT_EQ(master().List("b"), (std::vector<std::string>{"b", "b/1", "b/10", "b/2", "ba"}));
  EXPECT_EQ(master().List("a/1"), std::vector<std::string>{"a/1"});
  EXPECT_TRUE(master().List("zzz").empty());
}

TEST_F(RemoveTest, ListLimitReturnsTheFirstKeysInOrder) {
  // Many keys so that they spread over many shards.
  std::vector<std::string> keys = Keys("key-", 200);
  PutAll(keys);
  PutAll({"aaa", "zzz"});
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (size_t limit : {1, 2, 7, 64, 199, 200}) {
    std::vector<std::string> want(sorted.begin(), sorted.begin() + limit);
    EXPECT_EQ(master().List("key-", limit), want) << "limit " << limit;
  }
  EXPECT_EQ(master().List("key-", 1000).size(), 200u);
  EXPECT_EQ(master().List("key-", 0).size(), 200u);  // 0: no limit
  EXPECT_EQ(master().List("", 1), std::vector<std::string>{"aaa"});
}

TEST_F(RemoveTest, RemovedSpaceIsReusedWithoutEviction) {
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  Mount("small", 4 * 4096);
  std::vector<std::string> keys = Keys("k", 4);
  PutAll(keys, 4096);
  ASSERT_EQ(master().Stats().used_bytes, 4u * 4096);
  ASSERT_TRUE(master().Remove("k2").ok());
  ASSERT_TRUE(Put("again", 4096).ok());
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  EXPECT_EQ(master().List(""), (std::vector<std::string>{"again", "k0", "k1", "k3"}));
}

// List answers with the first keys in key order that fit both its key and its
// byte bound, from every shard, and says whether more match.
TEST_F(RemoveTest, ListIsTheLongestInOrderRunThatFitsItsBounds) {
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    // Keys of varying length, spread over all shards.
    keys.push_back("l/" + std::to_string(i * 7919 % 1000) + std::string(i % 13, 'x'));
  }
  PutAll(keys, 64);
  ASSERT_TRUE(Put("other", 64).ok());
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (size_t limit : {size_t{0}, size_t{1}, size_t{17}, size_t{299}, size_t{300}, size_t{301}}) {
    for (uint64_t max_bytes :
         {uint64_t{0}, uint64_t{3}, uint64_t{100}, uint64_t{1000}, uint64_t{1} << 20}) {
      // The oracle: take keys in order while both bounds hold.
      std::vector<std::string> want;
      uint64_t bytes = 0;
      for (const std::string& k : sorted) {
        const uint64_t cost = k.size() + kListKeyFramingBytes;
        if ((limit != 0 && want.size() == limit) || (max_bytes != 0 && bytes + cost > max_bytes)) {
          break;
        }
        want.push_back(k);
        bytes += cost;
      }
      bool truncated = false;
      EXPECT_EQ(master().List("l/", limit, max_bytes, &truncated), want)
          << "limit " << limit << ", max_bytes " << max_bytes;
      EXPECT_EQ(truncated, want.size() < sorted.size())
          << "limit " << limit << ", max_bytes " << max_bytes;
    }
  }
}

// Paging by the last key listed (List's `after`) while keys are put and
// removed between pages: no key comes twice, keys come in order, and every key
// stored throughout comes once.
TEST_F(RemoveTest, ListPagesAfterTheLastKeyUnderPutsAndRemoves) {
  std::vector<std::string> keys;
  for (int i = 0; i < 400; ++i) keys.push_back("p/" + std::to_string(i * 7919 % 1000));
  PutAll(keys, 64);
  std::set<std::string> throughout(keys.begin(), keys.end());
  std::vector<std::string> listed;
  bool truncated = true;
  for (int page = 0; truncated; ++page) {
    const std::string after = listed.empty() ? "" : listed.back();
    std::vector<std::string> got = master().List("p/", 23, 0, &truncated, after);
    listed.insert(listed.end(), got.begin(), got.end());
    // Between pages: remove a key behind the cursor and one ahead of it, and
    // put keys on both sides.
    auto ahead = throughout.upper_bound(listed.back());
    if (ahead != throughout.end()) {
      ASSERT_TRUE(master().Remove(*ahead).ok());
      throughout.erase(ahead);
    }
    if (throughout.erase(listed[listed.size() / 2]) == 1) {
      ASSERT_TRUE(master().Remove(listed[listed.size() / 2]).ok());
    }
    ASSERT_TRUE(Put("p/" + std::to_string(page) + "-new", 64).ok());
    ASSERT_TRUE(Put("p/0" + std::to_string(page) + "-new", 64).ok());
    ASSERT_LT(page, 100);
  }
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_EQ(std::adjacent_find(listed.begin(), listed.end()), listed.end());
  for (const std::string& k : throughout) {
    EXPECT_EQ(std::count(listed.begin(), listed.end(), k), 1) << k;
  }
  // A page after the last key is empty and not truncated; a cursor outside
  // the prefix pages from (or past) the prefix's keys.
  EXPECT_TRUE(master().List("p/", 0, 0, &truncated, "p/~").empty());
  EXPECT_FALSE(truncated);
  EXPECT_EQ(master().List("p/", 1, 0, nullptr, "a"), master().List("p/", 1));
  EXPECT_TRUE(master().List("p/", 0, 0, nullptr, "q").empty());
}

}  // namespace
}  // namespace crescent::master::testing
