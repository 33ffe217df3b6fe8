// Clients and store nodes follow a cluster's leader (docs/ha.md, "Clients
// follow the leader"): given --master etcd://H:P/NAME they find the master
// that the leader key in etcd names, and move to the next one as soon as the
// key names it. Real etcd (one member) and two plain masters, A and B; the
// test itself plays the leadership by writing the key: A's LeaderInfo, then
// an empty value or none (no leader yet), then B's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <csignal>
#include <future>
#include <mutex>
#include <thread>

#include "etcd/cluster_keys.h"
#include "etcd/etcd_client.h"
#include "etcd/leader_follower.h"
#include "integration/cluster.h"
#include "integration/etcd_cluster.h"
#include "integration/raw_socket.h"
#include "rpc/master_client.h"

namespace crescent::itest {
namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;

constexpr char kCluster[] = "follow";

class LeaderFollowTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(etcd_.Start(members_, dir_.path(), &why)) << why;
    // The writer asks the last member first (a test may freeze the first).
    std::string endpoints;
    for (size_t i = etcd_.size(); i-- > 0;)
      endpoints += (endpoints.empty() ? "" : ",") + etcd_.endpoint(i);
    auto client = etcd::EtcdClient::Create({*etcd::ParseEndpoints(endpoints), 2000ms});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    writer_ = std::move(*client);
    ASSERT_TRUE(a_.Start());
    ASSERT_TRUE(b_.Start());
    a_client_ = a_.Connect(false);
    b_client_ = b_.Connect(false);
    ASSERT_NE(a_client_, nullptr);
    ASSERT_NE(b_client_, nullptr);
  }

  std::string EtcdAddress() const { return "etcd://" + etcd_.endpoints() + "/" + kCluster; }

  // The leader key's value: `master`'s LeaderInfo, or "" (a leader getting ready).
  void Publish(const Cluster* master) {
    etcdserverpb::PutRequest put;
    put.set_key(etcd::LeaderKey(kCluster));
    if (master != nullptr) {
      put.set_value(etcd::EncodeLeaderInfo({.master_id = master == &a_   ? "a"
                                                         : master == &b_ ? "b"
                                                                         : "other",
                                            .grpc = master->master_address(),
                                            .http = ""}));
    }
    // Retried a while: etcd may be electing a leader of its own.
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    auto done = writer_->Put(put);
    while (!done.ok() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(100ms);
      done = writer_->Put(put);
    }
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }
  void Unpublish() {
    etcdserverpb::DeleteRangeRequest del;
    del.set_key(etcd::LeaderKey(kCluster));
    ASSERT_TRUE(writer_->DeleteRange(del).ok());
  }

  std::unique_ptr<Client> Follower(int64_t rpc_timeout_ms = 5000, int attempts = 4) {
    ClientConfig c;
    c.master_address = EtcdAddress();
    c.use_shared_memory = false;
    c.rpc_timeout_ms = rpc_timeout_ms;
    c.rpc_attempts = attempts;
    c.transfer_timeout_ms = 10000;
    auto made = Client::Connect(c);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? std::move(*made) : nullptr;
  }

  static uint64_t Objects(Client& direct) {
    auto st = direct.Stat();
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    return st.ok() ? st->objects : 0;
  }
  static bool HasSegment(Client& direct, const std::string& name) {
    auto st = direct.Stat();
    if (!st.ok()) return false;
    for (const SegmentUsage& s : st->segments) {
      if (s.name == name) return true;
    }
    return false;
  }

  static std::vector<std::byte> Bytes(uint32_t seed) { return RandomBytes(4096, seed); }

  CommandResult Cli(const std::vector<std::string>& args, const std::string& in = "") {
    return RunCrescent(args, dir_.path(), in);
  }

  int members_ = 1;  // etcd's
  TempDir dir_;
  EtcdCluster etcd_;
  std::unique_ptr<etcd::EtcdClient> writer_;
  Cluster a_{ClusterOptions{.stores = 1}};
  Cluster b_{ClusterOptions{.stores = 1}};
  std::unique_ptr<Client> a_client_;  // straight to A and B, to see where objects went
  std::unique_ptr<Client> b_client_;
};

