// GetLongestPrefix (master_longest_prefix.cc): the longest complete, readable
// key that prefixes the key asked, across the shards, with the read a
// GetReplicaList of that key gives; per tenant; pending, removed and
// unservable objects never match.
#include <gtest/gtest.h>

#include <string>

#include "master/master_test_util.h"
#include "master/scripted_node_for_test.h"
#include "master/tenant_key.h"

namespace crescent::master {
namespace {

class LongestPrefixTest : public testing::MasterTest {
 protected:
  LongestPrefixTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }

  // The key matched for `key`, or the error's code name.
  std::string Match(const std::string& key) {
    auto r = master().GetLongestPrefix(key);
    return r.ok() ? r->key : "error " + std::string(ErrorCodeName(r.status().code()));
  }
};

TEST_F(LongestPrefixTest, TheLongestOfSeveralPrefixesWins) {
  Mount("seg", 1 << 20);
  // Enough keys that the prefixes land on different shards of the 64.
  for (const std::string k : {"t", "to", "tok/1", "tok/1/2", "tok/1/2/3/4", "other"}) {
    ASSERT_TRUE(Put(k, 64).ok()) << k;
  }
  EXPECT_EQ(Match("tok/1/2/3"), "tok/1/2");
  EXPECT_EQ(Match("tok/1/2/3/4/5"), "tok/1/2/3/4");
  EXPECT_EQ(Match("tok/1/9"), "tok/1");
  EXPECT_EQ(Match("tok"), "to");
  EXPECT_EQ(Match("tx"), "t");
}

TEST_F(LongestPrefixTest, AnExactMatchIsItsOwnLongestPrefix) {
  Mount("seg", 1 << 20);
  ASSERT_TRUE(Put("a/b", 64).ok());
  ASSERT_TRUE(Put("a/b/c", 100).ok());
  auto r = master().GetLongestPrefix("a/b/c");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->key, "a/b/c");
  // The read is the key's own, as GetReplicaList gives it: size and a lease.
  auto plain = master().GetReplicaList("a/b/c");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(r->read.size, 100u);
  EXPECT_EQ(r->read.checksum, plain->checksum);
  ASSERT_EQ(r->read.replicas.size(), plain->replicas.size());
  EXPECT_EQ(r->read.replicas[0].offset, plain->replicas[0].offset);
  EXPECT_GT(r->read.lease_expiry, clock_.NowMs());
  // A leased object is refused a plain remove, as after any get.
  EXPECT_EQ(master().Remove("a/b/c").code(), ErrorCode::kObjectLeased);
}

TEST_F(LongestPrefixTest, NoMatchIsNotFound) {
  Mount("seg", 1 << 20);
  EXPECT_EQ(Match("anything"), "error OBJECT_NOT_FOUND") << "empty store";
  ASSERT_TRUE(Put("abc/def", 64).ok());
  EXPECT_EQ(Match("xyz"), "error OBJECT_NOT_FOUND");
  // A key that prefixes stored keys but is not stored matches nothing.
  EXPECT_EQ(Match("abc"), "error OBJECT_NOT_FOUND");
  EXPECT_EQ(Match("abc/de"), "error OBJECT_NOT_FOUND");
  EXPECT_EQ(Match("abc/def/"), "abc/def");
  EXPECT_EQ(master().counters().longest_prefix.failures.load(), 4u);
  EXPECT_EQ(master().counters().longest_prefix.requests.load(), 5u);
}

TEST_F(LongestPrefixTest, BadKeysAreRefusedAsByGet) {
  Mount("seg", 1 << 20);
  ASSERT_TRUE(Put("a", 64).ok());
  EXPECT_EQ(Match(""), "error INVALID_KEY");
  EXPECT_EQ(Match(std::string(config_.max_key_length + 1, 'a')), "error INVALID_KEY");
  EXPECT_EQ(Match("\x1d"
                  "a"),
            "error INVALID_KEY");
  EXPECT_EQ(Match(std::string(config_.max_key_length, 'a')), "a");
}

