// Leadership (src/etcd/leadership.h) against real etcd members: one candidate
// leads and the other waits until the key is gone; a leader that stops
// renewing its lease (frozen, cut off) stops being Held() before any other can
// lead, and its writes are then refused by etcd itself (the fence); a stalled
// etcd ends Held() within the lease's TTL.
#include "etcd/leadership.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "integration/etcd_cluster.h"

namespace crescent::itest {
namespace {

using etcd::Leadership;
using namespace std::chrono_literals;

class LeadershipTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(etcd_.Start(1, dir_.path(), &why)) << why;
  }
  std::shared_ptr<etcd::EtcdClient> Client() {
    auto c = etcd::EtcdClient::Create({*etcd::ParseEndpoints(etcd_.endpoints()), 500ms});
    EXPECT_TRUE(c.ok());
    return std::shared_ptr<etcd::EtcdClient>(std::move(c.value()));
  }
  std::unique_ptr<Leadership> Campaign(const std::string& who, std::chrono::seconds within = 30s) {
    auto l = Leadership::Campaign(Client(), {"/crescent/t/leader", who, 2000ms},
                                  etcd::Clock::now() + within);
    EXPECT_TRUE(l.ok()) << who << ": " << l.status().ToString();
    return l.ok() ? std::move(l.value()) : nullptr;
  }
  std::string LeaderValue() {
    etcdserverpb::RangeRequest r;
    r.set_key("/crescent/t/leader");
    auto got = Client()->Range(r);
    return got.ok() && got->kvs_size() == 1 ? got->kvs(0).value() : "";
  }
  static etcdserverpb::TxnRequest PutTxn(const std::string& key) {
    etcdserverpb::TxnRequest t;
    auto* p = t.add_success()->mutable_request_put();
    p->set_key(key);
    p->set_value("x");
    return t;
  }

  TempDir dir_;
  EtcdCluster etcd_;
};

TEST_F(LeadershipTest, OneLeadsAndTheOtherTakesOverWhenItResigns) {
  std::unique_ptr<Leadership> a = Campaign("a");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->Held());
  EXPECT_GE(a->ttl(), 2s);  // etcd's minimum
  auto b = std::async(std::launch::async, [&] { return Campaign("b"); });
  EXPECT_EQ(b.wait_for(1500ms), std::future_status::timeout);  // a holds the key
  EXPECT_EQ(LeaderValue(), "a");
  ASSERT_TRUE(a->Publish("a ready at 127.0.0.1:1").ok());
  EXPECT_EQ(LeaderValue(), "a ready at 127.0.0.1:1");
  a->Resign();
  EXPECT_FALSE(a->Held());
  std::unique_ptr<Leadership> bl = b.get();
  ASSERT_NE(bl, nullptr);
  EXPECT_TRUE(bl->Held());
  EXPECT_GT(bl->revision(), a->revision());
  EXPECT_EQ(LeaderValue(), "b");
}

// The fence: a leader frozen past its lease is deposed, and etcd refuses its
// late writes, whatever it believes.
TEST_F(LeadershipTest, AFrozenLeaderIsDeposedAndItsLateWritesRefused) {
  std::unique_ptr<Leadership> a = Campaign("a");
  ASSERT_NE(a, nullptr);
  auto written = a->GuardedTxn(PutTxn("/crescent/t/log/1"));
  ASSERT_TRUE(written.ok() && written->succeeded());
  a->StopKeepAlive();
  std::unique_ptr<Leadership> b = Campaign("b");  // once a's lease expired
  ASSERT_NE(b, nullptr);
  // a knew before b could lead: its last renewal is older than the TTL.
  EXPECT_FALSE(a->Held());
  EXPECT_TRUE(b->Held());
  auto late = a->GuardedTxn(PutTxn("/crescent/t/log/2"));
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_FALSE(late->succeeded());
  EXPECT_EQ(a->Publish("a again").code(), ErrorCode::kNotOwner);
  etcdserverpb::RangeRequest r;
  r.set_key("/crescent/t/log/2");
  EXPECT_EQ(Client()->Range(r)->kvs_size(), 0);
  EXPECT_TRUE(b->Publish("b ready").ok());
  EXPECT_EQ(LeaderValue(), "b ready");
}

// An etcd that stops answering (SIGSTOP: it still accepts connections) ends
// Held() within the TTL, with no answer from anyone.
TEST_F(LeadershipTest, AStalledEtcdEndsHeldWithinTheTtl) {
  std::unique_ptr<Leadership> a = Campaign("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->Held());
  etcd_.Freeze(0);
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    std::this_thread::sleep_for(100ms);
    ended = !a->Held();
  }
  etcd_.Thaw(0);
  EXPECT_TRUE(ended);
}

}  // namespace
}  // namespace crescent::itest
