// Roles against a real `crescent master --auth-file` (docs/security.md,
// "Roles" and "Nodes"): an admin, a node and a client token each make every
// call of the control table (control_methods.h) over the lean protocol, and
// are refused PERMISSION_DENIED exactly where the roles table says; and the
// forged-node scenarios of issue 41 are each refused: a client mounting a huge
// segment, a node token heartbeating, unmounting or taking over another node's
// segment, a client reporting every node unreachable (puts keep working), and
// a client reporting healthy replicas corrupt (they stay).
//
// The same table over gRPC, where a token is a bearer token under TLS, is
// checked by tls_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <functional>
#include <set>
#include <thread>

#include "integration/cluster.h"
#include "integration/roles_table.h"
#include "rpc/master_client.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;

class NodeRolesTest : public WithCluster<testing::Test> {
 protected:
  std::string AuthFile() const { return dir_.File("auth"); }
  // `crescent token add` NAME with ROLE: the token it printed.
  std::string AddToken(const std::string& name, const std::string& role) {
    CommandResult r = RunCrescent(
        {"token", "add", "--auth-file", AuthFile(), "--name", name, "--role", role}, dir_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }
  std::string TokenFile(const std::string& name, const std::string& token) {
    const std::string path = dir_.File(name);
    EXPECT_TRUE(WriteFile(path, token + "\n"));
    EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
    return path;
  }

  // A master with admin "root", node "node-a" (its `stores` store nodes
  // mount with it), node "node-b" and client "app".
  void Start(int stores, std::vector<std::string> master_flags = {}) {
    admin_ = AddToken("root", "admin");
    node_a_ = AddToken("node-a", "node");
    node_b_ = AddToken("node-b", "node");
    app_ = AddToken("app", "client");
    ClusterOptions o;
    o.stores = stores;
    o.master_flags = {"--auth-file", AuthFile()};
    o.master_flags.insert(o.master_flags.end(), master_flags.begin(), master_flags.end());
    o.store_flags = {"--token-file", TokenFile("node-a.token", node_a_)};
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  }
  std::unique_ptr<rpc::MasterClient> As(const std::string& token) {
    rpc::MasterClientOptions o;
    o.address = cluster_->master_address();
    o.token = token;
    o.attempts = 1;
    auto master = rpc::MasterClient::Create(o);
    EXPECT_TRUE(master.ok()) << master.status().ToString();
    return master.ok() ? std::move(master).value() : nullptr;
  }
  // A data-plane client with the "app" token.
  std::unique_ptr<Client> AppClient() {
    ClientConfig cc = cluster_->ClientConfigFor(false);
    cc.token = app_;
    auto client = Client::Connect(cc);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }
  // A segment of `capacity` bytes for `node`, at an address nothing serves.
  static master::SegmentSpec Spec(const std::string& name, const std::string& node,
                                  uint64_t capacity = 64ull << 20) {
    master::SegmentSpec spec;
    spec.name = name;
    spec.owner_node = node;
    spec.capacity = capacity;
    spec.endpoint = "127.0.0.1:1";
    spec.owner_token = 42;
    return spec;
  }
  // Whether `key` is still there for `client`, with its bytes.
  static bool Kept(rpc::MasterClient& client, const std::string& key) {
    StatusOr<bool> there = client.Exists(key);
    return there.ok() && *there;
  }

  TempDir dir_;
  std::string admin_, node_a_, node_b_, app_;
};

Status First(const std::vector<Status>& statuses) {
  return statuses.empty() ? Status(ErrorCode::kInternal, "no status") : statuses.front();
}
template <typename T>
Status First(const std::vector<StatusOr<T>>& results) {
  return results.empty() ? Status(ErrorCode::kInternal, "no result") : results.front().status();
}

// One call of the table, made by `role` (whose name tags what it creates).
using Call = std::function<Status(rpc::MasterClient&, const std::string& role)>;

std::vector<std::pair<std::string, Call>> EveryCall() {
  const std::vector<std::string> keys{"matrix/k1", "matrix/k2"};
  const std::vector<uint64_t> sizes{100, 100}, tokens{1, 1}, sums{0, 0};
  const std::vector<uint32_t> stale{60000};
  master::PutConfig config;
  config.replica_count = 1;
  return {
      {"MountSegment",
       [](rpc::MasterClient& m, const std::string& r) {
         master::SegmentSpec spec;
         spec.name = "matrix-" + r;
         spec.owner_node = "matrix-node-" + r;
         spec.capacity = 64ull << 20;
         spec.endpoint = "127.0.0.1:1";
         spec.owner_token = 7;
         return m.MountSegment(spec).status();
       }},
      {"Heartbeat",
       [](rpc::MasterClient& m, const std::string& r) { return m.Heartbeat("matrix-node-" + r); }},
      {"UnmountSegment",
       [](rpc::MasterClient& m, const std::string& r) {
         return m.UnmountSegment("matrix-" + r, "matrix-node-" + r, 7);
       }},
      {"ListSegments",
       [](rpc::MasterClient& m, const std::string&) { return m.ListSegments().status(); }},
      {"PutStart",
       [config](rpc::MasterClient& m, const std::string&) {
         return m.PutStart("matrix/k0", 100, config).status();
       }},
      {"PutEnd", [](rpc::MasterClient& m, const std::string&) { return m.PutEnd("matrix/k0", 1); }},
      {"PutRevoke",
       [](rpc::MasterClient& m, const std::string&) { return m.PutRevoke("matrix/k0", 1); }},
      {"BatchPutStart",
       [=](rpc::MasterClient& m, const std::string&) {
         return First(m.BatchPutStart(keys, sizes, config, false));
       }},
      {"BatchPutEnd", [=](rpc::MasterClient& m,
                          const std::string&) { return First(m.BatchPutEnd(keys, tokens, sums)); }},
      {"BatchPutRevoke", [=](rpc::MasterClient& m,
                             const std::string&) { return First(m.BatchPutRevoke(keys, tokens)); }},
      {"GetReplicaList", [](rpc::MasterClient& m,
                            const std::string&) { return m.GetReplicaList("matrix/k0").status(); }},
      {"BatchGetReplicaList",
       [=](rpc::MasterClient& m, const std::string&) {
         return First(m.BatchGetReplicaList(keys, false));
       }},
      {"GetLongestPrefix",
       [](rpc::MasterClient& m, const std::string&) {
         return m.GetLongestPrefix("matrix/k0").status();
       }},
      {"Exists",
       [](rpc::MasterClient& m, const std::string&) { return m.Exists("matrix/k0").status(); }},
      {"BatchExists",
       [=](rpc::MasterClient& m, const std::string&) { return m.BatchExists(keys).status(); }},
      {"BatchQueryPrefix",
       [=](rpc::MasterClient& m, const std::string&) { return m.BatchQueryPrefix(keys).status(); }},
      {"ReportCorruptReplica",
       [](rpc::MasterClient& m, const std::string&) {
         return m.ReportCorruptReplica("matrix/k0", 60000, 0, 1);
       }},
      {"ReportUnreachable",
       [=](rpc::MasterClient& m, const std::string&) { return m.ReportUnreachable(stale); }},
      {"Remove",
       [](rpc::MasterClient& m, const std::string&) { return m.Remove("matrix/k0", false); }},
      {"BatchRemove",
       [=](rpc::MasterClient& m, const std::string&) { return First(m.BatchRemove(keys, false)); }},
      {"RemoveByPrefix",
       [](rpc::MasterClient& m, const std::string&) {
         return m.RemoveByPrefix("matrix/", false).status();
       }},
      {"RemoveAll",
       [](rpc::MasterClient& m, const std::string&) { return m.RemoveAll(false).status(); }},
      {"List",
       [](rpc::MasterClient& m, const std::string&) { return m.List("matrix/", 10).status(); }},
      {"EndSession",
       [=](rpc::MasterClient& m, const std::string&) { return m.EndSession(keys).status(); }},
      {"TouchKeys",
       [=](rpc::MasterClient& m, const std::string&) { return m.TouchKeys(keys).status(); }},
      {"Stats", [](rpc::MasterClient& m, const std::string&) { return m.Stats().status(); }},
      {"Snapshot",
       [](rpc::MasterClient& m, const std::string&) { return m.RequestSnapshot().status(); }},
      {"ReadSnapshot",
       [](rpc::MasterClient& m, const std::string&) { return m.ReadSnapshot(0, 0, 1).status(); }},
      {"ControlEndpoints",
       [](rpc::MasterClient& m, const std::string&) {
         return m.ControlTarget().empty() ? Status(ErrorCode::kUnavailable, "no control endpoint")
                                          : Status::Ok();
       }},
  };
}

TEST_F(NodeRolesTest, EachRoleIsRefusedExactlyTheCallsTheRolesTableDenies) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  const auto calls = EveryCall();
  ASSERT_EQ(calls.size(), kEveryMasterCall.size()) << "every call of CRESCENT_CONTROL_CALLS";
  for (const auto& [role, token] : std::vector<std::pair<std::string, std::string>>{
           {"admin", admin_}, {"node", node_b_}, {"client", app_}}) {
    auto master = As(token);
    ASSERT_NE(master, nullptr);
    for (const auto& [name, call] : calls) {
      SCOPED_TRACE(role + " " + name);
      ASSERT_TRUE(kEveryMasterCall.contains(name));
      const bool allowed = RoleMayCall(role, name);
      const Status s = call(*master, role);
      if (allowed) {
        EXPECT_NE(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
        EXPECT_NE(s.code(), ErrorCode::kUnauthenticated) << s.ToString();
      } else {
        EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
        EXPECT_THAT(s.message(), HasSubstr(name));
      }
    }
  }
}

// "A raw client with no secret mounted evil/dram0 (1 TiB)": a client token
// may not mount at all, and no token mounts more than --max-segment-size.
TEST_F(NodeRolesTest, AClientCannotMountAndNoSegmentExceedsTheSizeLimit) {
  ASSERT_NO_FATAL_FAILURE(Start(1, {"--max-segment-size", "1GiB"}));
  auto app = As(app_);
  auto node_b = As(node_b_);
  auto admin = As(admin_);
  ASSERT_TRUE(app && node_b && admin);
  Status s = app->MountSegment(Spec("evil/dram0", "evil", 1ull << 40)).status();
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
  for (rpc::MasterClient* m : {node_b.get(), admin.get()}) {
    s = m->MountSegment(Spec("evil/dram0", "evil", 1ull << 40)).status();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("--max-segment-size"));
  }
  auto segments = admin->ListSegments();
  ASSERT_TRUE(segments.ok());
  EXPECT_EQ(segments->size(), 1u) << "only the store node's segment";
  EXPECT_TRUE(node_b->MountSegment(Spec("small/dram0", "small", 1ull << 30)).ok())
      << "the limit itself is allowed";
}

