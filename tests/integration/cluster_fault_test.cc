// Faults with real processes: a writer frozen mid-put while its space is
// reused, a replica's node killed mid-read, a node frozen mid-put, a node killed under a
// shared-memory client, the master gone or restarted, and a clean node shutdown.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "integration/cluster.h"
#include "integration/raw_socket.h"
#include "rpc/master_client.h"
#include "transfer/wire.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;

constexpr size_t kMiB = 1024 * 1024;
constexpr milliseconds kDropTimeout{20000};  // >> the 1 s heartbeat TTL

// Param: the client's use_shared_memory. Either way the client must fail over
// to the live replica (over shared memory it notices that the node behind its
// mapping has exited), and every read must return the right bytes.
class ReplicaFailoverTest : public WithCluster<testing::TestWithParam<bool>> {};

TEST_P(ReplicaFailoverTest, ReadsSurviveKill9OfOneReplicaNode) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect({}, GetParam()));  // 2 nodes, TTL 1 s

  constexpr size_t kObjects = 4;
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  PutOptions two;
  two.replica_count = 2;
  for (size_t i = 0; i < kObjects; ++i) {
    keys.push_back("replicated/" + std::to_string(i));
    values.push_back(RandomBytes(1 * kMiB + i, 10 + static_cast<uint32_t>(i)));
    Status put = client_->Put(keys[i], values[i], two);
    ASSERT_TRUE(put.ok()) << put.ToString();
  }
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st.value().segments.size(), 2u);
  for (const SegmentUsage& seg : st.value().segments) {
    EXPECT_GT(seg.used, kObjects * kMiB) << seg.name << " does not hold a copy of every object";
  }

  std::vector<std::byte> buf(2 * kMiB);
  ASSERT_TRUE(client_->RegisterBuffer(buf.data(), buf.size()).ok());
  std::atomic<bool> killed{false}, stop{false};
  std::atomic<int> reads{0}, reads_after_kill{0};
  std::vector<std::string> failures;  // reader thread only until joined
  std::thread reader([&] {
    for (size_t n = 0; !stop.load(); ++n) {
      size_t i = n % kObjects;
      bool after = killed.load();
      // Alternate the zero-copy and the copying read paths.
      bool ok = false;
      std::string why;
      if (n % 2 == 0) {
        StatusOr<size_t> got = client_->GetInto(keys[i], buf.data(), buf.size());
        ok = got.ok() && got.value() == values[i].size() &&
             std::equal(values[i].begin(), values[i].end(), buf.begin());
        why = got.ok() ? "wrong bytes" : got.status().ToString();
      } else {
        StatusOr<std::vector<std::byte>> got = client_->Get(keys[i]);
        ok = got.ok() && got.value() == values[i];
        why = got.ok() ? "wrong bytes" : got.status().ToString();
      }
      if (!ok) failures.push_back("read " + std::to_string(n) + " of " + keys[i] + ": " + why);
      reads.fetch_add(1);
      if (after) reads_after_kill.fetch_add(1);
    }
  });
  auto wait_until = [&](auto pred) {
    auto deadline = std::chrono::steady_clock::now() + kDropTimeout;
    while (!pred() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    return pred();
  };
  bool warmed = wait_until([&] { return reads.load() >= 20; });
  cluster_->store(0).proc->Kill(SIGKILL);
  killed.store(true);
  std::optional<ExitStatus> dead = cluster_->store(0).proc->Wait(kExitTimeout);
  // Keep reading through the window where the master still lists the dead replica.
  bool read_on = wait_until([&] { return reads_after_kill.load() >= 40; });
  stop.store(true);
  reader.join();
  EXPECT_TRUE(warmed);
  EXPECT_TRUE(read_on) << reads_after_kill.load() << " reads after the kill";
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->signal, SIGKILL);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed reads, first: " << failures[0];

  // After the TTL the master drops the dead node's segment; the surviving
  // replicas still serve every object.
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kDropTimeout));
  for (size_t i = 0; i < kObjects; ++i) {
    StatusOr<std::vector<std::byte>> got = client_->Get(keys[i]);
    ASSERT_TRUE(got.ok()) << keys[i] << ": " << got.status().ToString();
    EXPECT_TRUE(got.value() == values[i]) << keys[i];
  }
  EXPECT_TRUE(client_->UnregisterBuffer(buf.data()).ok());  // before buf is freed
}

