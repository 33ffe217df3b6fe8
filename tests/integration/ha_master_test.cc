// Masters of one cluster on a real etcd (docs/ha.md), as real processes: one
// leads and the other follows its log as a hot standby. After a `kill -9` of
// the leader the standby takes over, and every put acknowledged before the
// kill reads back byte-identical through the store node, which takes its
// segment over on the new leader (a warm cache); a leader frozen past its
// lease is deposed, acknowledges nothing after, and comes back as a standby.
//
// Clients reach the leader through the cluster's etcd:// address, or, in
// the kill test, through one address: both masters are given the same
// --port, which only the leader listens on (a standby opens no port), as a
// virtual address would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "durability/etcd_log.h"
#include "durability/snapshot_file.h"
#include "integration/cluster.h"
#include "integration/etcd_cluster.h"
#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;

class HaMasterTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(etcd_.Start(EtcdMembers(), etcd_dir_.path(), &why)) << why;
    ClusterOptions o;
    o.stores = 0;
    o.master_flags = HaFlags();
    cluster_ = std::make_unique<Cluster>(o);
  }
  virtual int EtcdMembers() const { return 1; }
  std::vector<std::string> HaFlags() const {
    return {"--etcd", etcd_.endpoints(), "--cluster", "c1", "--leader-ttl-ms", "2000"};
  }
  // A second master of the cluster on `port` (its admin HTTP on `http_port`,
  // 0: none), waited for until it follows the log as a standby.
  std::unique_ptr<Process> StartStandby(uint16_t port, uint16_t http_port = 0,
                                        const std::vector<std::string>& extra = {},
                                        const std::string& name = "standby") {
    std::vector<std::string> argv = {CrescentBin(),
                                     "master",
                                     "--port",
                                     std::to_string(port),
                                     "--http-port",
                                     std::to_string(http_port),
                                     "--secret-file",
                                     cluster_->secret_file(),
                                     "--heartbeat-ttl-ms",
                                     "1000"};
    for (const std::string& f : HaFlags()) argv.push_back(f);
    for (const std::string& f : extra) argv.push_back(f);
    auto p = std::make_unique<Process>(argv, cluster_->dir().File(name + ".log"));
    EXPECT_TRUE(p->WaitForLine("standby of cluster c1", kStartTimeout)) << p->Output();
    return p;
  }
  // Puts `n` keys of random bytes through `client`; the acknowledged ones.
  static std::map<std::string, std::vector<std::byte>> PutSome(Client& client, int n,
                                                               const std::string& prefix) {
    std::map<std::string, std::vector<std::byte>> acked;
    for (int i = 0; i < n; ++i) {
      const std::string key = prefix + std::to_string(i);
      std::vector<std::byte> value = RandomBytes(4096 + 37 * i, static_cast<uint32_t>(i));
      if (client.Put(key, value).ok()) acked.emplace(key, std::move(value));
    }
    return acked;
  }

  // Reads every acknowledged put back through `client`, byte for byte,
  // trying each for up to 30 s (the new leader, the node's take-over);
  // `context` is printed with a failure.
  static void ExpectAllReadBack(Client& client,
                                const std::map<std::string, std::vector<std::byte>>& acked,
                                const std::function<std::string()>& context) {
    for (const auto& [key, value] : acked) {
      StatusOr<std::vector<std::byte>> got = Status(ErrorCode::kUnavailable, "not tried");
      for (auto until = std::chrono::steady_clock::now() + 30s;
           std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms)) {
        got = client.Get(key);
        if (got.ok()) break;
      }
      ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString() << "\n" << context();
      EXPECT_EQ(*got, value) << key;
    }
  }

  TempDir etcd_dir_;
  EtcdCluster etcd_;
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(HaMasterTest, AStandbyTakesOverAKilledLeaderWithEveryAcknowledgedPutReadable) {
  const uint16_t port = PickFreePort(), http_port = PickFreePort();
  ASSERT_TRUE(cluster_->StartMaster(port));
  std::unique_ptr<Process> standby = StartStandby(port, http_port);
  ASSERT_TRUE(cluster_->AddStore());
  std::unique_ptr<Client> client = cluster_->Connect(/*use_shm=*/false);
  ASSERT_NE(client, nullptr);
  const auto acked = PutSome(*client, 40, "ha/k");
  ASSERT_EQ(acked.size(), 40u);
  // The standby applies the log as it is written: the leader's Stats list
  // both masters, the standby caught up (each reports twice a second).
  MastersStat masters;
  for (auto until = std::chrono::steady_clock::now() + 30s;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(100ms)) {
    StatusOr<ClusterStat> stat = client->Stat();
    ASSERT_TRUE(stat.ok()) << stat.status().ToString();
    masters = stat->masters;
    if (masters.members.size() == 2 && masters.members[0].lag_records == 0 &&
        masters.members[1].lag_records == 0) {
      break;
    }
  }
  EXPECT_EQ(masters.cluster, "c1");
  ASSERT_EQ(masters.members.size(), 2u);
  EXPECT_EQ(masters.members[0].leader + masters.members[1].leader, 1);
  for (const MasterMemberStat& m : masters.members) {
    EXPECT_EQ(m.lag_records, 0u) << m.master_id;
    EXPECT_GE(m.applied_records, 41u) << m.master_id;  // the mount, and each put once complete
  }
  CommandResult stat =
      RunCrescent({"stat", "--master", cluster_->master_address()}, cluster_->dir().path());
  EXPECT_THAT(stat.out, HasSubstr("cluster      c1 on etcd"));
  EXPECT_THAT(stat.out, HasSubstr("standby"));

  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(standby->WaitForLine("ready", 30s)) << standby->Output();
  EXPECT_THAT(standby->Output(), HasSubstr("leader of cluster c1"));
  // The node finds its master gone, mounts again on the new one and takes
  // its segment over: every acknowledged put reads back, byte for byte.
  ExpectAllReadBack(*client, acked, [] { return std::string(); });
  // And the new leader takes puts.
  EXPECT_EQ(PutSome(*client, 5, "ha/after").size(), 5u);
  // Its status report names it the leader of c1.
  httplib::Client http("127.0.0.1", http_port);
  auto res = http.Get("/api/status");
  ASSERT_TRUE(res && res->status == 200);
  const auto report = nlohmann::json::parse(res->body);
  ASSERT_TRUE(report.contains("cluster")) << res->body;
  EXPECT_EQ(report["cluster"]["name"], "c1");
  EXPECT_EQ(report["cluster"]["leader_id"], report["cluster"]["self_id"]) << res->body;
  // And its metrics: it leads, and etcd committed its log's batches.
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_THAT(metrics->body, HasSubstr("\ncrescent_ha_leader 1\n"));
  EXPECT_THAT(metrics->body, testing::ContainsRegex("\ncrescent_etcd_commit_seconds_count [1-9]"));
}

