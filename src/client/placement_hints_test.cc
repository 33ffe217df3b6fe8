// PlacementHints: the client's bounded memory of where same-host objects live.
// A hint matches only the exact replica it was taken from, and the table keeps
// at most `capacity` keys, dropping the oldest first.
#include "client/placement_hints.h"

#include <gtest/gtest.h>

#include <string>

namespace crescent::client {
namespace {

rpc::RemoteReplica Replica(uint64_t offset, uint64_t placement = 7) {
  rpc::RemoteReplica r;
  r.endpoint = "127.0.0.1:9000;shm=node";
  r.cap.segment = 3;
  r.cap.offset = offset;
  r.cap.length = 4096;
  r.placement = placement;
  return r;
}

TEST(PlacementHintsTest, RemembersAndMatchesTheExactReplica) {
  PlacementHints hints(8);
  EXPECT_FALSE(hints.Lookup("k").has_value());
  hints.Remember("k", Replica(4096));
  auto h = hints.Lookup("k");
  ASSERT_TRUE(h.has_value());
  EXPECT_TRUE(h->Matches(Replica(4096)));

  // Any differing field is another replica: the copied bytes would not be it.
  rpc::RemoteReplica r = Replica(4096);
  r.placement = 8;
  EXPECT_FALSE(h->Matches(r));
  r = Replica(8192);
  EXPECT_FALSE(h->Matches(r));
  r = Replica(4096);
  r.cap.length = 4095;
  EXPECT_FALSE(h->Matches(r));
  r = Replica(4096);
  r.cap.segment = 4;
  EXPECT_FALSE(h->Matches(r));
  r = Replica(4096);
  r.endpoint = "127.0.0.1:9001;shm=node";
  EXPECT_FALSE(h->Matches(r));
}

TEST(PlacementHintsTest, NewerHintReplacesOlder) {
  PlacementHints hints(8);
  hints.Remember("k", Replica(0, 1));
  hints.Remember("k", Replica(4096, 2));
  EXPECT_EQ(hints.size(), 1u);
  EXPECT_TRUE(hints.Lookup("k")->Matches(Replica(4096, 2)));
}

TEST(PlacementHintsTest, KeepsAtMostCapacityDroppingTheOldest) {
  PlacementHints hints(3);
  for (int i = 0; i < 5; ++i) hints.Remember("k" + std::to_string(i), Replica(uint64_t(i)));
  EXPECT_EQ(hints.size(), 3u);
  EXPECT_FALSE(hints.Lookup("k0").has_value());
  EXPECT_FALSE(hints.Lookup("k1").has_value());
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(hints.Lookup("k" + std::to_string(i)).has_value());

  // Re-remembering a key makes it the newest: k3 now outlives k4.
  hints.Remember("k2", Replica(9));
  hints.Remember("k3", Replica(10));
  hints.Remember("k5", Replica(11));
  EXPECT_EQ(hints.size(), 3u);
  EXPECT_FALSE(hints.Lookup("k4").has_value());
  EXPECT_TRUE(hints.Lookup("k2").has_value());
  EXPECT_TRUE(hints.Lookup("k3").has_value());
  EXPECT_TRUE(hints.Lookup("k5").has_value());
}

TEST(PlacementHintsTest, ChurnOnFewKeysStaysBounded) {
  PlacementHints hints(2);
  for (int i = 0; i < 10000; ++i) hints.Remember(i % 2 ? "a" : "b", Replica(uint64_t(i)));
  EXPECT_EQ(hints.size(), 2u);
  EXPECT_TRUE(hints.Lookup("a")->Matches(Replica(9999)));
  EXPECT_TRUE(hints.Lookup("b")->Matches(Replica(9998)));
}

TEST(PlacementHintsTest, ForgetClearAndZeroCapacity) {
  PlacementHints hints(4);
  hints.Remember("a", Replica(0));
  hints.Remember("b", Replica(1));
  hints.Forget("a");
  EXPECT_FALSE(hints.Lookup("a").has_value());
  EXPECT_TRUE(hints.Lookup("b").has_value());
  hints.Clear();
  EXPECT_EQ(hints.size(), 0u);

  PlacementHints off(0);
  off.Remember("a", Replica(0));
  EXPECT_FALSE(off.Lookup("a").has_value());
}

}  // namespace
}  // namespace crescent::client
