// EtcdClient (src/etcd/etcd_client.h) against real etcd members: puts, ranges
// and prefix ranges, a transaction guarded by a key's create revision (the
// fencing the masters' leadership uses), leases that keep their keys alive
// only while kept alive, a watch that sees puts and deletes in order, and a
// client that moves past a stalled (SIGSTOP) or dead member within each
// call's deadline instead of hanging.
#include "etcd/etcd_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "integration/etcd_cluster.h"

namespace crescent::itest {
namespace {

using etcd::EtcdClient;
using namespace std::chrono_literals;
using testing::HasSubstr;

std::unique_ptr<EtcdClient> Connect(const std::string& endpoints,
                                    std::chrono::milliseconds timeout = 1000ms) {
  auto parsed = etcd::ParseEndpoints(endpoints);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  auto c = EtcdClient::Create({*parsed, timeout});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c.value()) : nullptr;
}

etcdserverpb::PutRequest PutOf(const std::string& k, const std::string& v, int64_t lease = 0) {
  etcdserverpb::PutRequest p;
  p.set_key(k);
  p.set_value(v);
  p.set_lease(lease);
  return p;
}

StatusOr<etcdserverpb::RangeResponse> Get(EtcdClient& c, const std::string& k, bool prefix) {
  etcdserverpb::RangeRequest r;
  r.set_key(k);
  if (prefix) r.set_range_end(etcd::PrefixEnd(k));
  return c.Range(r);
}

class EtcdClientTest : public testing::Test {
 protected:
  void StartEtcd(int members) {
    std::string why;
    ASSERT_TRUE(etcd_.Start(members, dir_.path(), &why)) << why;
  }
  TempDir dir_;
  EtcdCluster etcd_;
};

TEST(EtcdEndpointsTest, ParsesUrlsAndRefusesWhatCannotWork) {
  auto e = etcd::ParseEndpoints("http://h1:2379,h2:2380/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, (std::vector<std::string>{"h1:2379", "h2:2380"}));
  EXPECT_EQ(etcd::ParseEndpoints("").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(etcd::ParseEndpoints("https://h1:2379").status().message(), HasSubstr("TLS"));
  EXPECT_THAT(etcd::ParseEndpoints("h1").status().message(), HasSubstr("HOST:PORT"));
  EXPECT_EQ(etcd::PrefixEnd("ab"), "ac");
  EXPECT_EQ(etcd::PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(etcd::PrefixEnd(""), std::string(1, '\0'));
}

TEST_F(EtcdClientTest, PutsRangesAndPrefixes) {
  ASSERT_NO_FATAL_FAILURE(StartEtcd(1));
  auto c = Connect(etcd_.endpoints());
  ASSERT_NE(c, nullptr);
  for (std::string k : {"log/1", "log/2", "log/3", "logx"}) {
    ASSERT_TRUE(c->Put(PutOf(k, "v-" + k)).ok()) << k;
  }
  auto one = Get(*c, "log/2", false);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->kvs_size(), 1);
  EXPECT_EQ(one->kvs(0).value(), "v-log/2");
  auto all = Get(*c, "log/", true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->kvs_size(), 3);  // not logx
  etcdserverpb::DeleteRangeRequest d;
  d.set_key("log/");
  d.set_range_end(etcd::PrefixEnd("log/"));
  auto deleted = c->DeleteRange(d);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->deleted(), 3);
  auto status = c->MemberStatus();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_THAT(status->version(), testing::StartsWith("3."));
}

// Leadership as the masters take it: create the key only if absent (create
// revision 0), then write only while it is still ours (its create revision).
TEST_F(EtcdClientTest, ATxnGuardedByTheLeaderKeyFencesADeposedWriter) {
  ASSERT_NO_FATAL_FAILURE(StartEtcd(1));
  auto c = Connect(etcd_.endpoints());
  ASSERT_NE(c, nullptr);
  auto campaign = [&](const std::string& me) {
    etcdserverpb::TxnRequest t;
    auto* cmp = t.add_compare();
    cmp->set_key("leader");
    cmp->set_target(etcdserverpb::Compare::CREATE);
    cmp->set_result(etcdserverpb::Compare::EQUAL);
    cmp->set_create_revision(0);
    *t.add_success()->mutable_request_put() = PutOf("leader", me);
    auto r = c->Txn(t);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->succeeded() ? r->header().revision() : 0;
  };
  auto guarded_put = [&](int64_t rev, const std::string& k) {
    etcdserverpb::TxnRequest t;
    auto* cmp = t.add_compare();
    cmp->set_key("leader");
    cmp->set_target(etcdserverpb::Compare::CREATE);
    cmp->set_result(etcdserverpb::Compare::EQUAL);
    cmp->set_create_revision(rev);
    *t.add_success()->mutable_request_put() = PutOf(k, "x");
    auto r = c->Txn(t);
    return r.ok() && r->succeeded();
  };
  const int64_t a = campaign("a");
  ASSERT_GT(a, 0);
  EXPECT_EQ(campaign("b"), 0);  // taken
  EXPECT_TRUE(guarded_put(a, "log/a1"));
  etcdserverpb::DeleteRangeRequest d;
  d.set_key("leader");
  ASSERT_TRUE(c->DeleteRange(d).ok());  // a loses it (its lease ended)
  const int64_t b = campaign("b");
  ASSERT_GT(b, a);
  EXPECT_FALSE(guarded_put(a, "log/a2"));  // a, deposed, writes nothing more
  EXPECT_TRUE(guarded_put(b, "log/b1"));
  EXPECT_EQ(Get(*c, "log/a2", false)->kvs_size(), 0);
}

TEST_F(EtcdClientTest, ALeaseKeepsItsKeysOnlyWhileKeptAlive) {
  ASSERT_NO_FATAL_FAILURE(StartEtcd(1));
  auto c = Connect(etcd_.endpoints());
  ASSERT_NE(c, nullptr);
  auto lease = c->LeaseGrant(1);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_GE(lease->ttl(), 1);  // etcd may raise it to its minimum
  ASSERT_TRUE(c->Put(PutOf("alive", "1", lease->id())).ok());
  // Kept alive for longer than its TTL: the key stays.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(lease->ttl() + 1);
  while (std::chrono::steady_clock::now() < until) {
    auto left = c->KeepAliveOnce(lease->id());
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    EXPECT_GT(*left, 0);
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_EQ(Get(*c, "alive", false)->kvs_size(), 1);
  // Left alone, it expires and takes the key with it.
  const auto limit = std::chrono::steady_clock::now() + 20s;
  while (Get(*c, "alive", false)->kvs_size() != 0 && std::chrono::steady_clock::now() < limit) {
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_EQ(Get(*c, "alive", false)->kvs_size(), 0);
  auto gone = c->KeepAliveOnce(lease->id());
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(*gone, 0);
  // Revoked: at once.
  auto second = c->LeaseGrant(30);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(c->Put(PutOf("short", "1", second->id())).ok());
  ASSERT_TRUE(c->LeaseRevoke(second->id()).ok());
  EXPECT_EQ(Get(*c, "short", false)->kvs_size(), 0);
}

TEST_F(EtcdClientTest, AWatchSeesPutsAndDeletesInOrderFromARevision) {
  ASSERT_NO_FATAL_FAILURE(StartEtcd(1));
  auto c = Connect(etcd_.endpoints());
  ASSERT_NE(c, nullptr);
  auto first = c->Put(PutOf("w/0", "before"));
  ASSERT_TRUE(first.ok());
  etcdserverpb::WatchCreateRequest req;
  req.set_key("w/");
  req.set_range_end(etcd::PrefixEnd("w/"));
  req.set_start_revision(first->header().revision());  // from w/0's put on
  auto watch = c->Watch(req);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(c->Put(PutOf("w/1", "a")).ok());
  etcdserverpb::DeleteRangeRequest d;
  d.set_key("w/0");
  ASSERT_TRUE(c->DeleteRange(d).ok());
  std::vector<std::string> seen;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (seen.size() < 3) {
    auto r = (*watch)->Next(deadline);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const auto& e : r->events()) {
      seen.push_back((e.type() == etcdserverpb::Event::PUT ? "put " : "delete ") + e.kv().key());
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"put w/0", "put w/1", "delete w/0"}));
  EXPECT_EQ((*watch)->Next(std::chrono::steady_clock::now() + 100ms).status().code(),
            ErrorCode::kTimeout);
  (*watch)->Cancel();
  EXPECT_EQ((*watch)->Next(std::chrono::steady_clock::now() + 1s).status().code(),
            ErrorCode::kUnavailable);
}

// A stalled member still accepts connections: each call's deadline ends the
// wait, and the client goes on with the next member.
TEST_F(EtcdClientTest, AStalledOrDeadMemberIsPassedByWithinTheDeadline) {
  ASSERT_NO_FATAL_FAILURE(StartEtcd(3));
  auto c = Connect(etcd_.endpoints(), 500ms);
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Put(PutOf("k", "v")).ok());
  const std::string first = c->endpoint();
  ASSERT_EQ(first, etcd_.endpoint(0));
  etcd_.Freeze(0);
  // A read is retried on the next member within the call.
  StatusOr<etcdserverpb::RangeResponse> r = Status(ErrorCode::kUnavailable, "not yet");
  for (int i = 0; i < 20 && !r.ok(); ++i) r = Get(*c, "k", false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kvs(0).value(), "v");
  EXPECT_NE(c->endpoint(), first);
  etcd_.Thaw(0);
  etcd_.Kill(1);
  // Writes go on once the remaining members (2 of 3) agree.
  Status put = Status(ErrorCode::kUnavailable, "not yet");
  for (int i = 0; i < 40 && !put.ok(); ++i) put = c->Put(PutOf("k", "w")).status();
  EXPECT_TRUE(put.ok()) << put.ToString();
}

}  // namespace
}  // namespace crescent::itest
