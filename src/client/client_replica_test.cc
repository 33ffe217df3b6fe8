// Client replica handling: reads survive the loss of a replica, a read falls
// back to the next replica when one cannot be reached, and a put that cannot
// write every replica leaves nothing visible and no pending put behind.
//
// A replica that is mounted at the master but unreachable on the data plane is
// made with a "ghost" segment: mounted straight on the MasterService with an
// endpoint nothing listens on (127.0.0.1:1). StoreNode has no hook to stop its
// data servers while staying mounted, and this is the same situation as seen
// from the client.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/value_hash.h"
#include "rpc/master_client.h"
#include "client/client_test_util.h"
#include "transfer/tcp_transport.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClientClusterTest;
using client_test::ClusterTest;
using client_test::ConnectTo;
using client_test::Pattern;
using client_test::Present;
using client_test::SmallCluster;
using client_test::StartCluster;

constexpr char kGhost[] = "ghost/dram0";

void MountGhost(server::LocalCluster& cluster) {
  master::SegmentSpec spec;
  spec.name = kGhost;
  spec.capacity = uint64_t{16} << 20;
  spec.owner_node = "ghost";
  spec.endpoint = "127.0.0.1:1";
  ASSERT_TRUE(cluster.master().MountSegment(spec).ok());
}

class ClientReplicaTest : public ClientClusterTest {
 protected:
  server::LocalClusterOptions Options() override { return SmallCluster(2, GetParam()); }
};

// Two replicas on two nodes; a clean stop of node 0 unmounts its segment, the
// master drops that replica, and reads go to node 1's copy.
TEST_P(ClientReplicaTest, ReadSurvivesCleanStopOfOneReplicaNode) {
  std::vector<std::byte> value = Pattern(100000, 31);
  PutOptions two;
  two.replica_count = 2;
  ASSERT_TRUE(client_->Put("r", Bytes(value), two).ok());
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->segments.size(), 2u);
  for (const SegmentUsage& seg : st->segments) EXPECT_GE(seg.used, value.size()) << seg.name;

  cluster_->StopNode(0);
  StatusOr<std::vector<std::byte>> got = client_->Get("r");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
  EXPECT_TRUE(*client_->Exists("r"));

  // With its last replica gone the object is no longer visible or readable.
  cluster_->StopNode(1);
  EXPECT_FALSE(*client_->Exists("r"));
  EXPECT_FALSE(client_->Get("r").ok());
}

// A replica count is best effort: one far beyond the cluster (or beyond the
// master's ceiling of 16) places a replica on every segment there is, rather
// than refusing the put.
TEST_P(ClientReplicaTest, AReplicaCountBeyondTheClusterIsBestEffort) {
  std::vector<std::byte> value = Pattern(4096, 33);
  PutOptions many;
  many.replica_count = 1000;
  Status put = client_->Put("many", Bytes(value), many);
  ASSERT_TRUE(put.ok()) << put.ToString();
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  for (const SegmentUsage& seg : st->segments) EXPECT_GE(seg.used, value.size()) << seg.name;
  StatusOr<std::vector<std::byte>> got = client_->Get("many");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientReplicaTest, ::testing::Bool(),
                         client_test::TransportName);

// The master lists the ghost replica first (preferred segment); the client must
// fail over to the real node's replica. The object is written by hand through
// the control plane and the TCP transport, since a client put would (rightly)
// fail on the ghost.
TEST(ClientReplicaFallbackTest, ReadFallsBackWhenFirstReplicaIsUnreachable) {
  auto cluster = StartCluster(SmallCluster(1, false));
  ASSERT_NE(cluster, nullptr);
  MountGhost(*cluster);

  rpc::MasterClientOptions mo;
  mo.address = cluster->master_address();
  auto mc = rpc::MasterClient::Create(mo);
  ASSERT_TRUE(mc.ok());
  std::vector<std::byte> value = Pattern(50000, 32);
  master::PutConfig pc;
  pc.replica_count = 2;
  pc.preferred_segment = kGhost;
  auto replicas = (*mc)->PutStart("fb", value.size(), pc);
  ASSERT_TRUE(replicas.ok()) << replicas.status().ToString();
  ASSERT_EQ(replicas->replicas.size(), 2u);
  ASSERT_EQ(replicas->replicas[0].endpoint, "127.0.0.1:1");
  auto tcp = transfer::MakeTcpTransport();
  transfer::TransferOp op{replicas->replicas[1].endpoint, replicas->replicas[1].cap, value.data()};
  std::vector<Status> w = tcp->Execute({&op, 1}, 3000);
  ASSERT_TRUE(w[0].ok()) << w[0].ToString();
  ASSERT_TRUE((*mc)->PutEnd("fb", replicas->token, HashValue(value.data(), value.size())).ok());

  auto read = (*mc)->GetReplicaList("fb");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 2u);
  ASSERT_EQ(read->replicas[0].endpoint, "127.0.0.1:1");  // the bad one is tried first

  for (bool shm : {false, true}) {
    SCOPED_TRACE(shm);
    auto client = ConnectTo(*cluster, shm);
    ASSERT_NE(client, nullptr);
    StatusOr<std::vector<std::byte>> got = client->Get("fb");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == value);
    std::vector<std::byte> buf(value.size());
    ASSERT_TRUE(client->RegisterBuffer(buf.data(), buf.size()).ok());
    StatusOr<size_t> n = client->GetInto("fb", buf.data(), buf.size());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_TRUE(buf == value);
    // The client's page warmer may still read the buffer: unregistered (the
    // warmer stopped) before the buffer is freed.
    EXPECT_TRUE(client->UnregisterBuffer(buf.data()).ok());
  }
}

