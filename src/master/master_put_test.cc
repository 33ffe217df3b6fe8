// Put lifecycle: PutStart / PutEnd / PutRevoke, batch and chain forms, timeouts.
#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

using PutTest = MasterTest;

TEST_F(PutTest, PutThenGetReturnsReplicaOfRequestedSize) {
  SegmentId seg = Mount("seg-a", 1 << 20);
  auto start = master().PutStart("k", 1000, {});
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  ASSERT_EQ(start->replicas.size(), 1u);
  EXPECT_EQ(start->replicas[0].segment, seg);
  EXPECT_EQ(start->replicas[0].length, 1000u);
  EXPECT_EQ(start->replicas[0].endpoint, "node-a:7000");
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size, 1000u);
  EXPECT_EQ(read->replicas[0].offset, start->replicas[0].offset);
}

// Clients trust "same placement" to mean "same allocation, bytes unchanged"
// (client/placement_hints.h): a range freed and handed out again, even to the
// same key at the same offset, must get a new placement.
TEST_F(PutTest, ReusedRangeGetsANewPlacement) {
  config_.heartbeat_ttl_ms = int64_t{1} << 40;  // the clock jumps past a lease below
  Mount("seg-a", 1 << 20);
  auto first = master().PutStart("k", 4096, {});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(master().PutEnd("k", first->token).ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->replicas[0].placement, first->replicas[0].placement);
  ASSERT_TRUE(master().Remove("k", true).ok());
  // The read's lease (+ the capability grace) holds the range.
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms);
  master().RunMaintenance();

  auto second = master().PutStart("k", 4096, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->replicas[0].offset, first->replicas[0].offset);  // the freed range, reused
  EXPECT_NE(second->replicas[0].placement, first->replicas[0].placement);
  auto other = master().PutStart("other", 4096, {});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->replicas[0].placement, second->replicas[0].placement);
  EXPECT_NE(other->replicas[0].placement, first->replicas[0].placement);
}

// Every replica keeps the placement its put handed out, the second one (kept
// out of line in the entry's heap block) too, also after the other replica's
// segment is gone.
TEST_F(PutTest, ReadsReportThePlacementsThePutHandedOut) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig two;
  two.replica_count = 2;
  auto start = master().PutStart("k", 4096, two);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(start->replicas.size(), 2u);
  EXPECT_NE(start->replicas[0].placement, start->replicas[1].placement);
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 2u);
  for (const ReplicaDescriptor& r : read->replicas) {
    const auto& put =
        r.segment == start->replicas[0].segment ? start->replicas[0] : start->replicas[1];
    EXPECT_EQ(r.offset, put.offset);
    EXPECT_EQ(r.placement, put.placement);
  }
  const ReplicaDescriptor& second = start->replicas[1];
  const std::string gone = second.endpoint == "node-a:7000" ? "seg-a" : "seg-b";
  ASSERT_TRUE(master().UnmountSegment(gone, gone == "seg-a" ? "node-a" : "node-b").ok());
  read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].placement, start->replicas[0].placement);
}

TEST_F(PutTest, PendingObjectIsInvisibleUntilPutEnd) {
  Mount("seg-a", 1 << 20);
  auto start = master().PutStart("k", 100, {});
  ASSERT_TRUE(start.ok());
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_EQ(master().GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  EXPECT_TRUE(*master().Exists("k"));
}

TEST_F(PutTest, DuplicatePutFailsAndChangesNothing) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  uint64_t used = master().Stats().used_bytes;
  EXPECT_EQ(master().PutStart("k", 200, {}).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(master().Stats().used_bytes, used);
  EXPECT_EQ(master().GetReplicaList("k")->size, 100u);
}

// A revoked put forgets its key at once, but its space is fenced: the
// writer's capability stays valid until the put's deadline (another lane of
// that writer may still be copying), so the range waits that long plus the
// grace before another object may have it.
TEST_F(PutTest, PutRevokeForgetsTheKeyAndFencesTheSpaceUntilTheDeadline) {
  config_.put_timeout_ms = 1000;
  Mount("seg-a", 1 << 20);
  auto start = master().PutStart("k", 4096, {});
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->deadline, clock_.NowMs() + config_.put_timeout_ms);
  ASSERT_TRUE(master().PutRevoke("k", start->token).ok());
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().Stats().held_bytes, 4096u);
  auto again = master().PutStart("k", 4096, {});  // the key is free again...
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->replicas[0].offset, start->replicas[0].offset);  // ...its range is not
  ASSERT_TRUE(master().PutRevoke("k", again->token).ok());

  clock_.Advance(config_.put_timeout_ms + config_.capability_grace_ms - 1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 2u * 4096);
  clock_.Advance(1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  auto later = master().PutStart("k", 4096, {});
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->replicas[0].offset, start->replicas[0].offset);  // now it is reused
}

