#include "client/suspect_nodes.h"

#include <gtest/gtest.h>

namespace crescent::client {
namespace {

TEST(SuspectNodesTest, ASuspicionLastsItsHoldTime) {
  SuspectNodes s(100);
  EXPECT_FALSE(s.IsSuspect("h:1;epoch=1", 0));
  s.Mark("h:1;epoch=1", 1000);
  EXPECT_TRUE(s.IsSuspect("h:1;epoch=1", 1000));
  EXPECT_TRUE(s.IsSuspect("h:1;epoch=1", 1099));
  EXPECT_FALSE(s.IsSuspect("h:1;epoch=1", 1100));
  // Another mount of the same node (another epoch) is another endpoint.
  EXPECT_FALSE(s.IsSuspect("h:1;epoch=2", 1000));
  // A new failure extends it.
  s.Mark("h:1;epoch=1", 1050);
  EXPECT_TRUE(s.IsSuspect("h:1;epoch=1", 1149));
}

TEST(SuspectNodesTest, StaysBoundedForgettingTheOldestFirst) {
  SuspectNodes s(1'000'000);
  for (size_t i = 0; i < SuspectNodes::kMaxEntries + 10; ++i) {
    s.Mark("node" + std::to_string(i), static_cast<int64_t>(i));
  }
  EXPECT_EQ(s.size(), SuspectNodes::kMaxEntries);
  EXPECT_FALSE(s.IsSuspect("node0", 0));
  EXPECT_TRUE(s.IsSuspect("node" + std::to_string(SuspectNodes::kMaxEntries + 9), 0));
}

}  // namespace
}  // namespace crescent::client