// Node token node-b against node-a's live node and segment.
TEST_F(NodeRolesTest, ANodeTokenCannotActForAnotherTokensNode) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  const StoreProcess& a = cluster_->store(0);
  auto node_b = As(node_b_);
  ASSERT_NE(node_b, nullptr);
  Status s = node_b->Heartbeat(a.node_id);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("node '" + a.node_id + "'"));
  s = node_b->UnmountSegment(a.segment, a.node_id, 0);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("segment '" + a.segment + "'"));
  s = node_b->MountSegment(Spec("b-dram0", a.node_id)).status();
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
  s = node_b->MountSegment(Spec(a.segment, "b-node")).status();
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();

  // Its own node it mounts, heartbeats and unmounts.
  ASSERT_TRUE(node_b->MountSegment(Spec("b-dram0", "b-node")).ok());
  EXPECT_TRUE(node_b->Heartbeat("b-node").ok());
  EXPECT_TRUE(node_b->UnmountSegment("b-dram0", "b-node", 42).ok());

  // node-a's segment is still served, and an admin may unmount it (its node
  // mounts it again at its next heartbeat).
  auto admin = As(admin_);
  ASSERT_NE(admin, nullptr);
  auto segments = admin->ListSegments();
  ASSERT_TRUE(segments.ok());
  ASSERT_EQ(segments->size(), 1u);
  EXPECT_EQ(segments->front().spec.name, a.segment);
  EXPECT_TRUE(admin->UnmountSegment(a.segment, "whoever", 0).ok());
}