TEST_F(LeaderFollowTest, ClientFollowsTheLeaderKeyAndThenItsDeath) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  std::unique_ptr<Client> c = Follower();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->master_address(), EtcdAddress());
  ASSERT_TRUE(c->Put("on-a", Bytes(1)).ok());
  auto got = c->Get("on-a");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Bytes(1));
  EXPECT_EQ(Objects(*a_client_), 1u);
  EXPECT_EQ(Objects(*b_client_), 0u);

  // The key names B while A still serves: the client's watch moves it there.
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  int puts = 0;
  while (Objects(*b_client_) == 0 && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(c->Put("after-switch-" + std::to_string(puts++), Bytes(2)).ok());
  }
  ASSERT_EQ(Objects(*b_client_), 1u) << "no put reached B after the switch";
  const uint64_t on_a = Objects(*a_client_);

  // Back to A, which then dies: the very next calls reach B.
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  while (Objects(*a_client_) == on_a && std::chrono::steady_clock::now() < deadline + 20s) {
    ASSERT_TRUE(c->Put("back-on-a-" + std::to_string(puts++), Bytes(3)).ok());
  }
  ASSERT_GT(Objects(*a_client_), on_a) << "no put reached A again";
  a_.master().Kill(SIGKILL);
  ASSERT_TRUE(a_.master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  const uint64_t on_b = Objects(*b_client_);
  Status put = c->Put("after-kill", Bytes(4));
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_EQ(Objects(*b_client_), on_b + 1);
  got = c->Get("after-kill");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Bytes(4));
}

// A call made while no leader is published (an empty value: a new leader
// getting ready; or no key) waits for one, and succeeds on it.
TEST_F(LeaderFollowTest, CallsWaitForTheNextLeaderWhileNoneIsPublished) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  std::unique_ptr<Client> c = Follower(/*rpc_timeout_ms=*/15000);
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Put("first", Bytes(1)).ok());
  a_.master().Kill(SIGKILL);
  ASSERT_TRUE(a_.master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(Publish(nullptr));
  auto waiting = std::async(std::launch::async, [&] { return c->Put("second", Bytes(2)); });
  EXPECT_EQ(waiting.wait_for(300ms), std::future_status::timeout);
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  Status s = waiting.get();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Objects(*b_client_), 1u);

  ASSERT_NO_FATAL_FAILURE(Unpublish());
  waiting = std::async(std::launch::async, [&] { return c->Put("third", Bytes(3)); });
  EXPECT_EQ(waiting.wait_for(300ms), std::future_status::timeout);
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  s = waiting.get();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Objects(*b_client_), 2u);
}

TEST_F(LeaderFollowTest, CliFollowsTheLeader) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  const std::string value = RandomString(1000, 7);
  CommandResult put = Cli({"put", "--master", EtcdAddress(), "cli-a", "-"}, value);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  CommandResult get = Cli({"get", "--master", EtcdAddress(), "cli-a"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, value);
  EXPECT_EQ(Objects(*a_client_), 1u);

  a_.master().Kill(SIGKILL);
  ASSERT_TRUE(a_.master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  put = Cli({"put", "--master", EtcdAddress(), "cli-b", "-"}, value);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_EQ(Objects(*b_client_), 1u);
  CommandResult ls = Cli({"ls", "--master", EtcdAddress()});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_THAT(ls.out, HasSubstr("cli-b"));
  CommandResult stat = Cli({"stat", "--master", EtcdAddress()});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr(EtcdAddress()));
}

