#include "cache/prefix_lru_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

// Notation: the LRU list is written oldest first; (x) is parked, a -> b means
// a is b's parent.

TEST(PrefixLruPolicyTest, ChainIsEvictedTailFirst) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1, {.parent = 2});  // 1 -> 2 -> 3; list 1 2 3
  // 1 and 2 have children: parked. 3 goes; 2 is a leaf again, at the old end.
  EXPECT_EQ(p.Evict(), 3u);
  EXPECT_EQ(p.Count(), 2u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1));
}

TEST(PrefixLruPolicyTest, LeavesGoInLruOrder) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1);
  p.Insert(4, 1, {.parent = 3});
  p.Insert(5, 1);  // 1 -> 2, 3 -> 4; list 1 2 3 4 5
  p.Access(2);     // list 1 3 4 5 2
  // 1 and 3 parked; 4 goes and 3 comes back at the old end: 3 5 2 (1).
  EXPECT_EQ(p.Evict(), 4u);
  EXPECT_EQ(p.Evict(), 3u);  // 5 2 (1)
  EXPECT_EQ(p.Evict(), 5u);  // 2 (1)
  EXPECT_EQ(p.Evict(), 2u);  // 1
  EXPECT_EQ(p.Evict(), 1u);
  EXPECT_EQ(p.Evict(), std::nullopt);
}

// A restore (docs/durability.md) inserts pages in eviction order, so a parent
// may come after its child: Link() makes the link Insert() would have made.
TEST(PrefixLruPolicyTest, LinkAfterInsertActsAsAParentAtInsert) {
  PrefixLruPolicy linked;
  for (ObjectId id : {3, 2, 1}) linked.Insert(id, 1);  // list 3 2 1
  linked.Link(3, 2);
  linked.Link(2, 1);  // 1 -> 2 -> 3
  EXPECT_EQ(linked.ParentOf(3), 2u);
  EXPECT_EQ(linked.ParentOf(2), 1u);
  EXPECT_EQ(linked.ParentOf(1), kNoParent);
  linked.Link(3, 1);  // 3 has a live parent: nothing changes
  EXPECT_EQ(linked.ParentOf(3), 2u);
  linked.Link(4, 1);  // untracked: nothing
  linked.Link(1, 1);  // itself: nothing
  EXPECT_EQ(linked.ParentOf(1), kNoParent);
  EXPECT_THAT(DrainVictims(linked), ElementsAre(3, 2, 1));
}

TEST(PrefixLruPolicyTest, ParentOfForgetsAStaleLink) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  EXPECT_EQ(p.ParentOf(2), 1u);
  p.Remove(1);
  p.Insert(5, 1);  // may reuse 1's slot
  EXPECT_EQ(p.ParentOf(2), kNoParent);
  EXPECT_EQ(p.ParentOf(9), kNoParent);
  p.Link(2, 5);  // no live parent now: the link is made
  EXPECT_EQ(p.ParentOf(2), 5u);
}

// Parked pages lead the order: inserted first, in that order, with their
// links made afterwards, a policy evicts as the first did.
TEST(PrefixLruPolicyTest, OrderListsParkedPagesFirstAndRebuildsTheSameVictims) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1, {.parent = 1});
  p.Insert(4, 1, {.parent = 2});
  p.Insert(5, 1);
  p.Access(1);               // parked only when it reaches the old end
  p.Access(2);               // list 3 4 5 1 2
  EXPECT_EQ(p.Evict(), 3u);  // 4 5 1 2
  EXPECT_EQ(p.Evict(), 4u);  // 5 1 2
  p.Insert(6, 1, {.parent = 2});
  p.Insert(7, 1);            // 5 1 2 6 7
  EXPECT_EQ(p.Evict(), 5u);  // 1 2 6 7
  EXPECT_EQ(p.Evict(), 6u);  // 1 and 2 parked, 6 goes, 2 comes back: 2 7 (1)
  // Rebuilt with the parked 1 after the list, 1 would outlive 7.
  std::vector<ObjectId> order;
  ASSERT_TRUE(p.VisitInEvictionOrder([&](ObjectId id) { order.push_back(id); }));
  PrefixLruPolicy copy;
  for (ObjectId id : order) copy.Insert(id, 1);
  for (ObjectId id : order) {
    if (p.ParentOf(id) != kNoParent) copy.Link(id, p.ParentOf(id));
  }
  EXPECT_THAT(DrainVictims(copy), ::testing::ContainerEq(DrainVictims(p)));
}