TEST_F(PutTest, PutEndWithoutPutStartFails) {
  Mount("seg-a", 1 << 20);
  EXPECT_EQ(master().PutEnd("nope", 0).code(), ErrorCode::kPutNotStarted);
  auto start = master().PutStart("k", 10, {});
  ASSERT_TRUE(start.ok());
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  EXPECT_EQ(master().PutEnd("k", 0).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().PutRevoke("k", start->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_TRUE(Readable("k"));
}

// A PutEnd retried after its reply was lost finds its own put ended: it
// succeeds again and publishes nothing twice.
TEST_F(PutTest, EndingAPutAgainWithItsTokenSucceedsOnce) {
  Mount("seg-a", 1 << 20);
  auto start = master().PutStart("k", 100, {});
  ASSERT_TRUE(start.ok());
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  const MasterStats once = master().Stats();
  EXPECT_TRUE(master().PutEnd("k", start->token).ok());
  EXPECT_EQ(master().Stats().objects, 1u);
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().Stats().used_bytes, once.used_bytes);
  Status revoke = master().PutRevoke("k", start->token);
  EXPECT_EQ(revoke.code(), ErrorCode::kPutNotStarted);
  EXPECT_NE(revoke.message().find("has ended"), std::string::npos) << revoke.ToString();
  EXPECT_TRUE(Readable("k"));
}

TEST_F(PutTest, TimedOutPutIsDiscardedAndSpaceReclaimed) {
  config_.put_timeout_ms = 1000;
  Mount("seg-a", 1 << 20);
  auto start = master().PutStart("k", 4096, {});
  ASSERT_TRUE(start.ok());
  clock_.Advance(999);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().pending_puts, 1u);
  clock_.Advance(2);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().PutEnd("k", start->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().counters().expired_puts.load(), 1u);
  // A writer stalled with a capability that expired at the deadline may still
  // deliver bytes on a node whose clock runs behind: fenced for the grace.
  EXPECT_EQ(master().Stats().held_bytes, 4096u);
  clock_.Advance(config_.capability_grace_ms);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

// A retried PutStart (same attempt) gets the first try's deadline back, not a
// fresh one: the capabilities it carries must not outlive the put.
TEST_F(PutTest, ARepeatedAttemptKeepsTheFirstDeadline) {
  Mount("seg-a", 1 << 20);
  auto first = master().PutStart("k", 1000, {}, 7);
  ASSERT_TRUE(first.ok());
  clock_.Advance(500);
  auto retry = master().PutStart("k", 1000, {}, 7);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->token, first->token);
  EXPECT_EQ(retry->deadline, first->deadline);
}