INSTANTIATE_TEST_SUITE_P(Transports, ReplicaFailoverTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("SharedMemory") : std::string("Tcp");
                         });

TEST(MasterUnreachableTest, ClientCallsFailPromptlyNamingTheAddress) {
  const std::string address = "127.0.0.1:" + std::to_string(PickFreePort());
  ClientConfig config;
  config.master_address = address;
  config.rpc_attempts = 3;
  config.rpc_timeout_ms = 2000;
  config.put_retry_ms = 200;  // the put tries again, briefly (the default is 5 s)
  StatusOr<std::unique_ptr<Client>> client = Client::Connect(config);
  ASSERT_TRUE(client.ok()) << "Connect must not need the master: " << client.status().ToString();

  Status put = client.value()->Put("k", RandomBytes(100, 1));
  EXPECT_EQ(put.code(), ErrorCode::kUnavailable) << put.ToString();
  EXPECT_THAT(put.message(), HasSubstr(address));
  StatusOr<std::vector<std::byte>> got = client.value()->Get("k");
  EXPECT_EQ(got.status().code(), ErrorCode::kUnavailable) << got.status().ToString();
  EXPECT_THAT(got.status().message(), HasSubstr(address));
  EXPECT_EQ(client.value()->Exists("k").status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(client.value()->Stat().status().code(), ErrorCode::kUnavailable);

  TempDir dir;
  CommandResult cli =
      RunCrescent({"get", "k", "--master", address, "--timeout-ms", "2000"}, dir.path());
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
  EXPECT_THAT(cli.err, HasSubstr(address));
  EXPECT_THAT(cli.err, HasSubstr("UNAVAILABLE"));
  EXPECT_TRUE(cli.out.empty()) << cli.out;
}

// A "master" whose port accepts connections (the kernel completes them) but
// never answers: each call times out, saying where and after how long.
TEST(MasterUnreachableTest, SilentMasterTimesOutNamingTheAddress) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ClientConfig config;
  config.master_address = address;
  config.rpc_timeout_ms = 300;
  StatusOr<std::unique_ptr<Client>> client = Client::Connect(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  StatusOr<ClusterStat> st = client.value()->Stat();
  EXPECT_EQ(st.status().code(), ErrorCode::kTimeout) << st.status().ToString();
  EXPECT_THAT(st.status().message(), HasSubstr(address));
  EXPECT_THAT(st.status().message(), HasSubstr("no answer within 300 ms"));
  Status put = client.value()->Put("k", RandomBytes(100, 1));
  EXPECT_EQ(put.code(), ErrorCode::kTimeout) << put.ToString();
  close(listener);
}

TEST(MasterUnreachableTest, MalformedAddressIsRefusedAtConnect) {
  for (const char* address : {"127.0.0.1", "127.0.0.1:99999", "127.0.0.1:0", "host:port"}) {
    ClientConfig config;
    config.master_address = address;
    StatusOr<std::unique_ptr<Client>> client = Client::Connect(config);
    EXPECT_EQ(client.status().code(), ErrorCode::kInvalidArgument) << address;
    EXPECT_THAT(client.status().message(), HasSubstr(address));
  }
}

class StoreFaultTest : public WithCluster<testing::Test> {};

// The integrity defect a frozen writer caused: its put was discarded, the
// space went to another key at once, and the writer, let go, kept writing into
// it (a get of the other key returned the frozen writer's bytes). Here the
// frozen writer is a raw connection holding the write capability the master
// issued for keyA, with part of the payload sent. The master must not hand
// keyA's range to keyB until that capability has expired (plus the grace), and
// the store node must not land bytes that arrive after the expiry.
TEST_F(StoreFaultTest, AFrozenWritersLateBytesNeverReachAnotherKey) {
  ClusterOptions options;
  options.stores = 1;
  options.segment_size = "8MiB";  // room for one 6 MiB object, not two
  options.store_shm = false;
  options.heartbeat_ttl_ms = 60000;
  options.master_flags = {"--put-timeout-ms", "1500"};
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(options, /*use_shm=*/false));
  constexpr size_t kSize = 6 * kMiB;
  const std::vector<std::byte> a = RandomBytes(kSize, 31), b = RandomBytes(kSize, 32);

  auto master = rpc::MasterClient::Create({.address = cluster_->master_address()});
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  auto put_a = (*master)->PutStart("keyA", kSize, {});
  ASSERT_TRUE(put_a.ok()) << put_a.status().ToString();
  const rpc::RemoteReplica& replica = put_a->replicas.at(0);
  transfer::wire::RequestHeader h{1, replica.cap, kSize};
  transfer::wire::RequestBytes header;
  transfer::wire::EncodeRequest(h, header);
  const std::string payload(reinterpret_cast<const char*>(a.data()), a.size());
  RawSocket writer;
  ASSERT_TRUE(writer.Connect(cluster_->store(0).host, cluster_->store(0).data_port));
  ASSERT_TRUE(writer.Send(std::string(reinterpret_cast<const char*>(header.data()), header.size()) +
                          payload.substr(0, kMiB)));

  // The writer is frozen; the master discards keyA's put at its deadline. keyB
  // gets its space only once keyA's capability is over: until then NO_SPACE.
  Status put_b;
  for (int i = 0; i < 200; ++i) {
    put_b = client_->Put("keyB", b);
    if (put_b.code() != ErrorCode::kNoSpace) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(put_b.ok()) << put_b.ToString();

  // The writer wakes up and sends the rest of keyA's bytes.
  ASSERT_TRUE(writer.Send(payload.substr(kMiB)));
  std::string reply;
  writer.ReadUntilClosed(milliseconds(2000), &reply);
  if (reply.size() >= transfer::wire::kResponseHeaderSize) {
    auto r = transfer::wire::DecodeResponse(reinterpret_cast<const uint8_t*>(reply.data()));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->code, ErrorCode::kLeaseExpired);
  }
  EXPECT_EQ((*master)->PutEnd("keyA", put_a->token).code(), ErrorCode::kPutNotStarted);

  StatusOr<std::vector<std::byte>> got = client_->Get("keyB");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == b) << "keyB returned bytes that were not put under keyB";
}