TEST(PrefixLruPolicyTest, PlainLruWithoutParents) {
  PrefixLruPolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  p.Access(1);  // 2 3 1
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 3, 1));
}

TEST(PrefixLruPolicyTest, AccessLeavesAParkedPageParked) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1, {.parent = 1});
  p.Insert(4, 1);            // 1 -> 2, 1 -> 3; list 1 2 3 4
  EXPECT_EQ(p.Evict(), 2u);  // 1 parked, 2 goes: 3 4 (1)
  p.Access(1);               // still parked: 3 4 (1)
  p.Access(3);               // 4 3 (1)
  p.Insert(5, 1);            // 4 3 5 (1)
  EXPECT_EQ(p.Evict(), 4u);
  // 3 goes, 1 is a leaf again and re-enters at the old end, ahead of 5.
  EXPECT_THAT(DrainVictims(p), ElementsAre(3, 1, 5));
}

TEST(PrefixLruPolicyTest, RemovingAParentUnlinksItsChildren) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1, {.parent = 2});  // 1 -> 2 -> 3
  p.Remove(2);                    // 3 loses its parent; 1 is a leaf now
  EXPECT_EQ(p.Count(), 2u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 3));
}

TEST(PrefixLruPolicyTest, RemovingAParkedParent) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1, {.parent = 1});  // 1 -> 2, 1 -> 3
  EXPECT_EQ(p.Evict(), 2u);       // 3 (1)
  p.Remove(1);                    // parked: just forgotten
  EXPECT_FALSE(p.Contains(1));
  EXPECT_EQ(p.UsedSize(), 1u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(3));
}

TEST(PrefixLruPolicyTest, StaleParentLinkIsIgnoredAfterSlotReuse) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});  // 1 -> 2
  p.Remove(1);                    // 2's link goes stale
  p.Insert(5, 1);                 // may reuse 1's slot
  p.Insert(6, 1, {.parent = 5});  // 5 -> 6; list 2 5 6
  // Evicting 2 must not touch 5's child count through the stale link; if it
  // did, 5 would look like a leaf and go before 6.
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 6, 5));
}

TEST(PrefixLruPolicyTest, UntrackedParentIsIgnored) {
  PrefixLruPolicy p;
  p.Insert(1, 1, {.parent = 99});
  p.Insert(2, 1, {.parent = 1});
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1));
  p.Insert(3, 1, {.parent = 2});  // 2 was evicted: 3 is a plain leaf
  p.Insert(4, 1);
  EXPECT_THAT(DrainVictims(p), ElementsAre(3, 4));
}

TEST(PrefixLruPolicyTest, SparesAskOnlyAboutLeaves) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  p.Insert(3, 1);  // 1 -> 2; list 1 2 3
  SpareRecorder spare{.keep = {2}};
  // 1 parked unasked; 2 spared and becomes newest; 3 goes: 2 (1).
  EXPECT_EQ(p.Evict(spare.Fn()), 3u);
  EXPECT_THAT(spare.asked, ElementsAre(2, 3));
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1));
}

TEST(PrefixLruPolicyTest, GivesUpAfterCountSpares) {
  PrefixLruPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1, {.parent = 1});
  SpareRecorder spare{.keep_all = true};
  EXPECT_EQ(p.Evict(spare.Fn()), std::nullopt);  // 2 is the only leaf
  EXPECT_THAT(spare.asked, ElementsAre(2, 2));   // Count() == 2 spares
  EXPECT_EQ(p.Count(), 2u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1));
}

}  // namespace
}  // namespace crescent::cache
