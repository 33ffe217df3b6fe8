// Session hints (EvictionPolicy::EndSession), checked on every registered
// policy: a marked page is the preferred victim until it is accessed again;
// the mark never removes anything, never overrides a spare, and ignores ids
// that are not tracked. Also: the adaptive policy's miniature simulations see
// the hints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cache/eviction_policy.h"
#include "cache/mini_simulation.h"
#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::Contains;
using ::testing::Not;

class SessionHintTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Pages 1..n, written in order as chains of one page each (no parents), so
  // every policy may evict any of them.
  std::unique_ptr<EvictionPolicy> MakeWith(int n) {
    auto made = MakePolicy(GetParam(), {.capacity = 1000});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    auto policy = std::move(made.value());
    for (ObjectId id = 1; id <= static_cast<ObjectId>(n); ++id) policy->Insert(id, 1);
    return policy;
  }
  // Hints pages first..last, in that order; returns them.
  static std::set<ObjectId> Mark(EvictionPolicy& policy, ObjectId first, ObjectId last) {
    std::set<ObjectId> marked;
    for (ObjectId id = first; id <= last; ++id) {
      policy.EndSession(id);
      marked.insert(id);
    }
    return marked;
  }
};

INSTANTIATE_TEST_SUITE_P(AllPolicies, SessionHintTest, ::testing::ValuesIn(PolicyNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST_P(SessionHintTest, HintedPagesGoBeforeOlderUnhintedOnesOldestMarkFirst) {
  auto policy = MakeWith(8);
  policy->EndSession(6);
  policy->EndSession(3);
  EXPECT_EQ(policy->Count(), 8u);  // a mark removes nothing by itself
  EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(6));
  EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(3));
  EXPECT_EQ(policy->Count(), 6u);
}

TEST_P(SessionHintTest, AnAccessClearsTheMark) {
  auto policy = MakeWith(8);
  policy->EndSession(6);
  policy->Access(6);
  const auto victims = DrainVictims(*policy);
  ASSERT_EQ(victims.size(), 8u);
  EXPECT_NE(victims.front(), 6u);
}

TEST_P(SessionHintTest, AMarkedPageCanBeHintedAgainAfterItsAccess) {
  auto policy = MakeWith(8);
  policy->EndSession(6);
  policy->Access(6);
  policy->EndSession(6);
  EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(6));
}

TEST_P(SessionHintTest, ASpareKeepsAMarkedPage) {
  auto policy = MakeWith(8);
  policy->EndSession(6);
  SpareRecorder spare{.keep = {6}};
  const auto victim = policy->Evict(spare.Fn());
  ASSERT_TRUE(victim.has_value());
  EXPECT_NE(*victim, 6u);
  EXPECT_TRUE(policy->Contains(6));
  EXPECT_THAT(spare.asked, Contains(6));
  // Every candidate spared: Evict() still gives up, marks or not.
  policy->EndSession(7);
  EXPECT_EQ(policy->Evict(SpareRecorder{.keep_all = true}.Fn()), std::nullopt);
  EXPECT_EQ(policy->Count(), 7u);
  // A spare is a lease or a pin, not a read: 6 kept its mark, and goes first
  // once nothing holds it.
  EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(6));
  EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(7));
}

// Many marked pages held by leases: one Evict() asks a bounded number of
// them, then evicts in the policy's own order; the marks stay for later.
TEST_P(SessionHintTest, ManyLeasedMarksCostABoundedNumberOfAsks) {
  auto policy = MakeWith(100);
  const std::set<ObjectId> marked = Mark(*policy, 60, 100);
  SpareRecorder spare{.keep = marked};
  const auto victim = policy->Evict(spare.Fn());
  ASSERT_TRUE(victim.has_value());
  EXPECT_FALSE(marked.contains(*victim)) << *victim;
  const auto asked_marked = std::count_if(spare.asked.begin(), spare.asked.end(),
                                          [&](ObjectId id) { return marked.contains(id); });
  EXPECT_LE(asked_marked, 8 + 41);  // the marks at most 8 times, the policy's own walk aside
  EXPECT_GE(asked_marked, 8);
  // Released: the marks go first again.
  const auto next = policy->Evict();
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(marked.contains(*next)) << *next;
}