TEST_F(StoreFaultTest, PutToAFrozenNodeTimesOutAndLeavesNothingBehind) {
  ASSERT_NO_FATAL_FAILURE(StartCluster({.stores = 1}));
  ClientConfig config = cluster_->ClientConfigFor(/*use_shm=*/false);
  config.transfer_timeout_ms = 500;
  StatusOr<std::unique_ptr<Client>> connected = Client::Connect(config);
  ASSERT_TRUE(connected.ok());
  Client& client = *connected.value();
  ASSERT_TRUE(client.Put("frozen/before", RandomBytes(1000, 1)).ok());

  // SIGSTOP: the node's sockets still accept (the kernel does that) but nobody
  // answers, which is a node dying mid-put, made deterministic.
  cluster_->store(0).proc->Freeze();
  Status put = client.Put("frozen/k", RandomBytes(4 * kMiB, 2));
  EXPECT_THAT(put.code(), testing::AnyOf(ErrorCode::kTimeout, ErrorCode::kUnavailable))
      << put.ToString();
  EXPECT_FALSE(put.message().empty());
  cluster_->store(0).proc->Kill(SIGKILL);
  ASSERT_TRUE(cluster_->store(0).proc->Wait(kExitTimeout).has_value());

  // The failed put was revoked: not visible, not pending.
  StatusOr<bool> exists = client.Exists("frozen/k");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_FALSE(exists.value());
  EXPECT_EQ(client.Get("frozen/k").status().code(), ErrorCode::kObjectNotFound);
  StatusOr<ClusterStat> st = client.Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st.value().pending_puts, 0u);

  // Once the master has dropped the dead node, a fresh node serves again.
  ASSERT_TRUE(cluster_->WaitForSegments(client, 0, kDropTimeout));
  ASSERT_TRUE(cluster_->AddStore());
  ASSERT_TRUE(cluster_->WaitForSegments(client, 1, kDropTimeout));
  std::vector<std::byte> value = RandomBytes(2 * kMiB, 3);
  Status again = client.Put("frozen/k", value);
  ASSERT_TRUE(again.ok()) << again.ToString();
  StatusOr<std::vector<std::byte>> got = client.Get("frozen/k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got.value() == value);
}

