// LearnedPolicy's own behaviour (the shared contract, leaf-first included, is
// checked with the other policies in eviction_policy_test.cc).
#include "cache/learned_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::Contains;
using ::testing::Not;

// A cache of `capacity` pages driven as the simulator drives it: a reference
// hits (Access) or is inserted after evicting down to the capacity.
struct Driver {
  LearnedPolicy& policy;
  uint64_t capacity;
  std::vector<ObjectId> victims = {};
  uint64_t hits = 0;

  void Reference(ObjectId id, ObjectId parent = kNoParent, bool ends_write = false) {
    if (policy.Contains(id)) {
      policy.Access(id);
      ++hits;
      return;
    }
    while (policy.Count() >= capacity) victims.push_back(*policy.Evict());
    policy.Insert(id, 1, {.parent = parent, .ends_write = ends_write});
  }
};

// Hot keys come back every ~100 references, in a cache of 64 pages; a stream
// of one-off keys flows past them. LRU would lose the hot keys to the stream;
// once the model has learned that reused keys come back, it keeps them.
TEST(LearnedPolicyTest, LearnsToKeepReusedPagesAgainstAOneOffStream) {
  LearnedPolicy policy({.capacity = 64});
  Driver d{policy, 64};
  ObjectId fresh = 1'000'000;
  uint64_t hits_late = 0;
  for (int round = 0; round < 400; ++round) {
    if (round == 300) hits_late = d.hits;
    for (ObjectId hot = 0; hot < 40; ++hot) {
      d.Reference(hot);
      for (int i = 0; i < 2; ++i) d.Reference(fresh++);
    }
  }
  hits_late = d.hits - hits_late;  // over the last 100 rounds of 40 hot references
  EXPECT_GT(hits_late, 100u * 40 * 9 / 10);
}

// Chains of 10 pages (page chain*100+i's child is chain*100+i+1), some
// re-read: a victim's child is never cached when it is evicted.
TEST(LearnedPolicyTest, NeverEvictsAPageWithCachedChildren) {
  LearnedPolicy policy({.capacity = 30});
  for (ObjectId round = 0; round < 200; ++round) {
    const ObjectId chain = round % 3 == 0 ? round % 7 : round;
    for (ObjectId i = 0; i < 10; ++i) {
      const ObjectId id = chain * 100 + i;
      if (policy.Contains(id)) {
        policy.Access(id);
        continue;
      }
      while (policy.Count() >= 30) {
        const ObjectId victim = *policy.Evict();
        ASSERT_FALSE(policy.Contains(victim + 1)) << victim << " left before its child";
      }
      policy.Insert(id, 1, {.parent = i == 0 ? kNoParent : id - 1, .ends_write = i == 9});
    }
  }
  EXPECT_EQ(policy.Count(), 30u);
}

TEST(LearnedPolicyTest, GivesUpOnlyWhenEveryLeafWasSpared) {
  LearnedPolicy policy({.capacity = 100});
  for (ObjectId id = 1; id <= 10; ++id) policy.Insert(id, 1);
  SpareRecorder spare{.keep_all = true};
  EXPECT_EQ(policy.Evict(spare.Fn()), std::nullopt);
  EXPECT_EQ(std::set<ObjectId>(spare.asked.begin(), spare.asked.end()).size(), 10u);
  EXPECT_EQ(policy.Count(), 10u);
  EXPECT_EQ(policy.LeafCount(), 10u);  // the spared are candidates again
  SpareRecorder keep_seven{.keep = {7}};
  auto victims = DrainVictims(policy, keep_seven.Fn());
  EXPECT_EQ(victims.size(), 9u);
  EXPECT_THAT(victims, Not(Contains(7u)));
}

TEST(LearnedPolicyTest, TheSameSeedGivesTheSameVictims) {
  std::vector<ObjectId> first;
  for (int run = 0; run < 2; ++run) {
    LearnedPolicy policy({.capacity = 50, .seed = 9});
    Driver d{policy, 50};
    for (ObjectId i = 0; i < 5000; ++i) d.Reference((i * 7919) % 300, kNoParent, i % 5 == 0);
    if (run == 0)
      first = d.victims;
    else
      EXPECT_EQ(d.victims, first);
  }
}

TEST(LearnedPolicyTest, AdoptedLearningCarriesTheModel) {
  LearnedPolicy teacher({.capacity = 64});
  Driver d{teacher, 64};
  ObjectId fresh = 1'000'000;
  for (int round = 0; round < 200; ++round) {
    for (ObjectId hot = 0; hot < 40; ++hot) {
      d.Reference(hot);
      d.Reference(fresh++);
    }
  }
  LearnedPolicy student({.capacity = 64});
  student.AdoptLearning(teacher, /*recent_keys=*/true);
  EXPECT_EQ(student.model().Density(1, 0), teacher.model().Density(1, 0));
  EXPECT_GT(student.model().Density(1, 0), 0.0);
}

}  // namespace
}  // namespace crescent::cache