// The only segment's data plane is unreachable: the put fails, is revoked, and
// leaves no object, no pending put and no allocated bytes.
// VmSize of this process, bytes (0 if unknown).
uint64_t AddressSpaceInUse() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

// While alive, the process may grow its address space by `headroom` bytes
// only (RLIMIT_AS); the old limit comes back on destruction. Sanitizer builds
// skip such tests: their shadow memory cannot live under the limit.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(uint64_t headroom) {
    if (getrlimit(RLIMIT_AS, &old_) != 0 || AddressSpaceInUse() == 0) return;
    rlimit tight = old_;
    tight.rlim_cur = AddressSpaceInUse() + headroom;
    set_ = setrlimit(RLIMIT_AS, &tight) == 0;
  }
  ~AddressSpaceLimit() {
    if (set_) setrlimit(RLIMIT_AS, &old_);
  }
  bool set() const { return set_; }

 private:
  rlimit old_{};
  bool set_ = false;
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_SANITIZERS() \
  GTEST_SKIP() << "an address-space limit starves the sanitizers' shadow memory"
#else
#define SKIP_UNDER_SANITIZERS() (void)0
#endif

// A same-host segment this process cannot map (here: an address-space limit
// smaller than the segment) is not an error: the get goes to the same replica
// over TCP, and later gets go there directly instead of trying shm again.
class ClientShmFallbackTest : public ClusterTest {};

TEST_F(ClientShmFallbackTest, AnUnmappableSegmentIsReadOverTcp) {
  SKIP_UNDER_SANITIZERS();
  server::LocalClusterOptions o = SmallCluster(1, /*shared_memory=*/true);
  o.segment_size = uint64_t{256} << 20;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(o, /*use_shared_memory=*/true));
  Client& reader = *client_;
  auto writer = ConnectTo(*cluster_, /*use_shared_memory=*/false);
  ASSERT_NE(writer, nullptr);
  const std::vector<std::byte> v = Pattern(1 << 20, 31);
  ASSERT_TRUE(writer->Put("k", Bytes(v)).ok());
  ASSERT_TRUE(reader.Exists("k").ok());  // the reader's channel and threads exist

  StatusOr<std::vector<std::byte>> first = Status(), second = Status();
  uint64_t after_first = 0;
  {
    AddressSpaceLimit limit(uint64_t{96} << 20);  // room for the value, not the 256 MiB segment
    ASSERT_TRUE(limit.set());
    first = reader.Get("k");
    after_first = reader.Counters().shm_fallbacks;
    second = reader.Get("k");
  }

  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first == v);
  EXPECT_EQ(after_first, 1u);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(*second == v);
  EXPECT_EQ(reader.Counters().shm_fallbacks, 1u);  // straight to TCP the second time
}

// A value larger than the client's memory can hold: Get and BatchGet say
// NO_SPACE with the size (no bad_alloc across the library boundary), and the
// other keys of the batch are still read.
TEST_F(ClientShmFallbackTest, AValueTheClientCannotHoldIsNoSpace) {
  SKIP_UNDER_SANITIZERS();
  server::LocalClusterOptions o = SmallCluster(1, /*shared_memory=*/false);
  o.segment_size = uint64_t{192} << 20;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(o, /*use_shared_memory=*/false));
  const std::vector<std::byte> small = Pattern(4096, 5);
  ASSERT_TRUE(client_->Put("small", Bytes(small)).ok());
  {
    const std::vector<std::byte> big(uint64_t{160} << 20, std::byte{7});
    ASSERT_TRUE(client_->Put("big", Bytes(big)).ok());
  }
  ASSERT_TRUE(client_->Get("small").ok());  // channels, lanes and threads exist

  StatusOr<std::vector<std::byte>> one = Status();
  std::vector<StatusOr<std::vector<std::byte>>> batch;
  {
    AddressSpaceLimit limit(uint64_t{96} << 20);  // less than the 160 MiB value
    ASSERT_TRUE(limit.set());
    one = client_->Get("big");
    batch = client_->BatchGet(std::vector<std::string>{"small", "big"});
  }

  EXPECT_EQ(one.status().code(), ErrorCode::kNoSpace) << one.status().ToString();
  EXPECT_NE(one.status().message().find("cannot allocate 167772160 bytes"), std::string::npos)
      << one.status().ToString();
  ASSERT_EQ(batch.size(), 2u);
  ASSERT_TRUE(batch[0].ok()) << batch[0].status().ToString();
  EXPECT_TRUE(*batch[0] == small);
  EXPECT_EQ(batch[1].status().code(), ErrorCode::kNoSpace);
}

