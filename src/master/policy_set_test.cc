// PolicySet: admissions go to the soft policy while a pin lasts, else to
// their tier's; ended soft pins come out in order; a restore's fill defers
// admissions and replays forgets and tier moves on the filled set; waiters
// for the fill wake when it ends; persistent-tier reads make promotions.
#include "master/policy_set.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace crescent::master {
namespace {

MasterConfig Config() {
  MasterConfig c;
  c.eviction_policy = "lru";
  c.pmem_promote_hits = 2;
  c.pmem_promote_window_ms = 100;
  return c;
}

PolicySet::Admission Admit(ObjectId id, Tier tier = Tier::kDram, TimeMs soft_until = 0) {
  return {.id = id, .size = 10, .tier = tier, .soft_until = soft_until, .info = {}};
}

TEST(PolicySetTest, AnAdmissionGoesToTheSoftPolicyWhileItsPinLastsElseToItsTier) {
  const MasterConfig config = Config();
  PolicySet set(config, PolicySet::Make(config).value());
  auto order = set.Lock();
  order.Admit(Admit(1), /*now=*/10);
  order.Admit(Admit(2, Tier::kPmem), 10);
  order.Admit(Admit(3, Tier::kDram, /*soft_until=*/50), 10);
  order.Admit(Admit(4, Tier::kDram, /*soft_until=*/5), 10);  // already ended
  EXPECT_TRUE(order.main().Contains(1));
  EXPECT_TRUE(order.pmem().Contains(2));
  EXPECT_TRUE(order.soft().Contains(3));
  EXPECT_TRUE(order.main().Contains(4));
  EXPECT_FALSE(order.PopEndedSoftPin(49).has_value());
  EXPECT_EQ(order.PopEndedSoftPin(50), std::optional<ObjectId>(3));
  EXPECT_FALSE(order.soft().Contains(3));
  EXPECT_FALSE(order.PopEndedSoftPin(1000).has_value());
}

TEST(PolicySetTest, ASoftPinForgottenBeforeItEndsIsNotReturned) {
  const MasterConfig config = Config();
  PolicySet set(config, PolicySet::Make(config).value());
  auto order = set.Lock();
  order.Admit(Admit(7, Tier::kDram, 20), 0);
  const ObjectId gone[] = {7};
  order.Forget(gone);
  EXPECT_FALSE(order.PopEndedSoftPin(100).has_value());
}

TEST(PolicySetTest, JoinPmemMovesOnlyWhatMainHolds) {
  const MasterConfig config = Config();
  PolicySet set(config, PolicySet::Make(config).value());
  auto order = set.Lock();
  order.Admit(Admit(1), 0);
  order.Admit(Admit(2, Tier::kDram, 100), 0);  // soft-pinned: stays
  const PolicySet::PolicyMove moves[] = {{1, 10, 0}, {2, 10, 0}, {3, 10, 0}};
  order.JoinPmem(moves);
  EXPECT_FALSE(order.main().Contains(1));
  EXPECT_TRUE(order.pmem().Contains(1));
  EXPECT_TRUE(order.soft().Contains(2));
  EXPECT_FALSE(order.pmem().Contains(2));
  EXPECT_FALSE(order.pmem().Contains(3));
}

TEST(PolicySetTest, AFillReplaysWhatCameMeanwhileOnTheFilledSet) {
  const MasterConfig config = Config();
  PolicySet set(config, PolicySet::Make(config).value());
  {
    auto order = set.Lock();
    order.BeginFill();
    EXPECT_TRUE(order.filling());
    order.Defer(Admit(10));  // a PutEnd during the fill
    order.Defer(Admit(11));  // one whose object is gone by the end
    const ObjectId gone[] = {2};
    order.Forget(gone);  // removed after the fill saw it live
    const PolicySet::PolicyMove moved[] = {{3, 10, 0}};
    order.JoinPmem(moved);  // left with its persistent copy only
  }
  PolicySet::Policies filled = PolicySet::Make(config).value();
  for (ObjectId id : {1, 2, 3}) filled.main->Insert(id, 10, {});
  auto order = set.Lock();
  order.EndFill(
      std::move(filled), {}, 1000, 1000, [](ObjectId id) { return id != 11; }, 0);
  EXPECT_FALSE(order.filling());
  EXPECT_TRUE(order.main().Contains(1));
  EXPECT_FALSE(order.main().Contains(2));
  EXPECT_TRUE(order.pmem().Contains(3));
  EXPECT_TRUE(order.main().Contains(10));
  EXPECT_FALSE(order.main().Contains(11));
  // The restored objects come first in the eviction order, then the late one.
  EXPECT_EQ(order.main().Evict([](ObjectId) { return false; }), std::optional<ObjectId>(1));
}

TEST(PolicySetTest, AWaiterForTheFillWakesWhenItEnds) {
  const MasterConfig config = Config();
  PolicySet set(config, PolicySet::Make(config).value());
  set.Lock().BeginFill();
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    set.Lock().AwaitFilled();
    woke = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(woke.load());
  set.Lock().EndFill(
      PolicySet::Make(config).value(), {}, 0, 0, [](ObjectId) { return true; }, 0);
  waiter.join();
  EXPECT_TRUE(woke.load());
}

TEST(PolicySetTest, APersistentObjectReadTwiceInTheWindowIsPromotedOnce) {
  const MasterConfig config = Config();
  PolicySet set(config, PolicySet::Make(config).value());
  auto order = set.Lock();
  order.Admit(Admit(5, Tier::kPmem), 0);
  order.Admit(Admit(6), 0);
  order.Access(5, 0);
  order.Access(6, 0);  // DRAM: never a candidate
  order.Access(6, 1);
  EXPECT_TRUE(order.TakePromotions().empty());
  order.Access(5, 200);  // outside the window: counts as a first read again
  EXPECT_TRUE(order.TakePromotions().empty());
  order.Access(5, 250);
  EXPECT_EQ(order.TakePromotions(), std::vector<ObjectId>{5});
  EXPECT_TRUE(order.TakePromotions().empty());
}

TEST(PolicySetTest, TouchesComeOutInTheOrderReadsQueuedThem) {
  MasterConfig config = Config();
  config.touch_queue_capacity = 2;
  PolicySet set(config, PolicySet::Make(config).value());
  EXPECT_TRUE(set.NoteTouch(8));
  EXPECT_TRUE(set.NoteTouch(9));
  EXPECT_FALSE(set.NoteTouch(10));  // full: the reader folds it into the lease
  auto order = set.Lock();
  ObjectId id = 0;
  ASSERT_TRUE(order.PopTouch(&id));
  EXPECT_EQ(id, 8u);
  ASSERT_TRUE(order.PopTouch(&id));
  EXPECT_EQ(id, 9u);
  EXPECT_FALSE(order.PopTouch(&id));
}

}  // namespace
}  // namespace crescent::master
