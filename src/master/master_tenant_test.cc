// Tenants in the engine (tenant_key.h, tenant_usage.h, master_quota.cc): the
// internal key form and its validation, per-tenant usage, and quotas that
// evict the tenant's own objects in its policy's order before refusing
// QUOTA_EXCEEDED.
#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/memory_log_for_test.h"

namespace crescent::master::testing {
namespace {

constexpr uint64_t kPage = 4096;

class TenantTest : public MasterTest {
 protected:
  TenantTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }
  // Lets every read lease end.
  void PastLeases() { clock_.Advance(config_.lease_ms + config_.capability_grace_ms + 1000); }
  static PutConfig HardPinned() {
    PutConfig c;
    c.hard_pin = true;
    return c;
  }
  TenantStats StatsOf(const std::string& tenant) {
    for (const TenantStats& t : master().TenantStatsSnapshot()) {
      if (t.tenant == tenant) return t;
    }
    return {};
  }
};

TEST(TenantKeyTest, FormAndParse) {
  EXPECT_EQ(TenantKey("t1", "k"), "\x1dt1\x1dk");
  EXPECT_EQ(TenantKey("", "k"), "k");
  EXPECT_EQ(TenantOfKey("\x1dt1\x1dk"), "t1");
  EXPECT_EQ(ClientKeyOf("\x1dt1\x1dk"), "k");
  EXPECT_EQ(TenantOfKey("k"), "");
  EXPECT_EQ(ClientKeyOf("k"), "k");
  EXPECT_TRUE(TenantKeyValid("k"));
  EXPECT_TRUE(TenantKeyValid("\x1dt1\x1dk"));
  EXPECT_FALSE(TenantKeyValid("\x1d"));
  EXPECT_FALSE(TenantKeyValid("\x1dt1"));
  EXPECT_FALSE(TenantKeyValid("\x1d\x1dk"));
  EXPECT_FALSE(TenantKeyValid("\x1dt1\x1d\x1dt2\x1dk"));  // a tenant's key may not nest one
  PrefixedKeys internal(TenantPrefix("t1"));
  EXPECT_EQ(internal("a"), TenantPrefix("t1") + "a");
  EXPECT_EQ(internal("bc"), TenantPrefix("t1") + "bc");
  PrefixedKeys none("");
  EXPECT_EQ(none("a"), "a");
}

TEST_F(TenantTest, SameKeyInTwoTenantsIsTwoObjects) {
  Mount("seg", 64 * kPage);
  ASSERT_TRUE(Put(TenantKey("a", "k"), kPage).ok());
  ASSERT_TRUE(Put(TenantKey("b", "k"), 2 * kPage).ok());
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_EQ(master().GetReplicaList(TenantKey("a", "k"))->size, kPage);
  EXPECT_EQ(master().GetReplicaList(TenantKey("b", "k"))->size, 2 * kPage);
  EXPECT_EQ(master().List(TenantPrefix("a")), std::vector<std::string>{TenantKey("a", "k")});
  // The default namespace's list leaves tenants' keys out.
  ASSERT_TRUE(Put("k", kPage).ok());
  EXPECT_EQ(master().List("", 0, 0, nullptr, {}, /*default_only=*/true),
            std::vector<std::string>{"k"});
  EXPECT_EQ(master().List("").size(), 3u);
  // A tenant's remove-all is its prefix's.
  PastLeases();
  EXPECT_EQ(*master().RemoveByPrefix(TenantPrefix("a")), 1u);
  EXPECT_TRUE(*master().Exists(TenantKey("b", "k")));
  // The default namespace's remove-all leaves the tenants' keys.
  EXPECT_EQ(master().RemoveDefaultNamespace(), 1u);
  EXPECT_TRUE(*master().Exists(TenantKey("b", "k")));
  EXPECT_FALSE(*master().Exists("k"));
}

TEST_F(TenantTest, KeyLimitIsOnTheClientsKey) {
  config_.max_key_length = 8;
  Mount("seg", 64 * kPage);
  EXPECT_TRUE(Put(TenantKey("a-long-tenant-name", "12345678"), kPage).ok());
  EXPECT_EQ(Put(TenantKey("a", "123456789"), kPage).code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(Put("\x1dno-end", kPage).code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(Put(std::string(1, kTenantMark), kPage).code(), ErrorCode::kInvalidKey);
}

TEST_F(TenantTest, UsageCountsBytesObjectsAndReads) {
  Mount("seg", 64 * kPage);
  ASSERT_TRUE(Put(TenantKey("a", "x"), kPage).ok());
  auto pending = master().PutStart(TenantKey("a", "y"), 3 * kPage, {});
  ASSERT_TRUE(pending.ok());
  EXPECT_TRUE(master().GetReplicaList(TenantKey("a", "x")).ok());
  EXPECT_FALSE(master().GetReplicaList(TenantKey("a", "none")).ok());
  TenantStats a = StatsOf("a");
  EXPECT_EQ(a.bytes, 4 * kPage);  // complete and pending
  EXPECT_EQ(a.objects, 1u);
  EXPECT_EQ(a.hits, 1u);
  EXPECT_EQ(a.misses, 1u);
  ASSERT_TRUE(master().PutRevoke(TenantKey("a", "y"), pending->token).ok());
  PastLeases();
  ASSERT_TRUE(master().Remove(TenantKey("a", "x")).ok());
  a = StatsOf("a");
  EXPECT_EQ(a.bytes, 0u);
  EXPECT_EQ(a.objects, 0u);
}

TEST_F(TenantTest, QuotaEvictsTheTenantsOwnObjectsOldestFirst) {
  Mount("seg", 64 * kPage);
  master().SetTenantQuotas({{"a", 4 * kPage}});
  // b's objects are older than all of a's: an eviction by the engine's order
  // would take them first.
  for (const auto& k : Keys("b", 4)) ASSERT_TRUE(Put(TenantKey("b", k), kPage).ok());
  for (const auto& k : Keys("a", 4)) ASSERT_TRUE(Put(TenantKey("a", k), kPage).ok());
  ASSERT_TRUE(Put(TenantKey("a", "a4"), kPage).ok());
  ASSERT_TRUE(Put(TenantKey("a", "a5"), kPage).ok());
  EXPECT_FALSE(*master().Exists(TenantKey("a", "a0")));
  EXPECT_FALSE(*master().Exists(TenantKey("a", "a1")));
  for (const auto& k : {"a2", "a3", "a4", "a5"}) EXPECT_TRUE(*master().Exists(TenantKey("a", k)));
  for (const auto& k : Keys("b", 4)) EXPECT_TRUE(*master().Exists(TenantKey("b", k))) << k;
  EXPECT_EQ(StatsOf("a").bytes, 4 * kPage);
  EXPECT_EQ(StatsOf("a").evictions, 2u);
  EXPECT_EQ(StatsOf("b").evictions, 0u);
  // The default namespace and other tenants have no quota.
  for (const auto& k : Keys("c", 8)) EXPECT_TRUE(Put(TenantKey("c", k), kPage).ok());
}

TEST_F(TenantTest, QuotaExceededWhenNothingOfTheTenantsCanGo) {
  Mount("seg", 64 * kPage);
  master().SetTenantQuotas({{"a", 2 * kPage}});
  auto big = master().PutStart(TenantKey("a", "big"), 3 * kPage, {});
  ASSERT_EQ(big.status().code(), ErrorCode::kQuotaExceeded);
  EXPECT_NE(big.status().message().find("larger than the quota"), std::string::npos);
  EXPECT_NE(big.status().message().find("'a'"), std::string::npos);
  // Both of a's objects are leased (just read) or hard-pinned.
  ASSERT_TRUE(Put(TenantKey("a", "pinned"), kPage, HardPinned()).ok());
  ASSERT_TRUE(Put(TenantKey("a", "leased"), kPage).ok());
  ASSERT_TRUE(master().GetReplicaList(TenantKey("a", "leased")).ok());
  Status s = Put(TenantKey("a", "more"), kPage);
  EXPECT_EQ(s.code(), ErrorCode::kQuotaExceeded) << s.ToString();
  EXPECT_NE(s.message().find("uses 8192"), std::string::npos) << s.ToString();
  EXPECT_TRUE(*master().Exists(TenantKey("a", "leased")));
  EXPECT_EQ(StatsOf("a").bytes, 2 * kPage);  // the refused puts charged nothing
  // Once the lease ends, the leased object makes room.
  PastLeases();
  EXPECT_TRUE(Put(TenantKey("a", "more"), kPage).ok());
  EXPECT_FALSE(*master().Exists(TenantKey("a", "leased")));
  EXPECT_TRUE(*master().Exists(TenantKey("a", "pinned")));
}

TEST_F(TenantTest, QuotasReloadAndPendingPutsCount) {
  Mount("seg", 64 * kPage);
  master().SetTenantQuotas({{"a", 2 * kPage}});
  auto p1 = master().PutStart(TenantKey("a", "p1"), kPage, {});
  auto p2 = master().PutStart(TenantKey("a", "p2"), kPage, {});
  ASSERT_TRUE(p1.ok() && p2.ok());
  // Pending puts are not evictable: nothing of a's can go.
  EXPECT_EQ(master().PutStart(TenantKey("a", "p3"), kPage, {}).status().code(),
            ErrorCode::kQuotaExceeded);
  master().SetTenantQuotas({{"a", 3 * kPage}});
  EXPECT_TRUE(master().PutStart(TenantKey("a", "p3"), kPage, {}).ok());
  master().SetTenantQuotas({});  // no quota: unlimited
  EXPECT_TRUE(master().PutStart(TenantKey("a", "p4"), 8 * kPage, {}).ok());
}

TEST_F(TenantTest, TenantsOrdersFollowEveryWayAnObjectGoes) {
  Mount("seg", 8 * kPage);
  // The store's own eviction (no quota): 12 puts into 8 pages evict 4.
  for (const auto& k : Keys("k", 12)) ASSERT_TRUE(Put(TenantKey("a", k), kPage).ok());
  EXPECT_EQ(StatsOf("a").evictions, 4u);
  EXPECT_EQ(StatsOf("a").objects, 8u);
  EXPECT_EQ(master().TenantOrdered(), 8u);
  ASSERT_TRUE(master().Remove(TenantKey("a", "k11")).ok());
  EXPECT_EQ(*master().RemoveByPrefix(TenantKey("a", "k1")), 1u);  // k10 (k1 was evicted)
  EXPECT_EQ(master().TenantOrdered(), 6u);
  ASSERT_TRUE(Put(TenantKey("a", "pinned"), kPage, HardPinned()).ok());
  EXPECT_EQ(master().TenantOrdered(), 6u);
  EXPECT_EQ(StatsOf("a").objects, 7u);
}

TEST_F(TenantTest, ARestoreBringsBackUsageAndOrders) {
  MemoryLog log;
  oplog_ = &log;
  Mount("seg", 64 * kPage);
  for (const auto& k : Keys("k", 4)) ASSERT_TRUE(Put(TenantKey("a", k), kPage).ok());
  ASSERT_TRUE(Put(TenantKey("a", "pinned"), kPage, HardPinned()).ok());
  ASSERT_TRUE(Put("default", kPage).ok());
  ASSERT_TRUE(master().Remove(TenantKey("a", "k0")).ok());

  auto m = MasterService::Create(config_, clock_);
  ASSERT_TRUE(m.ok());
  for (const LogRecord& r : log.Decoded()) (*m)->ApplyRestored(r);
  (*m)->FinishRestore(5'000, /*complete_in_background=*/false);
  (*m)->CompleteRestore();
  const std::vector<TenantStats> tenants = (*m)->TenantStatsSnapshot();
  ASSERT_EQ(tenants.size(), 1u);
  EXPECT_EQ(tenants[0].tenant, "a");
  EXPECT_EQ(tenants[0].bytes, 4 * kPage);
  EXPECT_EQ(tenants[0].objects, 4u);
  EXPECT_EQ((*m)->TenantOrdered(), 3u);  // the pinned one is in no order
}

}  // namespace
}  // namespace crescent::master::testing
