// EvictionPolicy::VisitInEvictionOrder (what the master's snapshots record):
// for the list policies (and adaptive while it follows one, outside a move)
// it lists the tracked ids in the order Evict() would take them; a policy
// without such a sequence says so and lists nothing.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "cache/adaptive_policy.h"
#include "cache/eviction_policy.h"
#include "cache/policy_handover.h"
#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

std::vector<ObjectId> Order(const EvictionPolicy& p, bool* listed = nullptr) {
  std::vector<ObjectId> out;
  const bool ok = p.VisitInEvictionOrder([&](ObjectId id) { out.push_back(id); });
  if (listed != nullptr) *listed = ok;
  return out;
}

// What a copy lists, in its order; *listed: whether it had a sequence.
std::vector<ObjectId> Listed(const EvictionOrder& copy, bool* listed) {
  std::vector<ObjectId> out;
  *listed = copy.Visit([&](ObjectId id) { out.push_back(id); });
  return out;
}

// Fifty ids, some read again and one removed: an order with moves and a gap.
void FillWithMovesAndAGap(EvictionPolicy& policy) {
  for (ObjectId id = 1; id <= 50; ++id) policy.Insert(id, 1);
  for (ObjectId id : {7, 3, 44, 7}) policy.Access(id);
  policy.Remove(10);
}

class EvictionOrderTest : public ::testing::TestWithParam<const char*> {};

TEST_P(EvictionOrderTest, ListsWhatEvictWouldTakeInOrder) {
  auto p = MakePolicy(GetParam());
  ASSERT_TRUE(p.ok());
  EvictionPolicy& policy = **p;
  for (ObjectId id = 1; id <= 20; ++id) policy.Insert(id, 1);
  for (ObjectId id : {5, 2, 17, 5}) policy.Access(id);
  policy.Remove(9);
  bool listed = false;
  const std::vector<ObjectId> order = Order(policy, &listed);
  ASSERT_TRUE(listed);
  EXPECT_EQ(order.size(), policy.Count());
  EXPECT_EQ(order, DrainVictims(policy));
}

// CopyEvictionOrder: the copy lists what VisitInEvictionOrder listed when it
// was taken, whatever happens to the policy afterwards.
TEST_P(EvictionOrderTest, ACopyKeepsTheOrderOfItsMoment) {
  auto p = MakePolicy(GetParam());
  ASSERT_TRUE(p.ok());
  EvictionPolicy& policy = **p;
  FillWithMovesAndAGap(policy);
  const std::vector<ObjectId> expected = Order(policy);
  std::unique_ptr<EvictionOrder> copy = policy.NewEvictionOrder();
  copy->Reserve(4);  // too small: the copy grows
  policy.CopyEvictionOrder(*copy);
  for (ObjectId id = 100; id <= 200; ++id) policy.Insert(id, 1);
  policy.Remove(3);
  policy.Access(1);
  bool listed = false;
  const std::vector<ObjectId> got = Listed(*copy, &listed);
  ASSERT_TRUE(listed);
  EXPECT_EQ(got, expected);
}

// Copied in parts, with nothing changing between them, the copy is the
// whole order of its moment.
TEST_P(EvictionOrderTest, ACopyInPartsOfAnUnchangedPolicyIsTheWholeOrder) {
  auto p = MakePolicy(GetParam());
  ASSERT_TRUE(p.ok());
  EvictionPolicy& policy = **p;
  FillWithMovesAndAGap(policy);
  const std::vector<ObjectId> expected = Order(policy);
  std::unique_ptr<EvictionOrder> copy = policy.NewEvictionOrder();
  copy->Reserve(policy.Count());
  int calls = 1;
  while (!policy.CopyEvictionOrderPart(*copy, 4)) ++calls;
  // The list policies copy 4 slots a call; slru keeps the default, one call.
  if (std::string_view(GetParam()) != "slru") {
    EXPECT_GT(calls, 10);
  }
  policy.Insert(1000, 1);  // after the copy: not in it
  bool listed = false;
  const std::vector<ObjectId> got = Listed(*copy, &listed);
  ASSERT_TRUE(listed);
  EXPECT_EQ(got, expected);
}