// The claims live in the master's memory: after a restart, the node mounts
// again (its heartbeat answers NODE_UNKNOWN) and holds its node anew.
TEST_F(NodeRolesTest, AfterAMasterRestartANodeHoldsItsNodeAgain) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  const StoreProcess& a = cluster_->store(0);
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  ASSERT_TRUE(cluster_->StartMaster(cluster_->master_port()));
  auto admin = As(admin_);
  ASSERT_NE(admin, nullptr);
  bool mounted = false;
  for (int i = 0; i < 400 && !mounted; ++i) {
    auto segments = admin->ListSegments();
    mounted = segments.ok() && segments->size() == 1;
    if (!mounted) std::this_thread::sleep_for(milliseconds(25));
  }
  ASSERT_TRUE(mounted) << "node-a's store did not mount on the restarted master";
  auto node_b = As(node_b_);
  ASSERT_NE(node_b, nullptr);
  Status s = node_b->Heartbeat(a.node_id);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
  s = node_b->UnmountSegment(a.segment, a.node_id, 0);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied) << s.ToString();
}

// "ReportUnreachable for every node makes every put answer UNAVAILABLE".
TEST_F(NodeRolesTest, AClientReportingEveryNodeUnreachableDoesNotStopPuts) {
  ASSERT_NO_FATAL_FAILURE(Start(2));
  std::unique_ptr<Client> client = AppClient();
  ASSERT_NE(client, nullptr);
  auto app = As(app_);
  ASSERT_NE(app, nullptr);
  auto segments = app->ListSegments();
  ASSERT_TRUE(segments.ok());
  ASSERT_EQ(segments->size(), 2u);
  std::vector<uint32_t> all;
  for (const auto& s : *segments) all.push_back(s.id);
  const std::vector<std::byte> value = RandomBytes(4096, 3);
  int refused = 0;
  for (int i = 0; i < 24; ++i) refused += app->ReportUnreachable(all).ok() ? 0 : 1;
  EXPECT_GT(refused, 0) << "24 reports at once are past the rate limit (16 at once)";
  for (int i = 0; i < 40; ++i) {
    if (!app->ReportUnreachable(all).ok()) ++refused;
    Status put = client->Put("unreachable/" + std::to_string(i), value);
    ASSERT_TRUE(put.ok()) << "put " << i << ": " << put.ToString();
  }
}

