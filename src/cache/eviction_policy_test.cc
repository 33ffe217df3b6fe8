// The contract of eviction_policy.h, checked on every registered policy, plus
// a randomised run of each policy against a model. Per-policy victim orders are
// in <name>_policy_test.cc.
#include "cache/eviction_policy.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;
using ::testing::UnorderedElementsAreArray;

TEST(PolicyRegistryTest, ListsEveryPolicyOnce) {
  EXPECT_THAT(PolicyNames(), ElementsAre("fifo", "lru", "sieve", "s3fifo", "slru", "prefix-lru",
                                         "learned", "adaptive"));
}

TEST(PolicyRegistryTest, UnknownNameIsInvalidArgument) {
  auto policy = MakePolicy("mru");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), ErrorCode::kInvalidArgument);
}

TEST(PolicyRegistryTest, PassesOptionsThrough) {
  // The s3fifo threshold decides whether one hit in S is enough to move to M
  // (see s3fifo_policy_test.cc): with 2, the once-hit 1 is evicted first.
  auto policy = MakePolicy("s3fifo", {.capacity = 10, .s3fifo_move_threshold = 2});
  ASSERT_TRUE(policy.ok());
  auto& p = *policy.value();
  p.Insert(1, 1);
  p.Insert(2, 1);
  p.Access(1);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2));
}

class PolicyContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<EvictionPolicy> Make(const PolicyOptions& options = {.capacity = 1000}) {
    auto policy = MakePolicy(GetParam(), options);
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    return std::move(policy.value());
  }
};

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyContractTest, ::testing::ValuesIn(PolicyNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST_P(PolicyContractTest, NameMatchesRegistry) { EXPECT_EQ(Make()->Name(), GetParam()); }

TEST_P(PolicyContractTest, EmptyPolicyHasNothingToEvict) {
  auto p = Make();
  p->Access(1);
  p->Remove(1);
  EXPECT_FALSE(p->Contains(1));
  EXPECT_EQ(p->Count(), 0u);
  EXPECT_EQ(p->UsedSize(), 0u);
  EXPECT_EQ(p->Evict(), std::nullopt);
}

TEST_P(PolicyContractTest, RemovedIdsAreNeverVictims) {
  auto p = Make();
  std::vector<ObjectId> odd;
  for (ObjectId id = 1; id <= 100; ++id) {
    p->Insert(id, 1, {.parent = id > 1 ? id - 1 : kNoParent});
    if (id % 2 == 1) odd.push_back(id);
  }
  for (ObjectId id = 1; id <= 100; id += 3) p->Access(id);
  for (ObjectId id = 2; id <= 100; id += 2) p->Remove(id);
  EXPECT_EQ(p->Count(), 50u);
  EXPECT_THAT(DrainVictims(*p), UnorderedElementsAreArray(odd));
  EXPECT_EQ(p->UsedSize(), 0u);
}

TEST_P(PolicyContractTest, SizesAreSummedExactly) {
  auto p = Make({.capacity = uint64_t{1} << 40});
  p->Insert(1, uint64_t{3} << 30);
  p->Insert(2, 7);
  p->Insert(3, uint64_t{5} << 30);
  EXPECT_EQ(p->UsedSize(), (uint64_t{8} << 30) + 7);
  p->Remove(3);
  EXPECT_EQ(p->UsedSize(), (uint64_t{3} << 30) + 7);
  DrainVictims(*p);
  EXPECT_EQ(p->UsedSize(), 0u);
}

TEST_P(PolicyContractTest, SparedIdIsNeverEvicted) {
  auto p = Make({.capacity = 20});
  for (ObjectId id = 1; id <= 20; ++id) p->Insert(id, 1);
  for (ObjectId id = 1; id <= 20; id += 4) p->Access(id);
  SpareRecorder spare{.keep = {7}};
  auto victims = DrainVictims(*p, spare.Fn());
  EXPECT_EQ(victims.size(), 19u);
  EXPECT_THAT(victims, Not(Contains(7u)));
  EXPECT_TRUE(p->Contains(7));
  EXPECT_EQ(p->Evict(), 7u);
}

TEST_P(PolicyContractTest, EvictedIdsCanComeBack) {
  auto p = Make({.capacity = 5});
  for (int round = 0; round < 3; ++round) {
    for (ObjectId id = 1; id <= 5; ++id) p->Insert(id, 1);
    EXPECT_EQ(p->Count(), 5u);
    auto victims = DrainVictims(*p);
    EXPECT_THAT(victims, UnorderedElementsAreArray({1u, 2u, 3u, 4u, 5u}));
  }
}

TEST_P(PolicyContractTest, DuplicateInsertAssertsAndChangesNothing) {
  auto p = Make();
  p->Insert(1, 4);
  p->Insert(2, 4, {.parent = 1});
  // A caller bug: asserts in debug builds, ignored in release ones.
  EXPECT_DEBUG_DEATH(p->Insert(1, 100), "already tracked");
  EXPECT_EQ(p->Count(), 2u);
  EXPECT_EQ(p->UsedSize(), 8u);
  EXPECT_EQ(DrainVictims(*p).size(), 2u);
}

TEST_P(PolicyContractTest, SetCapacityKeepsEverything) {
  auto p = Make({.capacity = 10});
  for (ObjectId id = 1; id <= 10; ++id) p->Insert(id, 1);
  p->SetCapacity(2);  // the owner evicts, not the policy
  EXPECT_EQ(p->Count(), 10u);
  p->SetCapacity(100);
  EXPECT_EQ(DrainVictims(*p).size(), 10u);
}

// Drives a policy with random inserts (chained and not), hits, removes, spared
// evictions and capacity changes, the way the master does, and checks it
// against a model of what is tracked.
// How a policy treats chains: `leaf_victims`, it only evicts pages without
// cached children; `leaf_candidates`, it gives up once every page without
// cached children was spared (the adaptive policy does when it follows a
// leaf-first candidate, and it may follow either kind).
struct ChainRules {
  bool leaf_victims = false;
  bool leaf_candidates = false;
};

ChainRules ChainRulesOf(const std::string& policy) {
  if (policy == "prefix-lru" || policy == "learned") return {true, true};
  if (policy == "adaptive") return {false, true};
  return {};
}

class ModelDriver {
 public:
  ModelDriver(EvictionPolicy& policy, uint64_t capacity, ChainRules rules)
      : policy_(policy), capacity_(capacity), rules_(rules) {}

  void Run(uint64_t seed, int ops) {
    std::mt19937_64 rng(seed);
    auto below = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
    for (int op = 0; op < ops; ++op) {
      const ObjectId id = below(kIdSpace);
      const uint64_t kind = below(100);
      if (kind < 45) {
        if (model_.contains(id)) {
          policy_.Access(id);
        } else {
          // Mostly chains: the previous page of the "request" as parent.
          const ObjectId parent = below(4) != 0 ? last_inserted_ : below(kIdSpace);
          Insert(id, 1 + below(8), parent);
        }
      } else if (kind < 70) {
        policy_.Access(id);  // tracked or not
      } else if (kind < 82) {
        policy_.Remove(id);
        if (model_.contains(id)) Forget(id);
      } else if (kind < 97) {
        const uint64_t lease_epoch = op / 2000;
        auto leased = [&](ObjectId x) { return (x + lease_epoch) % 5 == 0; };
        auto victim = policy_.Evict(leased);
        if (victim) {
          ASSERT_FALSE(leased(*victim)) << *victim;
          CheckVictim(*victim);
        } else {
          // Giving up is only right when no candidate is left unleased.
          for (const auto& [x, entry] : model_) {
            if (rules_.leaf_candidates && !entry.children.empty()) continue;
            ASSERT_TRUE(leased(x)) << x << " was evictable";
          }
        }
      } else if (kind < 98) {
        capacity_ = 100 + below(400);
        policy_.SetCapacity(capacity_);
        MakeRoom(0);
      } else {
        ASSERT_EQ(policy_.Contains(id), model_.contains(id)) << id;
      }
      ASSERT_EQ(policy_.Count(), model_.size()) << "op " << op;
      ASSERT_EQ(policy_.UsedSize(), used_) << "op " << op;
      ASSERT_LE(used_, capacity_) << "op " << op;
      if (HasFatalFailure()) return;
    }
    // Everything left comes out exactly once.
    for (auto victim = policy_.Evict(); victim; victim = policy_.Evict()) {
      CheckVictim(*victim);
      if (HasFatalFailure()) return;
    }
    EXPECT_TRUE(model_.empty());
    EXPECT_EQ(policy_.UsedSize(), 0u);
  }

 private:
  static constexpr ObjectId kIdSpace = 600;
  struct Entry {
    uint64_t size;
    ObjectId parent;
    absl::flat_hash_set<ObjectId> children;
  };
  static bool HasFatalFailure() { return ::testing::Test::HasFatalFailure(); }

  void Insert(ObjectId id, uint64_t size, ObjectId parent) {
    MakeRoom(size);
    if (HasFatalFailure()) return;
    // An untracked parent is ignored; so is one evicted by MakeRoom just now.
    if (!model_.contains(parent)) parent = kNoParent;
    policy_.Insert(id, size, {.parent = parent});
    model_[id] = Entry{size, parent, {}};
    if (parent != kNoParent) model_[parent].children.insert(id);
    used_ += size;
    last_inserted_ = id;
  }

  void MakeRoom(uint64_t size) {
    while (policy_.UsedSize() + size > capacity_) {
      auto victim = policy_.Evict();
      ASSERT_TRUE(victim.has_value()) << "nothing evictable while over capacity";
      CheckVictim(*victim);
      if (HasFatalFailure()) return;
    }
  }

  void CheckVictim(ObjectId victim) {
    auto it = model_.find(victim);
    ASSERT_NE(it, model_.end()) << "victim " << victim << " is not tracked";
    if (rules_.leaf_victims) {
      ASSERT_TRUE(it->second.children.empty()) << victim << " has cached children";
    }
    ASSERT_FALSE(policy_.Contains(victim));
    Forget(victim);
  }

  void Forget(ObjectId id) {
    auto node = model_.extract(id);
    used_ -= node.mapped().size;
    if (node.mapped().parent != kNoParent) model_[node.mapped().parent].children.erase(id);
    for (ObjectId child : node.mapped().children) model_[child].parent = kNoParent;
  }

  EvictionPolicy& policy_;
  uint64_t capacity_;
  const ChainRules rules_;
  absl::flat_hash_map<ObjectId, Entry> model_;
  uint64_t used_ = 0;
  ObjectId last_inserted_ = kNoParent;
};

TEST_P(PolicyContractTest, RandomOperationsMatchTheModel) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    auto p = Make({.capacity = 300});
    ModelDriver(*p, 300, ChainRulesOf(GetParam())).Run(seed, 60'000);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace crescent::cache