// Between parts the policy moves, drops and adds ids. The copy then gives
// every id that stayed tracked and untouched exactly once, and nothing that
// was never tracked.
TEST_P(EvictionOrderTest, ACopyInPartsListsEveryUntouchedIdOnce) {
  auto p = MakePolicy(GetParam());
  ASSERT_TRUE(p.ok());
  EvictionPolicy& policy = **p;
  for (ObjectId id = 1; id <= 60; ++id) policy.Insert(id, 1);
  std::unique_ptr<EvictionOrder> copy = policy.NewEvictionOrder();
  copy->Reserve(8);
  std::set<ObjectId> touched;
  ObjectId next = 100;
  int step = 0;
  while (!policy.CopyEvictionOrderPart(*copy, 5)) {
    // Each step touches ids spread over the array, ahead of and behind the copy.
    const ObjectId a = 1 + (step * 7) % 60;
    const ObjectId b = 1 + (step * 13 + 5) % 60;
    policy.Access(a);
    touched.insert(a);
    if (policy.Contains(b)) {
      policy.Remove(b);
      touched.insert(b);
      if (step % 2 == 0) policy.Insert(b, 1);  // tracked again, maybe in another slot
    }
    policy.Insert(next++, 1);
    ++step;
  }
  std::map<ObjectId, int> seen;
  ASSERT_TRUE(copy->Visit([&](ObjectId id) { ++seen[id]; }));
  for (ObjectId id = 1; id <= 60; ++id) {
    if (!touched.contains(id)) {
      EXPECT_EQ(seen[id], 1) << "id " << id << " after " << step << " steps";
    }
  }
  for (const auto& [id, n] : seen) {
    EXPECT_TRUE(id <= 60 || (id >= 100 && id < next)) << id;
    EXPECT_LE(n, 2) << id;
  }
  // The list policies' copies really were taken in parts, with changes
  // between; slru keeps the default, one part.
  if (std::string_view(GetParam()) != "slru") {
    EXPECT_GT(step, 3);
  }
}

TEST(EvictionOrderTest, TheDefaultCopyOfAPolicyWithoutASequenceListsNothing) {
  auto p = MakePolicy("s3fifo");
  ASSERT_TRUE(p.ok());
  (*p)->Insert(1, 1);
  std::unique_ptr<EvictionOrder> copy = (*p)->NewEvictionOrder();
  copy->Reserve(10);
  (*p)->CopyEvictionOrder(*copy);
  bool called = false;
  EXPECT_FALSE(copy->Visit([&](ObjectId) { called = true; }));
  EXPECT_FALSE(called);
}

INSTANTIATE_TEST_SUITE_P(ListPolicies, EvictionOrderTest,
                         ::testing::Values("fifo", "lru", "slru", "prefix-lru"));

class NoSequenceTest : public ::testing::TestWithParam<const char*> {};

// s3fifo's two queues, learned's sampling (and adaptive, which starts as
// learned) keep no single sequence.
TEST_P(NoSequenceTest, SaysSoAndListsNothing) {
  auto p = MakePolicy(GetParam(), {.capacity = 10});
  ASSERT_TRUE(p.ok());
  (*p)->Insert(1, 1);
  (*p)->Insert(2, 1, {.parent = 1});
  bool listed = true;
  EXPECT_TRUE(Order(**p, &listed).empty());
  EXPECT_FALSE(listed);
}

INSTANTIATE_TEST_SUITE_P(SampledOrQueued, NoSequenceTest,
                         ::testing::Values("s3fifo", "learned", "adaptive"));

TEST(EvictionOrderTest, AdaptiveListsItsLivePolicysOrder) {
  AdaptivePolicy policy({.capacity = 100}, {{"lru", "lru", {}}, {"fifo", "fifo", {}}});
  for (ObjectId id = 1; id <= 20; ++id) policy.Insert(id, 1);
  for (ObjectId id : {5, 2, 17}) policy.Access(id);
  bool listed = false;
  const std::vector<ObjectId> order = Order(policy, &listed);
  ASSERT_TRUE(listed);
  EXPECT_EQ(order, DrainVictims(policy));
}

TEST(EvictionOrderTest, DuringAMoveThereIsNoSingleSequence) {
  PolicyHandover handover(MakePolicy("lru").value());
  for (ObjectId id = 1; id <= 5; ++id) handover.Insert(id, 1, {});
  handover.Switch(MakePolicy("fifo").value());
  handover.Insert(6, 1, {});
  std::vector<ObjectId> order;
  EXPECT_FALSE(handover.VisitInEvictionOrder([&](ObjectId id) { order.push_back(id); }));
  EXPECT_TRUE(order.empty());
  // Once the old policy has drained, the live one's order is listed again.
  while (handover.Draining()) ASSERT_TRUE(handover.Evict(nullptr).has_value());
  EXPECT_TRUE(handover.VisitInEvictionOrder([&](ObjectId id) { order.push_back(id); }));
}

}  // namespace
}  // namespace crescent::cache