// The pages a request read are leased when its session ends: their marks
// are spared for the lease. A later hint's pages, which nothing holds, must
// not wait behind them: once each leased mark has been asked, the next
// Evict() takes the newer mark, not a page of the policy's own order.
TEST_P(SessionHintTest, LeasedMarksDoNotHoldBackALaterHint) {
  auto policy = MakeWith(100);
  const std::set<ObjectId> leased = Mark(*policy, 60, 90);
  SpareRecorder spare{.keep = leased};
  // (Pages 91 to 100, the newest, are the policy's last victims.) Each of
  // these asks at most 8 marks, then evicts by the policy's order: after 5 of
  // them every leased mark has been asked once.
  for (int i = 0; i < 5; ++i) {
    const auto victim = policy->Evict(spare.Fn());
    ASSERT_TRUE(victim.has_value());
    EXPECT_FALSE(leased.contains(*victim)) << *victim;
  }
  policy->EndSession(91);
  for (ObjectId id = 92; id <= 94; ++id) {
    spare.asked.clear();
    policy->EndSession(id);
    EXPECT_EQ(policy->Evict(spare.Fn()), std::optional<ObjectId>(id - 1));
    EXPECT_LE(spare.asked.size(), 2u) << "the oldest leased mark, then the newer mark";
  }
  // Free again (their leases ended): the leased marks go before the newer one.
  policy->EndSession(95);
  const auto next = policy->Evict();
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(leased.contains(*next)) << *next;
}

TEST_P(SessionHintTest, UntrackedIdsAreIgnored) {
  auto hinted = MakeWith(5);
  auto plain = MakeWith(5);
  hinted->EndSession(99);
  EXPECT_FALSE(hinted->Contains(99));
  EXPECT_EQ(DrainVictims(*hinted), DrainVictims(*plain));
}

TEST_P(SessionHintTest, AHintOfARemovedIdIsHarmless) {
  auto hinted = MakeWith(5);
  auto plain = MakeWith(5);
  hinted->EndSession(2);
  for (auto* policy : {hinted.get(), plain.get()}) {
    policy->Remove(2);
    policy->Insert(2, 1);  // a new page under the same id: not marked
  }
  hinted->Remove(3);
  plain->Remove(3);
  hinted->EndSession(3);  // after its removal
  const auto victims = DrainVictims(*hinted);
  EXPECT_EQ(victims, DrainVictims(*plain));
  EXPECT_THAT(victims, Not(Contains(3)));
}

TEST(SessionHintChainTest, AMarkedPageWithCachedChildrenWaitsForThem) {
  // learned and prefix-lru evict leaves only: marked page 1 waits while its
  // child 2 is cached (another conversation may extend it), then goes first.
  for (const char* name : {"learned", "prefix-lru"}) {
    auto policy = std::move(MakePolicy(name, {.capacity = 1000}).value());
    policy->Insert(1, 1);
    policy->Insert(2, 1, {.parent = 1});
    for (ObjectId id = 3; id <= 6; ++id) policy->Insert(id, 1);
    policy->Access(2);  // the newest: the policy's own order keeps it longest
    policy->EndSession(1);
    EXPECT_NE(policy->Evict(), std::optional<ObjectId>(1)) << name;
    ASSERT_TRUE(policy->Contains(2)) << name;
    policy->EndSession(2);
    EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(2)) << name;
    EXPECT_EQ(policy->Evict(), std::optional<ObjectId>(1)) << name;
  }
}

TEST(SessionHintMiniSimulationTest, AHintedKeyIsTheMiniatureCachesNextVictim) {
  // lru at capacity 3: 1, 2, 3, then 4 evicts the oldest (1) unless 3 was
  // hinted, and the re-read of 3 then misses.
  auto hits_of_rereading_3 = [](bool hint) {
    MiniSimulation mini(std::move(MakePolicy("lru").value()), 3);
    for (uint64_t key : {1, 2, 3}) mini.Reference(key, kNoParent, 1, true);
    if (hint) mini.EndSession(3);
    mini.Reference(4, kNoParent, 1, true);
    mini.TakeWindow();
    mini.Reference(3, kNoParent, 1, true);
    return mini.TakeWindow().hits;
  };
  EXPECT_EQ(hits_of_rereading_3(false), 1u);
  EXPECT_EQ(hits_of_rereading_3(true), 0u);
}

}  // namespace
}  // namespace crescent::cache
