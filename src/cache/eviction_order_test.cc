// EvictionPolicy::VisitInEvictionOrder (what the master's snapshots record):
// for the list policies (and adaptive while it follows them, draining
// policy first) it lists the tracked ids in the order Evict() would take
// them; a policy without such a sequence says so and lists nothing.
#include <gtest/gtest.h>

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

TEST(EvictionOrderTest, DuringAMoveTheDrainingPolicyComesFirst) {
  PolicyHandover handover(MakePolicy("lru").value());
  for (ObjectId id = 1; id <= 5; ++id) handover.Insert(id, 1, {});
  handover.Access(1);
  handover.Switch(MakePolicy("fifo").value());
  for (ObjectId id = 6; id <= 8; ++id) handover.Insert(id, 1, {});
  std::vector<ObjectId> order;
  ASSERT_TRUE(handover.VisitInEvictionOrder([&](ObjectId id) { order.push_back(id); }));
  EXPECT_EQ(order, (std::vector<ObjectId>{2, 3, 4, 5, 1, 6, 7, 8}));
  std::vector<ObjectId> victims;
  while (auto v = handover.Evict(nullptr)) victims.push_back(*v);
  EXPECT_EQ(victims, order);

  // A draining policy with an order and a live one without: nothing is listed.
  PolicyHandover mixed(MakePolicy("lru").value());
  mixed.Insert(1, 1, {});
  mixed.Switch(MakePolicy("s3fifo", {.capacity = 10}).value());
  mixed.Insert(2, 1, {});
  order.clear();
  EXPECT_FALSE(mixed.VisitInEvictionOrder([&](ObjectId id) { order.push_back(id); }));
  EXPECT_TRUE(order.empty());
}

}  // namespace
}  // namespace crescent::cache
