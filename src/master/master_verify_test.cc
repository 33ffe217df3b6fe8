// Background verification of a persistent segment taken over by a restarted
// node (master_verify.cc): every object on it is checked by its node against
// the checksum recorded at PutEnd, and none is served before its check
// passes. A mismatch drops the replica at once; a check that comes back with
// no verdict (no answer in time, the connection lost) is sent again at a later
// maintenance pass, a bounded number of times, and only then counted as
// skipped, and its replica dropped.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/scripted_node_for_test.h"

namespace crescent::master {
namespace {

constexpr uint64_t kSegBytes = 1 << 20;
constexpr uint32_t kTries = 4;  // MasterService::kVerifyTries

class MasterVerifyTest : public testing::MasterTest {
 protected:
  // node-1 puts `n` objects on its persistent segment, then a new process of
  // it (node-2) takes the segment over: each object is queued for a check.
  void PutThenTakeOver(size_t n) {
    master().SetReplicaCopier(&node_);
    ASSERT_TRUE(master().MountSegment(Spec("node-1", "n:1#e1", 7)).ok());
    PutConfig there;
    there.preferred_segment = "pmem-u1";
    for (const std::string& k : Keys("k", n)) {
      auto r = master().PutStart(k, 1000, there);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(master().PutEnd(k, r->token, /*checksum=*/42).ok());
      offsets_[k] = r->replicas[0].offset;
    }
    bool adopted = false;
    ASSERT_TRUE(master().MountSegment(Spec("node-2", "n:2#e9", 99), nullptr, &adopted).ok());
    ASSERT_TRUE(adopted);
    ASSERT_EQ(master().PendingVerifications(), n);
  }

  static SegmentSpec Spec(const std::string& node, const std::string& endpoint, uint64_t token) {
    return {"pmem-u1", kSegBytes, node, endpoint, Tier::kPmem, token};
  }

  const MasterCounters& counters() { return master().counters(); }

  testing::ScriptedNode node_;
  std::map<std::string, uint64_t> offsets_;
};

TEST_F(MasterVerifyTest, EveryObjectOfATakenOverSegmentIsCheckedOnce) {
  PutThenTakeOver(3);
  master().RunMaintenance();
  EXPECT_EQ(master().PendingVerifications(), 0u);
  EXPECT_EQ(counters().verified_ok.load(), 3u);
  EXPECT_EQ(counters().verify_retries.load(), 0u);
  for (const auto& [key, offset] : offsets_) EXPECT_EQ(node_.asked[offset], 1u) << key;
}

// Only verified bytes are served: after the take-over no object of the
// segment is readable, shown or listed until its own check has passed.
TEST_F(MasterVerifyTest, AnObjectIsServedOnlyOnceItsCheckHasPassed) {
  PutThenTakeOver(3);
  for (const std::string& k : Keys("k", 3)) {
    EXPECT_EQ(master().GetReplicaList(k).status().code(), ErrorCode::kObjectNotFound) << k;
    EXPECT_FALSE(*master().Exists(k)) << k;
    EXPECT_EQ(master().PutStart(k, 1000, {}).status().code(), ErrorCode::kObjectNotReady) << k;
  }
  EXPECT_TRUE(master().List("k").empty());
  const uint64_t slow = offsets_["k1"];
  node_.answer = [slow](uint64_t offset, uint64_t nth) {
    return offset == slow && nth == 0 ? Status(ErrorCode::kTimeout, "did not answer in time")
                                      : Status::Ok();
  };
  master().RunMaintenance();
  EXPECT_TRUE(Readable("k0"));
  EXPECT_FALSE(Readable("k1")) << "its check has no verdict yet";
  EXPECT_TRUE(Readable("k2"));
  EXPECT_EQ(master().List("k"), std::vector<std::string>({"k0", "k2"}));
  master().RunMaintenance();
  EXPECT_TRUE(Readable("k1"));
  EXPECT_EQ(master().List("k"), Keys("k", 3));
}

TEST_F(MasterVerifyTest, ACheckWithNoVerdictIsSentAgainAtTheNextPass) {
  PutThenTakeOver(3);
  // The node answers no check of the first batch (as a lost connection or a
  // missed deadline fails every check still in flight), then all of them.
  node_.answer = [](uint64_t, uint64_t nth) {
    return nth == 0 ? Status(ErrorCode::kTimeout, "did not answer in time") : Status::Ok();
  };
  master().RunMaintenance();
  EXPECT_EQ(counters().verified_ok.load(), 0u);
  EXPECT_EQ(counters().verify_skipped.load(), 0u) << "not given up after one try";
  EXPECT_EQ(counters().verify_retries.load(), 3u);
  EXPECT_EQ(master().PendingVerifications(), 3u) << "queued again for the next pass";

  master().RunMaintenance();
  EXPECT_EQ(counters().verified_ok.load(), 3u);
  EXPECT_EQ(counters().verify_skipped.load(), 0u);
  EXPECT_EQ(master().PendingVerifications(), 0u);
  for (const auto& [key, offset] : offsets_) EXPECT_EQ(node_.asked[offset], 2u) << key;
  for (const std::string& k : Keys("k", 3)) EXPECT_TRUE(Readable(k)) << k;
}

TEST_F(MasterVerifyTest, ACheckThatNeverGetsAVerdictIsSkippedAfterItsLastTry) {
  PutThenTakeOver(2);
  const uint64_t stuck = offsets_["k0"];
  node_.answer = [stuck](uint64_t offset, uint64_t) {
    return offset == stuck ? Status(ErrorCode::kUnavailable, "connection lost") : Status::Ok();
  };
  for (uint32_t pass = 0; pass < kTries + 2; ++pass) master().RunMaintenance();
  EXPECT_EQ(node_.asked[stuck], kTries) << "bounded";
  EXPECT_EQ(node_.asked[offsets_["k1"]], 1u);
  EXPECT_EQ(counters().verified_ok.load(), 1u);
  EXPECT_EQ(counters().verify_skipped.load(), 1u);
  EXPECT_EQ(counters().verify_retries.load(), kTries - 1);
  EXPECT_EQ(master().PendingVerifications(), 0u);
  // Never verified, never served: the object (its only replica) is dropped,
  // and the key can be put again.
  EXPECT_FALSE(Readable("k0"));
  EXPECT_FALSE(*master().Exists("k0"));
  EXPECT_TRUE(Readable("k1"));
  EXPECT_EQ(counters().verified_corrupt.load(), 0u) << "not counted as corrupt";
  EXPECT_TRUE(Put("k0", 1000).ok());
  EXPECT_TRUE(Readable("k0"));
}

TEST_F(MasterVerifyTest, AMismatchDropsTheReplicaWithoutAnotherTry) {
  PutThenTakeOver(2);
  const uint64_t bad = offsets_["k1"];
  node_.answer = [bad](uint64_t offset, uint64_t) {
    return offset == bad ? Status(ErrorCode::kChecksumMismatch, "bytes differ") : Status::Ok();
  };
  master().RunMaintenance();
  master().RunMaintenance();
  EXPECT_EQ(node_.asked[bad], 1u);
  EXPECT_EQ(counters().verified_corrupt.load(), 1u);
  EXPECT_EQ(counters().verify_retries.load(), 0u);
  EXPECT_FALSE(Readable("k1"));
  EXPECT_TRUE(Readable("k0"));
}

}  // namespace
}  // namespace crescent::master
