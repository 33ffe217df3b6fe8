// End-to-end checksums through the whole stack: bytes that changed on a store
// node after their put are never returned. A get reads another replica, the
// reader reports the bad one, its node finds the stored bytes do not match and
// the master drops it (in its next maintenance pass); with no good replica
// left the get fails with CHECKSUM_MISMATCH and the object goes. A report the
// node disproves drops nothing. Over TCP and over shared memory (where the
// put's placement hint also makes the first get a copy ahead).
//
// The corruption is a stray write into the node's memory, as a fault or a
// process with access to it would make: through the node's own mapping of its
// segment (the cluster runs in this process), at the replica's offset. Nothing
// in the data plane sees it.
#include "client/client_test_util.h"

namespace crescent::client_test {
namespace {

class ChecksumTest : public WithCluster<::testing::TestWithParam<bool>> {
 protected:
  void SetUp() override { StartAndConnect(SmallCluster(2, GetParam()), GetParam()); }

  // The master's replicas of `key`, in the order clients try them.
  std::vector<master::ReplicaDescriptor> Replicas(const std::string& key) {
    auto r = cluster_->master().GetReplicaList(key);
    return r.ok() ? r->replicas : std::vector<master::ReplicaDescriptor>{};
  }

  // Flips bytes of replica `r` in its node's memory (see the top).
  void Corrupt(const master::ReplicaDescriptor& r) {
    for (size_t i = 0; i < cluster_->node_count(); ++i) {
      store::StoreNode& node = cluster_->node(i);
      if (node.segment_id() != r.segment) continue;
      transfer::SegmentMemory& memory = node.segment_memory();
      ASSERT_LE(r.offset + r.length, memory.size());
      std::byte* bytes = memory.data() + r.offset;
      for (size_t j = 0; j < r.length; j += 4099) bytes[j] ^= std::byte{0x5a};
      return;
    }
    FAIL() << "no node serves segment " << r.segment;
  }

  PutOptions Copies(uint32_t n) {
    PutOptions o;
    o.replica_count = n;
    return o;
  }

