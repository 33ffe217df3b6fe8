// ClockGate on given instants: a node's clock measured against the master's at
// heartbeats, steps of either clock, and the hold after a step back of the
// master's clock. Time here is explicit: "wall" is the node's Unix clock,
// "steady" its monotonic one.
#include "transfer/clock_gate.h"

#include <gtest/gtest.h>

namespace crescent::transfer {
namespace {

constexpr int64_t kGrace = 1000;
constexpr int64_t kLifetime = 30000;
constexpr int64_t kUnix = 1'700'000'000'000;  // the master's wall clock at steady 0

// A heartbeat sent at steady `at` that took 2 ms, to a master whose wall clock
// reads kUnix + at + master_offset.
ClockGate::Reading Beat(int64_t at, int64_t master_offset = 0) {
  ClockGate::Reading r;
  r.sent_steady_ms = at;
  r.received_steady_ms = at + 2;
  r.master_unix_ms = kUnix + at + 1 + master_offset;
  r.grace_ms = kGrace;
  r.lifetime_ms = kLifetime;
  return r;
}

TEST(ClockGateTest, OpenUntilTheFirstReadingAndWhileTheClocksAgree) {
  ClockGate gate;
  EXPECT_TRUE(gate.Open(0, 0)) << "no reading: nothing to judge by";
  ASSERT_TRUE(gate.Record(Beat(100)));
  EXPECT_TRUE(gate.Open(kUnix + 5000, 5000));
  EXPECT_TRUE(gate.Check(kUnix + 5000 + kGrace, 5000).ok()) << "within the grace";
  EXPECT_EQ(gate.SkewMs(kUnix + 5000 + 300, 5000), 300);
}

TEST(ClockGateTest, ANodeBehindOrAheadByMoreThanTheGraceRefusesWithAClearError) {
  for (int64_t off : {-5000, 5000}) {
    ClockGate gate;
    ASSERT_TRUE(gate.Record(Beat(100)));
    // The node's wall clock reads `off` away from the master's.
    const Status s = gate.Check(kUnix + 200 + off, 200);
    EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
    EXPECT_NE(s.message().find("clock is 5000 ms " + std::string(off < 0 ? "behind" : "ahead of") +
                               " the master's"),
              std::string::npos)
        << s.message();
    EXPECT_FALSE(gate.Open(kUnix + 200 + off, 200));
  }
}

// A step of the node's own wall clock is seen at the next check, not only at
// the next heartbeat; stepped back, it serves again (nothing was signed in
// another frame).
TEST(ClockGateTest, AStepOfTheNodesClockClosesTheGateAtOnce) {
  ClockGate gate;
  ASSERT_TRUE(gate.Record(Beat(0)));
  EXPECT_TRUE(gate.Open(kUnix + 400, 400));
  EXPECT_FALSE(gate.Open(kUnix + 500 - 3000, 500)) << "stepped back 3 s";
  EXPECT_TRUE(gate.Open(kUnix + 600, 600)) << "stepped forward again";
}

// The master's clock ahead by more than the grace: refused at the next
// reading. When it steps back, the capabilities it signed meanwhile carry
// expiries late by the step: refused for the longest lifetime plus the step.
TEST(ClockGateTest, AfterTheMastersClockStepsBackTheGateHoldsForTheLongestCapability) {
  ClockGate gate;
  ASSERT_TRUE(gate.Record(Beat(0)));
  ASSERT_TRUE(gate.Record(Beat(1000, 4000)));  // the master stepped 4 s forward
  EXPECT_FALSE(gate.Open(kUnix + 1100, 1100));
  ASSERT_TRUE(gate.Record(Beat(2000)));  // and back
  const int64_t until = 2002 + kLifetime + 4000;
  EXPECT_TRUE(gate.SkewMs(kUnix + 2100, 2100) == 0);
  const Status s = gate.Check(kUnix + 2100, 2100);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("stepped back 4000 ms"), std::string::npos) << s.message();
  EXPECT_FALSE(gate.Open(kUnix + until - 1, until - 1));
  // A step of the node's wall clock cannot shorten it: the hold is steady time.
  EXPECT_FALSE(gate.Open(kUnix + until + 100000, 2200));
  EXPECT_TRUE(gate.Open(kUnix + until, until));
}

TEST(ClockGateTest, ReadingsWithoutAClockOrTooUncertainAreIgnored) {
  ClockGate gate;
  ClockGate::Reading none = Beat(0);
  none.master_unix_ms = 0;  // a master from before
  EXPECT_FALSE(gate.Record(none));
  ClockGate::Reading slow = Beat(0);
  slow.received_steady_ms = slow.sent_steady_ms + 2 * kGrace + 10;
  EXPECT_FALSE(gate.Record(slow));
  EXPECT_FALSE(gate.measured());
  EXPECT_TRUE(gate.Open(kUnix + 1'000'000, 0));
}

}  // namespace
}  // namespace crescent::transfer