// bench and replay take the etcd:// address as every client does (A is dead:
// they can only have worked on B).
TEST_F(LeaderFollowTest, BenchAndReplayFollowTheLeader) {
  a_.master().Kill(SIGKILL);
  ASSERT_TRUE(a_.master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  CommandResult bench = Cli({"bench", "put-get", "--quick", "--size", "64KiB", "--batch", "2",
                             "--clients", "1", "--transport", "tcp", "--master", EtcdAddress()});
  ASSERT_EQ(bench.exit_code, 0) << bench.out << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("cluster: " + EtcdAddress()));

  const std::string trace = dir_.File("t.jsonl");
  ASSERT_TRUE(WriteFile(trace,
                        "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 8, "
                        "\"hash_ids\": [1, 2]}\n"
                        "{\"timestamp\": 10, \"input_length\": 1024, \"output_length\": 8, "
                        "\"hash_ids\": [1, 2]}\n"));
  CommandResult replay = Cli(
      {"replay", "--trace", trace, "--master", EtcdAddress(), "--page-size", "4096", "--max-rate"});
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_THAT(replay.out + replay.err, HasSubstr(EtcdAddress()));
}

// A call stuck on a leader that froze (its try waits out its deadline) is
// tried again on the next leader, when the key named another meanwhile.
TEST_F(LeaderFollowTest, ACallStuckOnAFrozenLeaderMovesToTheNextOne) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  std::unique_ptr<Client> c = Follower(/*rpc_timeout_ms=*/3000);
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Put("before", Bytes(1)).ok());
  a_.master().Freeze();
  auto stuck = std::async(std::launch::async, [&] { return c->Put("during", Bytes(2)); });
  std::this_thread::sleep_for(300ms);  // the put is on its way to A
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  Status s = stuck.get();
  a_.master().Kill(SIGCONT);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Objects(*b_client_), 1u);
}

// The follower on its own: each change of the key reaches its listeners, in
// order, and it stops at once.
TEST_F(LeaderFollowTest, FollowerTellsItsListenersOfEachChange) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  auto follower = etcd::LeaderFollower::Start(EtcdAddress());
  ASSERT_TRUE(follower.ok()) << follower.status().ToString();
  auto first = (*follower)->Leader(etcd::Clock::now() + 10s);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->info.grpc, a_.master_address());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> seen;  // grpc addresses; "" for none
  (*follower)->AddListener([&](const std::optional<etcd::LeaderInfo>& leader) {
    std::lock_guard lock(mu);
    seen.push_back(leader ? leader->grpc : "");
    cv.notify_all();
  });
  auto wait_for = [&](size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 10s, [&] { return seen.size() >= n; });
  };
  ASSERT_NO_FATAL_FAILURE(Publish(nullptr));
  ASSERT_TRUE(wait_for(1));
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  ASSERT_TRUE(wait_for(2));
  ASSERT_NO_FATAL_FAILURE(Unpublish());
  ASSERT_TRUE(wait_for(3));
  {
    std::lock_guard lock(mu);
    EXPECT_THAT(seen, testing::ElementsAre("", b_.master_address(), ""));
  }
  auto none = (*follower)->Leader(etcd::Clock::now() + 200ms);
  EXPECT_EQ(none.status().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(none.status().message(), HasSubstr("has no leader"));
  follower->reset();  // joins its thread, cancelling the watch it waits on
}

// A store node hears of a new leader at once, not at its next heartbeat (an
// hour away here): the new leader gets its heartbeat, and its mount.
TEST_F(LeaderFollowTest, StoreNodeGoesToANewLeaderWithoutWaitingForItsHeartbeat) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  Process node({CrescentBin(), "store", "--master", EtcdAddress(), "--secret-file",
                a_.secret_file(), "--segment-size", "32MiB", "--segment-name", "slow-beat",
                "--heartbeat-interval-ms", "3600000", "--no-shm"},
               dir_.File("slow-beat.log"));
  ASSERT_TRUE(node.WaitForLine("ready", kStartTimeout)) << node.Output();
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!HasSegment(*b_client_, "slow-beat") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(HasSegment(*b_client_, "slow-beat")) << node.Output();
  node.Kill(SIGTERM);
  EXPECT_TRUE(node.Wait(kExitTimeout).has_value());
}