TEST_F(LongestPrefixTest, TenantsSeeOnlyTheirOwnKeys) {
  Mount("seg", 1 << 20);
  ASSERT_TRUE(Put("p", 64).ok());  // the default namespace's
  ASSERT_TRUE(Put(TenantKey("a", "p/1"), 64).ok());
  ASSERT_TRUE(Put(TenantKey("b", "p/1/2"), 64).ok());
  ASSERT_TRUE(Put(TenantKey("b", "p"), 64).ok());
  EXPECT_EQ(Match(TenantKey("a", "p/1/2/3")), TenantKey("a", "p/1"));
  EXPECT_EQ(Match(TenantKey("b", "p/1/2/3")), TenantKey("b", "p/1/2"));
  EXPECT_EQ(Match(TenantKey("b", "p/1")), TenantKey("b", "p"));
  EXPECT_EQ(Match(TenantKey("a", "p")), "error OBJECT_NOT_FOUND") << "not the default's 'p'";
  EXPECT_EQ(Match(TenantKey("c", "p/1/2")), "error OBJECT_NOT_FOUND");
  EXPECT_EQ(Match("p/1/2/3"), "p") << "the default namespace sees no tenant's key";
}

// A put in progress is no match (the next shorter key is); once it ends, it is.
TEST_F(LongestPrefixTest, APendingPutIsNotAMatchUntilItEnds) {
  Mount("seg", 1 << 20);
  ASSERT_TRUE(Put("doc", 64).ok());
  auto start = master().PutStart("doc/1", 64, {});
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(Match("doc/1/x"), "doc");
  EXPECT_EQ(Match("doc/1"), "doc");
  ASSERT_TRUE(master().PutEnd("doc/1", start->token).ok());
  EXPECT_EQ(Match("doc/1/x"), "doc/1");
  // A revoked put never matches.
  auto again = master().PutStart("doc/1/x", 64, {});
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(master().PutRevoke("doc/1/x", again->token).ok());
  EXPECT_EQ(Match("doc/1/x"), "doc/1");
}

TEST_F(LongestPrefixTest, ARemovedKeyGivesWayToTheNextShorter) {
  Mount("seg", 1 << 20);
  ASSERT_TRUE(Put("r", 64).ok());
  ASSERT_TRUE(Put("r/s", 64).ok());
  ASSERT_TRUE(Put("r/s/t", 64).ok());
  ASSERT_TRUE(master().Remove("r/s").ok());
  EXPECT_EQ(Match("r/s/u"), "r");
  ASSERT_TRUE(master().Remove("r/s/t").ok());
  EXPECT_EQ(Match("r/s/t/u"), "r");
  ASSERT_EQ(*master().RemoveByPrefix("r", /*force=*/true), 1u);  // leased by the reads above
  EXPECT_EQ(Match("r/s/t/u"), "error OBJECT_NOT_FOUND");
}

// An object no replica of which may be served yet (its segment taken over by
// a restarted node, its check not passed) is passed over for the next
// shorter key, and matches again once it is served.
TEST_F(LongestPrefixTest, AnUnservableObjectGivesWayToTheNextShorter) {
  testing::ScriptedNode node;
  master().SetReplicaCopier(&node);
  Mount("dram", 1 << 20);
  const SegmentSpec pmem{"pmem-u1", 1 << 20, "node-1", "n:1#e1", Tier::kPmem, 7};
  ASSERT_TRUE(master().MountSegment(pmem).ok());
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  for (const std::string k : {"v", "v/1/2"}) {
    auto r = master().PutStart(k, 100, there);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(master().PutEnd(k, r->token, /*checksum=*/42).ok());
  }
  PutConfig dram;
  dram.preferred_segment = "dram";
  auto mid = master().PutStart("v/1", 100, dram);
  ASSERT_TRUE(mid.ok());
  ASSERT_TRUE(master().PutEnd("v/1", mid->token).ok());
  bool adopted = false;
  SegmentSpec again = pmem;
  again.owner_node = "node-2";
  again.endpoint = "n:2#e9";
  again.owner_token = 99;
  ASSERT_TRUE(master().MountSegment(again, nullptr, &adopted).ok());
  ASSERT_TRUE(adopted);
  EXPECT_EQ(Match("v/1/2/3"), "v/1");
  EXPECT_EQ(Match("v/0"), "error OBJECT_NOT_FOUND");
  master().RunMaintenance();  // the checks pass
  EXPECT_EQ(Match("v/1/2/3"), "v/1/2");
  EXPECT_EQ(Match("v/0"), "v");
}

}  // namespace
}  // namespace crescent::master