  uint64_t MasterCounter(const std::string& name) {
    auto st = client_->Stat();
    return st.ok() ? st->counters[name] : 0;
  }
};

TEST_P(ChecksumTest, ACorruptReplicaIsSkippedAndDroppedByTheMaster) {
  const std::vector<std::byte> value = Pattern(300000, 1);
  ASSERT_TRUE(client_->Put("k", Bytes(value), Copies(2)).ok());
  std::vector<master::ReplicaDescriptor> before = Replicas("k");
  ASSERT_EQ(before.size(), 2u);
  ASSERT_NE(before[0].segment, before[1].segment);
  ASSERT_NO_FATAL_FAILURE(Corrupt(before[0]));  // the replica tried first

  StatusOr<std::vector<std::byte>> got = client_->Get("k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value) << "returned the corrupt replica's bytes";
  EXPECT_EQ(client_->Counters().checksum_mismatches, 1u);
  if (GetParam()) {
    // The writer's first get copied the remembered (first) replica ahead.
    EXPECT_EQ(client_->Counters().copy_ahead_discarded, 1u);
  }

  ASSERT_TRUE(Eventually([&] { return Replicas("k").size() == 1; }))
      << "the master kept the corrupt replica";
  std::vector<master::ReplicaDescriptor> after = Replicas("k");
  EXPECT_EQ(after[0].segment, before[1].segment);
  EXPECT_EQ(after[0].offset, before[1].offset);
  EXPECT_EQ(MasterCounter("crescent_corrupt_replicas_total"), 1u);

  // Later gets, by this client and a fresh one, read the good replica only.
  auto other = ConnectTo(*cluster_, GetParam());
  ASSERT_NE(other, nullptr);
  for (Client* c : {client_.get(), other.get()}) {
    std::vector<std::byte> buf(value.size());
    ASSERT_TRUE(c->RegisterBuffer(buf.data(), buf.size()).ok());
    StatusOr<size_t> n = c->GetInto("k", buf.data(), buf.size());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_TRUE(buf == value);
    ASSERT_TRUE(c->UnregisterBuffer(buf.data()).ok());
  }
  EXPECT_EQ(client_->Counters().checksum_mismatches, 1u);
  EXPECT_EQ(other->Counters().checksum_mismatches, 0u);
}

TEST_P(ChecksumTest, WithNoGoodReplicaTheGetFailsAndTheObjectIsDropped) {
  const std::vector<std::byte> value = Pattern(70000, 2);
  ASSERT_TRUE(client_->Put("only", Bytes(value)).ok());
  std::vector<master::ReplicaDescriptor> replicas = Replicas("only");
  ASSERT_EQ(replicas.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(Corrupt(replicas[0]));

  StatusOr<std::vector<std::byte>> got = client_->Get("only");
  EXPECT_EQ(got.status().code(), ErrorCode::kChecksumMismatch) << got.status().ToString();
  EXPECT_EQ(client_->Counters().checksum_mismatches, 1u);
  ASSERT_TRUE(Eventually([&] { return !*client_->Exists("only"); }));
  EXPECT_EQ(client_->Get("only").status().code(), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(*client_->Exists("only"));
  EXPECT_EQ(MasterCounter("crescent_corrupt_objects_total"), 1u);
  // The key can be stored again.
  ASSERT_TRUE(client_->Put("only", Bytes(value)).ok());
  EXPECT_TRUE(*client_->Get("only") == value);
}

TEST_P(ChecksumTest, BatchAndPrefixReadsVerifyEachValue) {
  const std::vector<std::string> keys = {"p0", "p1", "p2"};
  std::vector<std::vector<std::byte>> values;
  for (size_t i = 0; i < keys.size(); ++i) {
    values.push_back(Pattern(20000 + i, 10 + static_cast<uint32_t>(i)));
    ASSERT_TRUE(client_->Put(keys[i], Bytes(values[i])).ok());
  }
  ASSERT_NO_FATAL_FAILURE(Corrupt(Replicas("p1")[0]));

  // A fresh client: its reads are not copies ahead.
  // The buffers outlive the client that registered them (its page warmer
  // may still read them).
  std::vector<std::vector<std::byte>> bufs(keys.size(), std::vector<std::byte>(30000));
  auto reader = ConnectTo(*cluster_, GetParam());
  ASSERT_NE(reader, nullptr);
  std::vector<void*> ptrs;
  std::vector<size_t> caps;
  for (auto& b : bufs) {
    ASSERT_TRUE(reader->RegisterBuffer(b.data(), b.size()).ok());
    ptrs.push_back(b.data());
    caps.push_back(b.size());
  }
  StatusOr<size_t> leading = reader->GetPrefixInto(keys, ptrs, caps);
  ASSERT_TRUE(leading.ok()) << leading.status().ToString();
  EXPECT_EQ(*leading, 1u) << "the prefix must end at the corrupt page";
  EXPECT_TRUE(std::equal(values[0].begin(), values[0].end(), bufs[0].begin()));

  // p1 goes; the batch reports it missing and serves the others.
  ASSERT_TRUE(Eventually([&] { return !*client_->Exists("p1"); }));
  auto batch = client_->BatchGet(keys);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_TRUE(batch[0].ok() && *batch[0] == values[0]);
  EXPECT_EQ(batch[1].status().code(), ErrorCode::kObjectNotFound);
  EXPECT_TRUE(batch[2].ok() && *batch[2] == values[2]);
}

TEST_P(ChecksumTest, ABatchGetReportsTheMismatchPerKey) {
  const std::vector<std::string> keys = {"b0", "b1"};
  const std::vector<std::byte> a = Pattern(5000, 20), b = Pattern(6000, 21);
  const std::vector<std::span<const std::byte>> values = {Bytes(a), Bytes(b)};
  for (const Status& s : client_->BatchPut(keys, values)) ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NO_FATAL_FAILURE(Corrupt(Replicas("b0")[0]));
  auto got = client_->BatchGet(keys);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].status().code(), ErrorCode::kChecksumMismatch);
  ASSERT_TRUE(got[1].ok()) << got[1].status().ToString();
  EXPECT_TRUE(*got[1] == b);
}

// A reader is no witness for the node's bytes (its buffer may have changed
// during the get, its memory may be faulty): a report of a healthy replica,
// even the last one, is disproved by its node and drops nothing.
TEST_P(ChecksumTest, AReportTheNodeDisprovesDropsNothing) {
  const std::vector<std::byte> value = Pattern(200000, 4);
  ASSERT_TRUE(client_->Put("healthy", Bytes(value)).ok());
  auto read = cluster_->master().GetReplicaList("healthy");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 1u);
  const master::ReplicaDescriptor& r = read->replicas[0];
  ASSERT_TRUE(
      cluster_->master().ReportCorruptReplica("healthy", r.segment, r.offset, read->checksum).ok());
  ASSERT_TRUE(Eventually([&] {
    return MasterCounter("crescent_corruption_reports_total{result=\"disproved\"}") == 1;
  }));
  EXPECT_EQ(MasterCounter("crescent_corruption_reports_total{result=\"confirmed\"}"), 0u);
  EXPECT_EQ(MasterCounter("crescent_corrupt_replicas_total"), 0u);
  StatusOr<std::vector<std::byte>> got = client_->Get("healthy");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
}

// Verification off (for measurement only) returns what the replica holds:
// the corruption above is real, and only the check keeps it out.
TEST_P(ChecksumTest, WithVerificationOffTheCorruptBytesComeBack) {
  const std::vector<std::byte> value = Pattern(50000, 3);
  ASSERT_TRUE(client_->Put("raw", Bytes(value)).ok());
  ASSERT_NO_FATAL_FAILURE(Corrupt(Replicas("raw")[0]));
  ClientConfig cc = ConfigFor(*cluster_, GetParam());
  cc.verify_checksums = false;
  auto unverified = ConnectWith(cc);
  ASSERT_NE(unverified, nullptr);
  StatusOr<std::vector<std::byte>> got = unverified->Get("raw");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(*got == value);
  EXPECT_EQ(unverified->Counters().checksum_mismatches, 0u);
  EXPECT_EQ(Replicas("raw").size(), 1u) << "nothing was reported";
}

INSTANTIATE_TEST_SUITE_P(Transports, ChecksumTest, ::testing::Bool(), TransportName);

}  // namespace
}  // namespace crescent::client_test