// The production path: masters on ports of their own; the store node and
// the client name the cluster (etcd://.../c1) and follow its leader.
TEST_F(HaMasterTest, ThroughEtcdANodeAndAClientFollowTheNewLeaderWithNothingLost) {
  ASSERT_TRUE(cluster_->StartMaster(PickFreePort()));
  std::unique_ptr<Process> standby = StartStandby(PickFreePort());
  const std::string address = "etcd://" + etcd_.endpoints() + "/c1";
  Process store(
      {CrescentBin(), "store", "--master", address, "--secret-file", cluster_->secret_file(),
       "--segment-size", "64MiB", "--heartbeat-interval-ms", "100", "--no-shm"},
      cluster_->dir().File("etcd-store.log"));
  ASSERT_TRUE(store.WaitForLine("ready", kStartTimeout)) << store.Output();
  ClientConfig c = cluster_->ClientConfigFor(false);
  c.master_address = address;
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const auto acked = PutSome(**client, 30, "ha/etcd");
  ASSERT_EQ(acked.size(), 30u);

  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(standby->WaitForLine("ready", 30s)) << standby->Output();
  ExpectAllReadBack(**client, acked, [&] { return store.Output(); });
  EXPECT_EQ(PutSome(**client, 5, "ha/etcd-after").size(), 5u);
  EXPECT_THAT(store.Output(), HasSubstr("took it over with its objects"));
}

