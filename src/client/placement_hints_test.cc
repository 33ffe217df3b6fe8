// PlacementHints: the client's bounded memory of where same-host objects live.
// A hint matches only the exact replica it was taken from, and the table keeps
// at most `capacity` keys, dropping the oldest first.
#include "client/placement_hints.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace crescent::client {
namespace {

std::string Key(int i) { return std::string("k").append(std::to_string(i)); }

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
  EXPECT_FALSE(hints.Lookup("k", 0).has_value());
  hints.Remember("k", Replica(4096), 0);
  auto h = hints.Lookup("k", 0);
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
  hints.Remember("k", Replica(0, 1), 0);
  hints.Remember("k", Replica(4096, 2), 0);
  EXPECT_EQ(hints.size(), 1u);
  EXPECT_TRUE(hints.Lookup("k", 0)->Matches(Replica(4096, 2)));
}

TEST(PlacementHintsTest, KeepsAtMostCapacityDroppingTheOldest) {
  PlacementHints hints(3);
  for (int i = 0; i < 5; ++i) hints.Remember(Key(i), Replica(uint64_t(i)), 0);
  EXPECT_EQ(hints.size(), 3u);
  EXPECT_FALSE(hints.Lookup("k0", 0).has_value());
  EXPECT_FALSE(hints.Lookup("k1", 0).has_value());
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(hints.Lookup(Key(i), 0).has_value());

  // Re-remembering a key makes it the newest: k3 now outlives k4.
  hints.Remember("k2", Replica(9), 0);
  hints.Remember("k3", Replica(10), 0);
  hints.Remember("k5", Replica(11), 0);
  EXPECT_EQ(hints.size(), 3u);
  EXPECT_FALSE(hints.Lookup("k4", 0).has_value());
  EXPECT_TRUE(hints.Lookup("k2", 0).has_value());
  EXPECT_TRUE(hints.Lookup("k3", 0).has_value());
  EXPECT_TRUE(hints.Lookup("k5", 0).has_value());
}

TEST(PlacementHintsTest, ChurnOnFewKeysStaysBounded) {
  PlacementHints hints(2);
  for (int i = 0; i < 10000; ++i) hints.Remember(i % 2 ? "a" : "b", Replica(uint64_t(i)), 0);
  EXPECT_EQ(hints.size(), 2u);
  EXPECT_TRUE(hints.Lookup("a", 0)->Matches(Replica(9999)));
  EXPECT_TRUE(hints.Lookup("b", 0)->Matches(Replica(9998)));
}

// A hint is trusted only for a bounded time after it was last confirmed (the
// master's placements repeat only after 2^32 allocations on one segment).
TEST(PlacementHintsTest, OldHintsAreDropped) {
  PlacementHints hints(4, /*max_age_ms=*/1000);
  hints.Remember("k", Replica(0), 5000);
  EXPECT_TRUE(hints.Lookup("k", 6000).has_value());
  hints.Remember("k", Replica(0), 6000);  // confirmed again: good for longer
  EXPECT_TRUE(hints.Lookup("k", 7000).has_value());
  EXPECT_FALSE(hints.Lookup("k", 7001).has_value());
  EXPECT_EQ(hints.size(), 0u);
}

// The reply confirms a hint only with a live read of the same range and
// allocation, for an object of the hinted size.
TEST(PlacementHintsTest, ConfirmingNeedsALiveReadOfTheSameAllocation) {
  PlacementHints hints(4);
  hints.Remember("k", Replica(4096), 0);
  const PlacementHint h = *hints.Lookup("k", 0);
  const int64_t now = 1'000'000;
  auto read = [&](uint64_t placement = 7) {
    rpc::RemoteReplica r = Replica(4096, placement);
    r.cap.op = transfer::AccessOp::kRead;
    r.cap.expiry_unix_ms = now + 10'000;
    return r;
  };
  std::vector<rpc::RemoteReplica> replicas = {Replica(0, 1), read()};
  EXPECT_EQ(Confirming(h, 4096, replicas, now), &replicas[1]);

  EXPECT_EQ(Confirming(h, 4096, {read(8)}, now), nullptr);  // reused range
  EXPECT_EQ(Confirming(h, 4095, {read()}, now), nullptr);   // another size
  rpc::RemoteReplica write = read();
  write.cap.op = transfer::AccessOp::kWrite;
  EXPECT_EQ(Confirming(h, 4096, {write}, now), nullptr);
  rpc::RemoteReplica expired = read();
  expired.cap.expiry_unix_ms = now;
  EXPECT_EQ(Confirming(h, 4096, {expired}, now), nullptr);
  EXPECT_EQ(Confirming(h, 4096, {}, now), nullptr);
}

TEST(PlacementHintsTest, ForgetClearAndZeroCapacity) {
  PlacementHints hints(4);
  hints.Remember("a", Replica(0), 0);
  hints.Remember("b", Replica(1), 0);
  hints.Forget("a");
  EXPECT_FALSE(hints.Lookup("a", 0).has_value());
  EXPECT_TRUE(hints.Lookup("b", 0).has_value());
  hints.Clear();
  EXPECT_EQ(hints.size(), 0u);

  PlacementHints off(0);
  off.Remember("a", Replica(0), 0);
  EXPECT_FALSE(off.Lookup("a", 0).has_value());
}

}  // namespace
}  // namespace crescent::client
