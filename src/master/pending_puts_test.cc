// PendingPuts: a put's record is there from Start to End and no longer; the
// deadline order hands out the oldest put still in flight and drops ended
// ones from its front by itself.
#include "master/pending_puts.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace crescent::master {
namespace {

PendingPuts::LivePut Put(TimeMs deadline, uint64_t attempt = 0, std::string parent = "") {
  return {std::move(parent), attempt, deadline, /*ends_write=*/false};
}

TEST(PendingPutsTest, AStartedPutIsFoundUntilItEnds) {
  PendingPuts p;
  p.Start(7, {"parent", 42, 100, true});
  EXPECT_EQ(p.ParentKey(7), "parent");
  EXPECT_EQ(p.DeadlineIfAttempt(7, 42), std::optional<TimeMs>(100));
  EXPECT_EQ(p.DeadlineIfAttempt(7, 43), std::nullopt);  // another attempt
  EXPECT_EQ(p.DeadlineIfAttempt(8, 42), std::nullopt);  // another put
  std::optional<PendingPuts::LivePut> ended = p.End(7);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->parent_key, "parent");
  EXPECT_EQ(ended->attempt, 42u);
  EXPECT_EQ(ended->deadline, 100);
  EXPECT_TRUE(ended->ends_write);
  EXPECT_FALSE(p.End(7).has_value());  // ended once only
  EXPECT_EQ(p.ParentKey(7), "");
  EXPECT_EQ(p.DeadlineIfAttempt(7, 42), std::nullopt);
}

TEST(PendingPutsTest, TheOldestPutInFlightComesFirst) {
  PendingPuts p;
  EXPECT_FALSE(p.Oldest().has_value());
  p.Start(1, Put(10));
  p.Start(2, Put(20));
  p.Start(3, Put(30));
  ASSERT_TRUE(p.Oldest().has_value());
  EXPECT_EQ(p.Oldest()->id, 1u);
  (void)p.End(2);  // ended behind a live one: stays queued until the front goes
  EXPECT_EQ(p.queued(), 3u);
  (void)p.End(1);  // the front ends: the ended ones behind it go with it
  EXPECT_EQ(p.queued(), 1u);
  ASSERT_TRUE(p.Oldest().has_value());
  EXPECT_EQ(p.Oldest()->id, 3u);
  EXPECT_EQ(p.Oldest()->deadline, 30);
}

TEST(PendingPutsTest, PopOldestDropsOnlyTheFront) {
  PendingPuts p;
  p.Start(1, Put(10));
  p.Start(2, Put(20));
  p.PopOldest(2);  // not the front: nothing
  EXPECT_EQ(p.queued(), 2u);
  p.PopOldest(1);
  EXPECT_EQ(p.queued(), 1u);
  EXPECT_EQ(p.Oldest()->id, 2u);
}

TEST(PendingPutsTest, ConcurrentStartsAndEndsLeaveNothingBehind) {
  PendingPuts p;
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const ObjectId id = uint64_t(t) << 32 | uint64_t(i);
        p.Start(id, Put(i, i + 1));
        EXPECT_EQ(p.DeadlineIfAttempt(id, i + 1), std::optional<TimeMs>(i));
        EXPECT_TRUE(p.End(id).has_value());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(p.Oldest().has_value());
  EXPECT_EQ(p.queued(), 0u);
}

}  // namespace
}  // namespace crescent::master