// Over shared memory a put is a memcpy into the client's own mapping of the
// node's memfd, which outlives the node: the client must notice that the node
// has exited rather than publish bytes that nobody can serve.
TEST_F(StoreFaultTest, SharedMemoryPutToAKilledNodeFailsAndLeavesNothingBehind) {
  // A long TTL: the master still lists the dead node meanwhile.
  ASSERT_NO_FATAL_FAILURE(
      StartAndConnect({.stores = 1, .heartbeat_ttl_ms = 60000}, /*use_shm=*/true));
  std::vector<std::byte> before = RandomBytes(1 * kMiB, 1);
  ASSERT_TRUE(client_->Put("dead/before", before).ok());  // maps the node's segment
  StatusOr<std::vector<std::byte>> got = client_->Get("dead/before");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  // Read through the mapping (copied ahead from where the put left it).
  ASSERT_GE(client_->Counters().copy_ahead_kept, 1u);
  const uint64_t fallbacks = client_->Counters().shm_fallbacks;

  cluster_->store(0).proc->Kill(SIGKILL);
  ASSERT_TRUE(cluster_->store(0).proc->Wait(kExitTimeout).has_value());
  Status put = client_->Put("dead/k", RandomBytes(4 * kMiB, 2));
  EXPECT_EQ(put.code(), ErrorCode::kUnavailable) << put.ToString();
  // The copy into the mapping was refused, then TCP found nobody either.
  EXPECT_GT(client_->Counters().shm_fallbacks, fallbacks);
  StatusOr<bool> exists = client_->Exists("dead/k");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_FALSE(exists.value());
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st.value().pending_puts, 0u);
  EXPECT_EQ(st.value().segments.size(), 1u) << "the master must not have noticed yet";
  // The object stored before is listed but its only node is gone: an error,
  // not bytes read out of a dead node's memory.
  EXPECT_EQ(client_->Get("dead/before").status().code(), ErrorCode::kUnavailable);
}

class MasterRestartTest : public WithCluster<testing::Test> {};

TEST_F(MasterRestartTest, StoreNodeRemountsOnARestartedMaster) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect({.stores = 1}, /*use_shm=*/true));
  ASSERT_TRUE(client_->Put("restart/before", RandomBytes(1000, 1)).ok());

  const uint16_t port = cluster_->master_port();
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  ASSERT_TRUE(cluster_->StartMaster(port));
  ASSERT_EQ(cluster_->master_port(), port);

  // The same client reconnects; the running node notices the new master
  // (NODE_UNKNOWN on its heartbeat) and mounts its segment again.
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kDropTimeout));
  EXPECT_TRUE(cluster_->store(0).proc->Running());
  // The new master knows no objects: the old one's metadata died with it.
  StatusOr<bool> before = client_->Exists("restart/before");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_FALSE(before.value());

  for (bool shm : {true, false}) {
    std::unique_ptr<Client> c = shm ? std::move(client_) : cluster_->Connect(false);
    std::string key = std::string("restart/after-") + (shm ? "shm" : "tcp");
    std::vector<std::byte> value = RandomBytes(1 * kMiB, shm ? 2 : 3);
    Status put = c->Put(key, value);
    ASSERT_TRUE(put.ok()) << put.ToString();
    StatusOr<std::vector<std::byte>> got = c->Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(got.value() == value);
  }
}

class StoreShutdownTest : public WithCluster<testing::Test> {};

TEST_F(StoreShutdownTest, SigtermUnmountsAtOnceAndExitsZero) {
  // A long TTL: a drop by TTL would take a minute.
  ASSERT_NO_FATAL_FAILURE(
      StartAndConnect({.stores = 2, .heartbeat_ttl_ms = 60000}, /*use_shm=*/false));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kDropTimeout));

  cluster_->store(0).proc->Kill(SIGTERM);
  std::optional<ExitStatus> exit = cluster_->store(0).proc->Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value()) << "the node did not exit on SIGTERM";
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
  // The node unmounted before exiting, so the master forgot it already.
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st.value().segments.size(), 1u);
  EXPECT_EQ(st.value().segments[0].name, cluster_->store(1).segment);

  // Puts now land on the remaining node.
  std::vector<std::byte> value = RandomBytes(64 * 1024, 5);
  ASSERT_TRUE(client_->Put("shutdown/after", value).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get("shutdown/after");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got.value() == value);

  // The master shuts down cleanly too.
  cluster_->master().Kill(SIGTERM);
  exit = cluster_->master().Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value()) << "the master did not exit on SIGTERM";
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
}

}  // namespace
}  // namespace crescent::itest