TEST_F(HaMasterTest, AFrozenLeaderIsDeposedAcknowledgesNothingMoreAndComesBackAsAStandby) {
  ASSERT_TRUE(cluster_->StartMaster(PickFreePort()));
  const uint16_t standby_port = PickFreePort();
  std::unique_ptr<Process> standby = StartStandby(standby_port);
  ASSERT_TRUE(cluster_->AddStore());
  std::unique_ptr<Client> old_leader = cluster_->Connect(false);
  ASSERT_NE(old_leader, nullptr);
  ASSERT_EQ(PutSome(*old_leader, 5, "ha/before").size(), 5u);

  // Frozen past its lease (a pause, a stalled host): the standby leads.
  cluster_->master().Freeze();
  ASSERT_TRUE(standby->WaitForLine("ready", 30s)) << standby->Output();
  // A put sent to the old leader while it is frozen, then the thaw: it
  // must not be acknowledged, since the new leader never learns of it.
  Status late_put;
  std::thread late([&] { late_put = old_leader->Put("ha/late", RandomBytes(1000, 9)); });
  std::this_thread::sleep_for(200ms);
  cluster_->master().Kill(SIGCONT);
  late.join();
  EXPECT_FALSE(late_put.ok()) << "a deposed leader acknowledged a put";
  EXPECT_TRUE(cluster_->master().WaitForLine("lost the leadership of cluster c1", 30s))
      << cluster_->master().Output();
  // It runs again, as a standby of the new leader.
  std::this_thread::sleep_for(100ms);
  const std::string out = cluster_->master().Output();
  const size_t lost = out.find("lost the leadership");
  EXPECT_NE(out.find("standby of cluster c1", lost), std::string::npos) << out;

  ClientConfig c = cluster_->ClientConfigFor(false);
  c.master_address = "127.0.0.1:" + std::to_string(standby_port);
  auto new_leader = Client::Connect(c);
  ASSERT_TRUE(new_leader.ok()) << new_leader.status().ToString();
  StatusOr<bool> late_there = (*new_leader)->Exists("ha/late");
  ASSERT_TRUE(late_there.ok()) << late_there.status().ToString();
  EXPECT_FALSE(*late_there);
}