// A writer stalled past the put timeout must not end, or revoke, the put that
// another writer has since started on the same key: its PutEnd would publish
// bytes that are not (all) written yet.
TEST_F(PutTest, AStaleTokenCannotEndOrRevokeALaterPutOfTheKey) {
  config_.put_timeout_ms = 1000;
  Mount("seg-a", 1 << 20);
  auto stale = master().PutStart("k", 4096, {});
  ASSERT_TRUE(stale.ok());
  clock_.Advance(1001);
  master().RunMaintenance();
  ASSERT_EQ(master().Stats().pending_puts, 0u);
  auto fresh = master().PutStart("k", 4096, {});
  ASSERT_TRUE(fresh.ok());
  ASSERT_NE(fresh->token, stale->token);

  Status end = master().PutEnd("k", stale->token);
  EXPECT_EQ(end.code(), ErrorCode::kPutNotStarted);
  EXPECT_NE(end.message().find("is not the one this token names"), std::string::npos)
      << end.ToString();
  EXPECT_FALSE(*master().Exists("k")) << "the later put's bytes are not written yet";
  EXPECT_EQ(master().PutRevoke("k", stale->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().Stats().pending_puts, 1u) << "the later put must survive";
  EXPECT_EQ(master()
                .BatchPutEnd(std::vector<std::string>{"k"}, std::vector<uint64_t>{stale->token})[0]
                .code(),
            ErrorCode::kPutNotStarted);

  ASSERT_TRUE(master().PutEnd("k", fresh->token).ok());
  EXPECT_EQ(master().GetReplicaList("k")->replicas[0].placement, fresh->replicas[0].placement);
}

// A restarted master starts its slab afresh, so the same key may land in the
// same slot at the same generation: the incarnation's random value still keeps
// a token from before the restart from ending a put made after it.
TEST_F(PutTest, ATokenFromAnotherIncarnationEndsNothing) {
  Mount("seg-a", 1 << 20);
  auto before = master().PutStart("k", 100, {});
  ASSERT_TRUE(before.ok());
  m_.reset();
  Start();
  Mount("seg-a", 1 << 20);
  auto after = master().PutStart("k", 100, {});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(master().PutEnd("k", before->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().PutRevoke("k", before->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_TRUE(master().PutEnd("k", after->token).ok());
}

// A token names one put of one key: another key's token, or none, ends nothing.
TEST_F(PutTest, ATokenEndsOnlyItsOwnPut) {
  Mount("seg-a", 1 << 20);
  auto a = master().PutStart("a", 100, {});
  auto b = master().PutStart("b", 100, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->token, b->token);
  EXPECT_EQ(master().PutEnd("a", b->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().PutEnd("a", 0).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().PutRevoke("b", a->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().Stats().pending_puts, 2u);
  EXPECT_TRUE(master().PutEnd("a", a->token).ok());
  EXPECT_TRUE(master().PutRevoke("b", b->token).ok());
  EXPECT_TRUE(*master().Exists("a"));
  EXPECT_FALSE(*master().Exists("b"));
}

// One grant reveals nothing of another. Built as x ^ (a random value per
// engine), the xor of two tokens was the xor of their puts' ids, and that of
// two placements the xor of their allocations: the tokens of a fresh engine's
// puts (ids of generation 0) all agreed in bits 32 to 55, the placements in
// one segment (its id and an allocation counter) in their high 32 bits. Keyed
// hashes agree there by chance alone: 2^-24 and 2^-32 per pair, so over these
// 4950 pairs more than two such pairs is, by chance, out of the question.
TEST_F(PutTest, GrantsShareNoXorRelation) {
  Mount("seg-a", 64 << 20);
  std::vector<uint64_t> tokens, placements;
  for (int i = 0; i < 100; ++i) {
    auto g = master().PutStart("k" + std::to_string(i), 100, {});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    tokens.push_back(g->token);
    placements.push_back(g->replicas[0].placement);
  }
  size_t tokens_related = 0, placements_related = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    for (size_t j = i + 1; j < tokens.size(); ++j) {
      if ((((tokens[i] ^ tokens[j]) >> 32) & 0xffffff) == 0) ++tokens_related;
      if (((placements[i] ^ placements[j]) >> 32) == 0) ++placements_related;
    }
  }
  EXPECT_LE(tokens_related, 2u);
  EXPECT_LE(placements_related, 2u);
}

// A revoked put's token is dead too, even when the key is started again at
// once (its slab slot is then likely reused).
TEST_F(PutTest, ARevokedPutsTokenDoesNotEndTheNextPut) {
  Mount("seg-a", 1 << 20);
  auto first = master().PutStart("k", 100, {});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(master().PutRevoke("k", first->token).ok());
  auto second = master().PutStart("k", 100, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(master().PutEnd("k", first->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_TRUE(master().PutEnd("k", second->token).ok());
}

// A PutStart retried after its reply was lost carries the same attempt: it
// gets the same grant back (same replicas, same token, nothing allocated
// again) instead of a conflict with its own pending put. Anything else that
// finds the key is still a conflict.
TEST_F(PutTest, ARepeatedAttemptGetsItsOwnGrantBack) {
  Mount("seg-a", 1 << 20);
  auto first = master().PutStart("k", 1000, {}, /*attempt=*/42);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const uint64_t used = master().Stats().used_bytes;
  auto again = master().PutStart("k", 1000, {}, 42);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->token, first->token);
  ASSERT_EQ(again->replicas.size(), first->replicas.size());
  EXPECT_EQ(again->replicas[0].segment, first->replicas[0].segment);
  EXPECT_EQ(again->replicas[0].offset, first->replicas[0].offset);
  EXPECT_EQ(again->replicas[0].placement, first->replicas[0].placement);
  EXPECT_EQ(master().Stats().used_bytes, used);
  EXPECT_EQ(master().Stats().pending_puts, 1u);

  EXPECT_EQ(master().PutStart("k", 1000, {}, 43).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(master().PutStart("k", 999, {}, 42).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(master().PutStart("k", 1000, {}, 0).status().code(), ErrorCode::kObjectAlreadyExists);
  ASSERT_TRUE(master().PutEnd("k", again->token).ok());
  // Ended: the object exists; the same attempt is a conflict now.
  EXPECT_EQ(master().PutStart("k", 1000, {}, 42).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(master().Stats().used_bytes, used);

  // Without an attempt, a repeat is always a conflict.
  ASSERT_TRUE(master().PutStart("plain", 10, {}).ok());
  EXPECT_EQ(master().PutStart("plain", 10, {}).status().code(), ErrorCode::kObjectAlreadyExists);
}

// A put that timed out is gone: the same attempt then starts a new put, and
// the old grant's token ends nothing.
TEST_F(PutTest, ARepeatedAttemptAfterTheTimeoutStartsAfresh) {
  config_.put_timeout_ms = 1000;  // within the segment's heartbeat TTL
  Mount("seg-a", 1 << 20);
  auto first = master().PutStart("k", 1000, {}, 7);
  ASSERT_TRUE(first.ok());
  clock_.Advance(config_.put_timeout_ms + 1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  auto fresh = master().PutStart("k", 1000, {}, 7);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_NE(fresh->token, first->token);
  EXPECT_EQ(master().PutEnd("k", first->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_TRUE(master().PutEnd("k", fresh->token).ok());
}

TEST_F(PutTest, BatchPutStartWantsNoAttemptsOrOnePerKey) {
  Mount("seg-a", 1 << 20);
  const std::vector<std::string> keys = {"a", "b"};
  const std::vector<uint64_t> sizes = {10, 20};
  for (const auto& r : master().BatchPutStart(keys, sizes, {}, false, std::vector<uint64_t>{5})) {
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("2 keys but 1 put attempts"), std::string::npos);
  }
  EXPECT_EQ(master().Stats().pending_puts, 0u);  // none started
  const std::vector<uint64_t> attempts = {5, 6};
  auto first = master().BatchPutStart(keys, sizes, {}, false, attempts);
  auto again = master().BatchPutStart(keys, sizes, {}, false, attempts);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(first[i].ok() && again[i].ok()) << i;
    EXPECT_EQ(again[i]->token, first[i]->token) << i;
  }
  // Attempts are per key: b's attempt does not repeat a's put.
  EXPECT_EQ(master().PutStart("a", 10, {}, 6).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(master().Stats().pending_puts, 2u);
}

TEST_F(PutTest, InvalidInputIsRejected) {
  Mount("seg-a", 1 << 20);
  EXPECT_EQ(master().PutStart("", 10, {}).status().code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(master().PutStart(std::string(1025, 'x'), 10, {}).status().code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(master().PutStart("k", 0, {}).status().code(), ErrorCode::kInvalidSize);
  EXPECT_EQ(master().PutStart("k", 2 << 20, {}).status().code(), ErrorCode::kInvalidSize);
  // Entries hold sizes in 40 bits: anything from 1 TiB up is refused as such.
  auto huge = master().PutStart("k", uint64_t{1} << 40, {});
  EXPECT_EQ(huge.status().code(), ErrorCode::kInvalidSize);
  EXPECT_NE(huge.status().message().find("largest supported object"), std::string::npos);
  PutConfig zero;
  zero.replica_count = 0;
  EXPECT_EQ(master().PutStart("k", 10, zero).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_EQ(master().Stats().pending_puts, 0u);
}

// Retryable: a cluster that is starting (or whose nodes remount on a
// restarted master) has a segment moments later.
TEST_F(PutTest, NoSegmentMeansUnavailable) {
  EXPECT_EQ(master().PutStart("k", 10, {}).status().code(), ErrorCode::kUnavailable);
}

// Watermark eviction starts once used reaches high_watermark x capacity: an
// object that gets there on its own would be evicted by the next maintenance
// pass after its put succeeded, so it is refused up front.
TEST_F(PutTest, AnObjectThatAloneReachesTheHighWatermarkIsRefused) {
  config_.high_watermark = 0.5;
  Mount("seg-a", 64 << 10);
  Status s = master().PutStart("big", 32 << 10, {}).status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidSize);
  EXPECT_NE(s.message().find("high watermark"), std::string::npos) << s.ToString();
  ASSERT_TRUE(Put("fits", (32 << 10) - 64).ok());
  master().RunMaintenance();
  EXPECT_TRUE(*master().Exists("fits"));
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  // Replicas count: two of 16 KiB on two segments reach the mark together.
  Mount("seg-b", 64 << 10, "node-b");
  PutConfig two;
  two.replica_count = 2;
  EXPECT_EQ(master().PutStart("pair", 32 << 10, two).status().code(), ErrorCode::kInvalidSize);
  EXPECT_TRUE(master().PutStart("pair", (32 << 10) - 64, two).ok());
}

// A hard-pinned object is never evicted, so the mark does not apply to it.
TEST_F(PutTest, AHardPinnedObjectMayReachTheHighWatermark) {
  config_.high_watermark = 0.5;
  Mount("seg-a", 64 << 10);
  EXPECT_EQ(master().PutStart("big", 48 << 10, {}).status().code(), ErrorCode::kInvalidSize);
  PutConfig pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(Put("big", 48 << 10, pinned).ok());
  master().RunMaintenance();
  EXPECT_TRUE(*master().Exists("big"));
}

TEST_F(PutTest, BatchPutKeepsInputOrderAndReportsEachKey) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("b", 10).ok());
  std::vector<std::string> keys = {"a", "b", "c"};
  std::vector<uint64_t> sizes = {10, 20, 30};
  auto starts = master().BatchPutStart(keys, sizes, {});
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_TRUE(starts[0].ok());
  EXPECT_EQ(starts[1].status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_TRUE(starts[2].ok());
  EXPECT_EQ(starts[2]->replicas[0].length, 30u);
  const std::vector<uint64_t> tokens = {starts[0]->token, 0, starts[2]->token};
  auto ends = master().BatchPutEnd(keys, tokens);
  EXPECT_TRUE(ends[0].ok());
  EXPECT_EQ(ends[1].code(), ErrorCode::kPutNotStarted);
  EXPECT_TRUE(ends[2].ok());
  EXPECT_EQ(master().GetReplicaList("b")->size, 10u);
}

TEST_F(PutTest, BatchEndAndRevokeWantATokenPerKey) {
  Mount("seg-a", 1 << 20);
  std::vector<std::string> keys = {"a", "b"};
  std::vector<uint64_t> sizes = {10, 20};
  auto starts = master().BatchPutStart(keys, sizes, {});
  ASSERT_TRUE(starts[0].ok() && starts[1].ok());
  // Too few or too many tokens: every key fails and nothing is applied.
  const std::vector<uint64_t> one = {starts[0]->token};
  for (const Status& s : master().BatchPutEnd(keys, one)) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  }
  const std::vector<uint64_t> three = {starts[0]->token, starts[1]->token, 0};
  for (const Status& s : master().BatchPutRevoke(keys, three)) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(master().Stats().pending_puts, 2u);
  const std::vector<uint64_t> both = {starts[0]->token, starts[1]->token};
  auto ends = master().BatchPutEnd(std::span(keys).first(1), std::span(both).first(1));
  EXPECT_TRUE(ends[0].ok());
  auto revokes = master().BatchPutRevoke(keys, both);
  EXPECT_EQ(revokes[0].code(), ErrorCode::kPutNotStarted);  // "a" has ended
  EXPECT_TRUE(revokes[1].ok());
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_TRUE(*master().Exists("a"));
}

}  // namespace
}  // namespace crescent::master::testing
