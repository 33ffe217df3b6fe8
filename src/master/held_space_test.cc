// HeldSpace: slots come back once their time has come, in no case before;
// bytes() counts what is held; slots on forgotten segments never come back.
#include "master/held_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace crescent::master {
namespace {

ReplicaSlot Slot(SegmentId segment, uint64_t offset) {
  ReplicaSlot s;
  s.segment = segment;
  s.offset = offset;
  return s;
}

TEST(HeldSpaceTest, SlotsComeBackOnlyOnceTheirTimeHasCome) {
  HeldSpace held;
  held.Hold({Slot(1, 0), Slot(2, 0)}, 64, /*until=*/200);
  held.Hold({Slot(1, 64)}, 128, /*until=*/100);
  EXPECT_EQ(held.bytes(), 2 * 64 + 128u);
  EXPECT_TRUE(held.TakeDue(99).empty());
  EXPECT_EQ(held.TakeDue(100), std::vector<ReplicaSlot>{Slot(1, 64)});
  EXPECT_EQ(held.bytes(), 128u);
  EXPECT_TRUE(held.TakeDue(199).empty());
  EXPECT_EQ(held.TakeDue(500), (std::vector<ReplicaSlot>{Slot(1, 0), Slot(2, 0)}));
  EXPECT_EQ(held.bytes(), 0u);
  EXPECT_TRUE(held.TakeDue(1000).empty());
}

TEST(HeldSpaceTest, HoldingNoSlotsHoldsNothing) {
  HeldSpace held;
  held.Hold({}, 64, 100);
  EXPECT_EQ(held.bytes(), 0u);
  EXPECT_TRUE(held.TakeDue(100).empty());
}

TEST(HeldSpaceTest, SlotsOnForgottenSegmentsNeverComeBack) {
  HeldSpace held;
  held.Hold({Slot(1, 0), Slot(2, 0), Slot(3, 0)}, 64, 100);
  held.Hold({Slot(2, 64)}, 32, 50);
  const std::vector<SegmentId> gone{2};
  held.ForgetOn(gone);
  EXPECT_EQ(held.bytes(), 2 * 64u);
  EXPECT_EQ(held.TakeDue(100), (std::vector<ReplicaSlot>{Slot(1, 0), Slot(3, 0)}));
  EXPECT_EQ(held.bytes(), 0u);
}

TEST(HeldSpaceTest, ConcurrentHoldersAndTakersLoseNoSlot) {
  HeldSpace held;
  constexpr int kThreads = 4, kEach = 2000;
  std::atomic<size_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        held.Hold({Slot(t + 1, i)}, 8, i);
        taken += held.TakeDue(i / 2).size();
      }
    });
  }
  for (auto& th : threads) th.join();
  taken += held.TakeDue(kEach).size();
  EXPECT_EQ(taken.load(), size_t{kThreads} * kEach);
  EXPECT_EQ(held.bytes(), 0u);
}

}  // namespace
}  // namespace crescent::master