// "ReportCorruptReplica drops any replica, pinned or leased": the replica's
// node hashes it first, and finds it healthy.
TEST_F(NodeRolesTest, AClientReportingHealthyReplicasCorruptDropsNothing) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  std::unique_ptr<Client> client = AppClient();
  ASSERT_NE(client, nullptr);
  auto app = As(app_);
  ASSERT_NE(app, nullptr);
  const std::vector<std::byte> value = RandomBytes(200000, 4);
  PutOptions pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(client->Put("corrupt/pinned", value, pinned).ok());
  ASSERT_TRUE(client->Put("corrupt/leased", value).ok());
  for (const std::string key : {"corrupt/pinned", "corrupt/leased"}) {
    StatusOr<rpc::RemoteRead> read = app->GetReplicaList(key);  // leased from here on
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_EQ(read->replicas.size(), 1u);
    const transfer::Capability& cap = read->replicas[0].cap;
    Status s = app->ReportCorruptReplica(key, cap.segment, cap.offset, read->checksum);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  auto disproved = [&] {
    StatusOr<rpc::ClusterStats> st = app->Stats();
    return st.ok() ? st->counters["crescent_corruption_reports_total{result=\"disproved\"}"] : 0;
  };
  for (int i = 0; i < 400 && disproved() < 2; ++i) std::this_thread::sleep_for(milliseconds(25));
  EXPECT_EQ(disproved(), 2u);
  for (const std::string key : {"corrupt/pinned", "corrupt/leased"}) {
    StatusOr<std::vector<std::byte>> got = client->Get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_TRUE(*got == value);
  }
}

}  // namespace
}  // namespace crescent::itest