TEST_F(HaMasterTest, AClusterMasterRefusesBadFlags) {
  CommandResult r = RunCrescent({"master", "--etcd", etcd_.endpoints(), "--cluster", "bad name",
                                 "--port", "0", "--secret-file", cluster_->secret_file()},
                                cluster_->dir().path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cluster"));
  r = RunCrescent(
      {"master", "--cluster", "c1", "--port", "0", "--secret-file", cluster_->secret_file()},
      cluster_->dir().path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--cluster needs --etcd"));
  r = RunCrescent({"master", "--etcd", etcd_.endpoints(), "--cluster", "c1", "--data-dir",
                   cluster_->dir().File("data"), "--log-sync", "always", "--port", "0",
                   "--secret-file", cluster_->secret_file()},
                  cluster_->dir().path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--log-sync with --etcd"));
  // A single master's data dir (its own log) is not a cluster master's.
  Process single({CrescentBin(), "master", "--port", "0", "--http-port", "0", "--data-dir",
                  cluster_->dir().File("single"), "--secret-file", cluster_->secret_file()},
                 cluster_->dir().File("single.log"));
  ASSERT_TRUE(single.WaitForLine("ready", kStartTimeout)) << single.Output();
  single.Kill(SIGTERM);
  ASSERT_TRUE(single.Wait(std::chrono::milliseconds(30000)).has_value());
  r = RunCrescent({"master", "--etcd", etcd_.endpoints(), "--cluster", "c1", "--data-dir",
                   cluster_->dir().File("single"), "--port", "0", "--http-port", "0",
                   "--secret-file", cluster_->secret_file()},
                  cluster_->dir().path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds a single master's operation log"));
  r = RunCrescent(
      {"master", "--log-in-flight", "2", "--port", "0", "--secret-file", cluster_->secret_file()},
      cluster_->dir().path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--log-in-flight needs --etcd"));
  r = RunCrescent({"master", "--etcd", etcd_.endpoints(), "--log-in-flight", "0", "--port", "0",
                   "--secret-file", cluster_->secret_file()},
                  cluster_->dir().path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--log-in-flight"));
}

// Masters with data dirs: the leader snapshots, the standby keeps copies of
// its snapshots, and the log in etcd is trimmed before what both hold. A
// master that joins afterwards with an empty data dir cannot follow the log
// from 0: it bootstraps from the leader's snapshot, then follows the log,
// and once both others are killed it leads with every acknowledged put
// readable, byte for byte.
TEST_F(HaMasterTest, TheLogIsTrimmedAndANewMasterBootstrapsFromTheLeadersSnapshot) {
  auto dir = [&](const char* name) {
    return std::vector<std::string>{"--data-dir", cluster_->dir().File(name), "--snapshot-interval",
                                    "1"};
  };
  std::unique_ptr<Process> a = StartStandby(PickFreePort(), 0, dir("a"), "a");
  ASSERT_TRUE(a->WaitForLine("ready", 30s)) << a->Output();
  std::unique_ptr<Process> b = StartStandby(PickFreePort(), 0, dir("b"), "b");
  const std::string address = "etcd://" + etcd_.endpoints() + "/c1";
  Process store(
      {CrescentBin(), "store", "--master", address, "--secret-file", cluster_->secret_file(),
       "--segment-size", "64MiB", "--heartbeat-interval-ms", "100", "--no-shm"},
      cluster_->dir().File("trim-store.log"));
  ASSERT_TRUE(store.WaitForLine("ready", kStartTimeout)) << store.Output();
  ClientConfig c = cluster_->ClientConfigFor(false);
  c.master_address = address;
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::map<std::string, std::vector<std::byte>> acked;
  auto etcd = etcd::EtcdClient::Create({{etcd_.endpoint(0)}, 2000ms});
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  // Puts go on until the log no longer starts at 0 (a snapshot a second,
  // each member reporting twice a second).
  std::optional<uint64_t> first;
  for (int round = 0; round < 120; ++round) {
    for (auto& kv : PutSome(**client, 5, "trim/" + std::to_string(round) + "/")) {
      acked.insert(std::move(kv));
    }
    StatusOr<std::optional<uint64_t>> f = durability::EtcdLogFirst(**etcd, "c1");
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    first = *f;
    if (first && *first > 0) break;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_TRUE(first && *first > 0) << a->Output() << b->Output();
  // The standby holds a copy of a leader's snapshot (the trim waited for it).
  EXPECT_FALSE(durability::ListSnapshots(cluster_->dir().File("b")).empty()) << b->Output();

  std::unique_ptr<Process> c3 = StartStandby(PickFreePort(), 0, dir("c"), "c");
  EXPECT_TRUE(c3->WaitForLine("bootstrapped from the leader's snapshot", 30s)) << c3->Output();
  for (auto& kv : PutSome(**client, 10, "trim/late/")) acked.insert(std::move(kv));
  a->Kill(SIGKILL);
  b->Kill(SIGKILL);
  ASSERT_TRUE(c3->WaitForLine("ready", 60s)) << c3->Output();
  EXPECT_THAT(c3->Output(), HasSubstr("leader of cluster c1"));
  ExpectAllReadBack(**client, acked, [&] { return c3->Output(); });
}

// Three etcd members: one killed (the first endpoint, the one the masters
// and clients try first) interrupts nothing for good: puts keep being
// acknowledged, and every one reads back.
class HaMasterThreeEtcdTest : public HaMasterTest {
 protected:
  int EtcdMembers() const override { return 3; }
};

TEST_F(HaMasterThreeEtcdTest, AnEtcdMemberKilledStopsNothing) {
  ASSERT_TRUE(cluster_->StartMaster(PickFreePort()));
  std::unique_ptr<Process> standby = StartStandby(PickFreePort());
  // The node and the client follow the cluster: if etcd's own election after
  // the kill outlasts the leader's lease (a loaded machine), the standby
  // takes over, and nothing may be lost then either.
  const std::string address = "etcd://" + etcd_.endpoints() + "/c1";
  Process store(
      {CrescentBin(), "store", "--master", address, "--secret-file", cluster_->secret_file(),
       "--segment-size", "64MiB", "--heartbeat-interval-ms", "100", "--no-shm"},
      cluster_->dir().File("member-kill-store.log"));
  ASSERT_TRUE(store.WaitForLine("ready", kStartTimeout)) << store.Output();
  ClientConfig c = cluster_->ClientConfigFor(false);
  c.master_address = address;
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto acked = PutSome(**client, 10, "ha/m-before");
  ASSERT_EQ(acked.size(), 10u);
  etcd_.Kill(0);
  // Puts go on (the first may wait for etcd's own election).
  std::map<std::string, std::vector<std::byte>> after;
  for (auto until = std::chrono::steady_clock::now() + 30s;
       after.size() < 10 && std::chrono::steady_clock::now() < until;) {
    after.merge(PutSome(**client, 10, "ha/m-after" + std::to_string(after.size())));
  }
  EXPECT_GE(after.size(), 10u);
  acked.merge(after);
  ExpectAllReadBack(**client, acked, [&] { return store.Output(); });
  // Usually the same master still leads; whether it does depends on how long
  // etcd's own election took (docs/ha.md, the failures table), so it is not
  // asserted.
  EXPECT_TRUE(standby->Running());
}

}  // namespace
}  // namespace crescent::itest