class ClientFailedWriteTest : public ClusterTest {};

TEST_F(ClientFailedWriteTest, FailedPutLeavesNothingVisible) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(SmallCluster(0)));
  MountGhost(*cluster_);
  // Retrying for a fifth of a second, not the default 5 s (waited out by both
  // puts below): a put that gives up sooner leaves the same nothing behind.
  ClientConfig brief = client_test::ConfigFor(*cluster_);
  brief.put_retry_ms = 200;
  client_ = client_test::ConnectWith(brief);
  ASSERT_NE(client_, nullptr);

  Status s = client_->Put("lost", Bytes(Pattern(4096, 33)));
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(*client_->Exists("lost"));
  EXPECT_EQ(client_->Get("lost").status().code(), ErrorCode::kObjectNotFound);
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->pending_puts, 0u);
  EXPECT_EQ(st->objects, 0u);
  // What the revoked put had is fenced (held) until its write capabilities
  // are over, not in use by anything.
  EXPECT_EQ(st->used_bytes, st->held_bytes);

  // Revoked means gone: the key can be put again (and fails the same way).
  EXPECT_NE(client_->Put("lost", Bytes(Pattern(10, 34))).code(), ErrorCode::kObjectAlreadyExists);
}

// One replica written, the other unreachable: the object is not made visible
// with fewer copies than asked for; the good node's space is released (fenced
// until the revoked puts' capabilities are over). Without retries: with them,
// the put is placed again without the unreachable node (the next test).
TEST_F(ClientFailedWriteTest, PartiallyWrittenReplicasAreRevoked) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(SmallCluster(1)));
  MountGhost(*cluster_);
  ClientConfig no_retry = client_test::ConfigFor(*cluster_);
  no_retry.put_retry_ms = 0;
  client_ = client_test::ConnectWith(no_retry);
  ASSERT_NE(client_, nullptr);

  PutOptions two;
  two.replica_count = 2;
  std::vector<std::string> keys = {"half0", "half1"};
  std::vector<std::byte> v = Pattern(8192, 35);
  std::vector<std::span<const std::byte>> spans = {Bytes(v), Bytes(v)};
  for (const Status& s : client_->BatchPut(keys, spans, two)) EXPECT_FALSE(s.ok());
  EXPECT_EQ(Present(client_->BatchExists(keys)), (std::vector<int>{0, 0}));
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->pending_puts, 0u);
  EXPECT_EQ(st->used_bytes, st->held_bytes);  // fenced until the puts' deadlines, not in use

  // Placed on the real node only, the same put succeeds.
  PutOptions real;
  real.preferred_segment = cluster_->node(0).segment_name();
  ASSERT_TRUE(client_->Put("half0", Bytes(v), real).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get("half0");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == v);
}

// The same put with retries: the unreachable node was reported (the master
// places nothing there until it heartbeats), the revoked put was tried again
// on the live node alone, with the one replica it could have (best effort,
// as PutOptions::replica_count promises), and nothing of the first try lingers.
TEST_F(ClientFailedWriteTest, WithRetriesAPutLandsOnTheReachableNode) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(SmallCluster(1)));
  MountGhost(*cluster_);
  PutOptions two;
  two.replica_count = 2;
  std::vector<std::byte> v = Pattern(8192, 36);
  Status put = client_->Put("retried", Bytes(v), two);
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_GE(client_->Counters().put_retries, 1u);
  StatusOr<std::vector<std::byte>> got = client_->Get("retried");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == v);
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->pending_puts, 0u);
  EXPECT_EQ(st->objects, 1u);
  // Later puts go to the reachable node at once.
  const uint64_t retries = client_->Counters().put_retries;
  ASSERT_TRUE(client_->Put("direct", Bytes(v), two).ok());
  EXPECT_EQ(client_->Counters().put_retries, retries);
}

}  // namespace
}  // namespace crescent
