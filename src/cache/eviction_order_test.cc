// EvictionPolicy::VisitInEvictionOrder (what the master's snapshots record):
// for the list policies it lists the tracked ids in the order Evict() would
// take them; a policy without such a sequence says so and lists nothing.
#include <gtest/gtest.h>

#include <vector>

#include "cache/eviction_policy.h"
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
                         ::testing::Values("fifo", "lru", "prefix-lru"));

TEST(EvictionOrderTest, S3FifoKeepsNoSingleSequence) {
  auto p = MakePolicy("s3fifo");
  ASSERT_TRUE(p.ok());
  (*p)->Insert(1, 1);
  bool listed = true;
  EXPECT_TRUE(Order(**p, &listed).empty());
  EXPECT_FALSE(listed);
}

}  // namespace
}  // namespace crescent::cache