// `crescent top` reads the status page the leader published.
TEST_F(LeaderFollowTest, TopReadsTheLeadersStatusPage) {
  ServeProcess serve;
  ASSERT_TRUE(StartServe(dir_, {}, &serve));
  etcdserverpb::PutRequest put;
  put.set_key(etcd::LeaderKey(kCluster));
  put.set_value(etcd::EncodeLeaderInfo({.master_id = "s",
                                        .grpc = serve.master,
                                        .http = "127.0.0.1:" + std::to_string(serve.http_port)}));
  ASSERT_TRUE(writer_->Put(put).ok());
  CommandResult top = Cli({"top", "--once", "--master", EtcdAddress()});
  EXPECT_EQ(top.exit_code, 0) << top.out << top.err;
  EXPECT_THAT(top.out, HasSubstr("master " + serve.master));
}

// The take-over path of a restore, through a switch of leader: the next
// leader is the master restarted from A's data dir on another port; the node
// that follows the leader key mounts there offering its previous mount, the
// master takes its segment over with the objects in it, and they read back at
// once (a warm cache).
TEST_F(LeaderFollowTest, StoreNodeIsTakenOverWithItsObjectsByTheNextLeader) {
  Cluster restored{ClusterOptions{.stores = 0,
                                  .master_flags = {"--data-dir", dir_.File("data"), "--log-sync",
                                                   "always", "--restore-grace", "30000"}}};
  ASSERT_TRUE(restored.StartMaster());
  ASSERT_NO_FATAL_FAILURE(Publish(&restored));
  Process node({CrescentBin(), "store", "--master", EtcdAddress(), "--secret-file",
                restored.secret_file(), "--segment-size", "32MiB", "--segment-name", "warm",
                "--heartbeat-interval-ms", "100", "--no-shm"},
               dir_.File("warm.log"));
  ASSERT_TRUE(node.WaitForLine("ready", kStartTimeout)) << node.Output();
  std::unique_ptr<Client> c = Follower();
  ASSERT_NE(c, nullptr);
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(c->Put("warm-" + std::to_string(i), Bytes(100 + i)).ok());
  }
  restored.master().Kill(SIGKILL);
  ASSERT_TRUE(restored.master().Wait(kExitTimeout).has_value());
  ASSERT_TRUE(restored.StartMaster());  // a new port: only etcd says where
  ASSERT_NO_FATAL_FAILURE(Publish(&restored));
  ASSERT_TRUE(node.WaitForLine("took it over with its objects", kStartTimeout)) << node.Output();
  for (uint32_t i = 0; i < 8; ++i) {
    auto got = c->Get("warm-" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << i << ": " << got.status().ToString();
    EXPECT_EQ(*got, Bytes(100 + i));
  }
  node.Kill(SIGTERM);
  EXPECT_TRUE(node.Wait(kExitTimeout).has_value());
}

TEST_F(LeaderFollowTest, MalformedEtcdAddressesAreRefusedClearly) {
  for (const std::string bad : {"etcd://127.0.0.1:2379", "etcd:///follow", "etcd://127.0.0.1/x",
                                "etcd://127.0.0.1:2379/bad name", "etcd://https://h:1/x"}) {
    ClientConfig c;
    c.master_address = bad;
    auto made = Client::Connect(c);
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(made.status().code(), ErrorCode::kInvalidArgument) << bad;
    CommandResult ls = Cli({"ls", "--master", bad});
    EXPECT_NE(ls.exit_code, 0) << bad;
    EXPECT_THAT(ls.err, HasSubstr("INVALID_ARGUMENT")) << bad;
  }
  CommandResult ls = Cli({"ls", "--master", "etcd://127.0.0.1:2379"});
  EXPECT_THAT(ls.err, HasSubstr("etcd://H1:2379,H2:2379/NAME"));
}

TEST_F(LeaderFollowTest, AnEtcdThatIsDownIsUnavailableNamingItsEndpoints) {
  const std::string e1 = "127.0.0.1:" + std::to_string(PickFreePort());
  const std::string e2 = "127.0.0.1:" + std::to_string(PickFreePort());
  ClientConfig c;
  c.master_address = "etcd://" + e1 + "," + e2 + "/" + kCluster;
  c.rpc_timeout_ms = 2000;
  c.rpc_attempts = 2;
  auto made = Client::Connect(c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Status s = (*made)->Put("k", Bytes(1));
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr(e1 + "," + e2));
  CommandResult ls = Cli({"ls", "--master", c.master_address, "--timeout-ms", "2000"});
  EXPECT_NE(ls.exit_code, 0);
  EXPECT_THAT(ls.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(ls.err, HasSubstr(e1 + "," + e2));
}

// `crescent store --master etcd://...` mounts on the leader, and on the next
// leader once the key names it (its heartbeat there is answered NODE_UNKNOWN,
// so it mounts again).
TEST_F(LeaderFollowTest, StoreNodeMountsOnEachLeader) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  Process node({CrescentBin(), "store", "--master", EtcdAddress(), "--secret-file",
                a_.secret_file(), "--segment-size", "32MiB", "--segment-name", "follower",
                "--heartbeat-interval-ms", "100", "--no-shm"},
               dir_.File("follower.log"));
  ASSERT_TRUE(node.WaitForLine("ready", kStartTimeout)) << node.Output();
  EXPECT_TRUE(HasSegment(*a_client_, "follower"));
  EXPECT_FALSE(HasSegment(*b_client_, "follower"));

  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!HasSegment(*b_client_, "follower") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(HasSegment(*b_client_, "follower")) << node.Output();
  // And after A's death, through a client that follows too.
  a_.master().Kill(SIGKILL);
  std::unique_ptr<Client> c = Follower();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(
      c->Put("on-b", Bytes(5), PutOptions{.replica_count = 1, .preferred_segment = "follower"})
          .ok());
  auto got = c->Get("on-b");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Bytes(5));
  node.Kill(SIGTERM);
  EXPECT_TRUE(node.Wait(kExitTimeout).has_value());
}

}  // namespace
}  // namespace crescent::itest

namespace crescent::itest {
namespace {

class LeaderFollowThreeMembersTest : public LeaderFollowTest {
 protected:
  LeaderFollowThreeMembersTest() { members_ = 3; }
};

// The etcd member a client watches stalls (SIGSTOP: its watch stays open and
// silent) while the leader dies and another takes over: the client's failed
// try reads the key again, from another member, and its retry reaches the new
// leader.
TEST_F(LeaderFollowThreeMembersTest, AStalledEtcdMemberDoesNotHideTheNewLeader) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  std::unique_ptr<Client> c = Follower();  // asks the first member first
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Put("before", Bytes(1)).ok());
  etcd_.Freeze(0);
  a_.master().Kill(SIGKILL);
  ASSERT_TRUE(a_.master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  Status s = c->Put("after", Bytes(2));
  etcd_.Thaw(0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Objects(*b_client_), 1u);
}

// A retry that goes to a new leader goes at once: the backoff between tries
// is for a master that may come back, and here it would be 90 s.
TEST_F(LeaderFollowThreeMembersTest, ARetryOnANewLeaderSkipsTheBackoff) {
  ASSERT_NO_FATAL_FAILURE(Publish(&a_));
  auto made = rpc::MasterClient::Create({.address = EtcdAddress(),
                                         .rpc_timeout_ms = 5000,
                                         .attempts = 2,
                                         .backoff_initial_ms = 90000,
                                         .backoff_max_ms = 90000});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<rpc::MasterClient> master = std::move(*made);
  ASSERT_TRUE(master->Stats().ok());
  etcd_.Freeze(0);  // the client's watch goes silent
  a_.master().Kill(SIGKILL);
  ASSERT_TRUE(a_.master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(Publish(&b_));
  auto stats = std::async(std::launch::async, [&] { return master->Stats(); });
  const bool done = stats.wait_for(30s) == std::future_status::ready;
  etcd_.Thaw(0);
  ASSERT_TRUE(done) << "the retry waited out its backoff";
  auto got = stats.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->segments.size(), 1u);
  EXPECT_EQ(got->segments[0].spec.owner_node, b_.store(0).node_id);
}

}  // namespace
}  // namespace crescent::itest
