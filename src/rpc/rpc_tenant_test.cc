// The handlers' key namespaces (key_scope.h): each caller's key calls act in
// its tenant's namespace, or the default one, on a real engine; the handlers
// are called as both transports call them, with the Caller they
// authenticated.
#include <gmock/gmock.h>

#include <memory>
#include <string>
#include <vector>

#include "master/master_service.h"
#include "rpc/key_scope.h"
#include "rpc/server_handlers.h"
#include "transfer/capability.h"

namespace crescent::rpc {
namespace {

using auth::Role;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class TenantHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.heartbeat_ttl_ms = int64_t{1} << 40;
    auto m = master::MasterService::Create(config_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    master_ = std::move(m).value();
    auto signer = transfer::CapabilitySigner::Create("rpc-tenant-test-secret-0123456789");
    ASSERT_TRUE(signer.ok());
    signer_ = std::make_unique<transfer::CapabilitySigner>(std::move(signer).value());
    handlers_ = std::make_unique<MasterHandlers>(options_, *master_, *signer_);
    ASSERT_TRUE(
        master_->MountSegment({"seg", 1 << 20, "node-a", "127.0.0.1:7001", master::Tier::kDram})
            .ok());
  }

  Status Put(const Caller& c, const std::string& key, uint64_t size = 4096) {
    proto::PutStartRequest start;
    start.set_key(key);
    start.set_size(size);
    start.mutable_config()->set_replica_count(1);
    proto::PutStartResponse started;
    handlers_->PutStart(c, start, &started);
    if (started.status().code() != 0)
      return Status(ErrorCode(started.status().code()), started.status().message());
    proto::PutTokenRequest end;
    end.set_key(key);
    end.set_token(started.token());
    proto::StatusResponse ended;
    handlers_->PutEnd(c, end, &ended);
    return Status(ErrorCode(ended.status().code()), ended.status().message());
  }
  uint64_t SizeOf(const Caller& c, const std::string& key) {
    proto::KeyRequest req;
    req.set_key(key);
    proto::ReadResult r;
    handlers_->GetReplicaList(c, req, &r);
    return r.status().code() == 0 ? r.size() : 0;
  }
  bool Exists(const Caller& c, const std::string& key) {
    proto::KeyRequest req;
    req.set_key(key);
    proto::ExistsResponse r;
    handlers_->Exists(c, req, &r);
    return r.exists();
  }
  std::vector<std::string> List(const Caller& c, const std::string& prefix = "") {
    proto::ListRequest req;
    req.set_prefix(prefix);
    proto::ListResponse r;
    handlers_->List(c, req, &r);
    return {r.keys().begin(), r.keys().end()};
  }
  uint64_t RemoveAll(const Caller& c) {
    proto::RemoveAllRequest req;
    req.set_force(true);
    proto::CountResponse r;
    handlers_->RemoveAll(c, req, &r);
    return r.count();
  }

  const Caller t1_{Role::kClient, "app1", "t1"};
  const Caller t2_{Role::kClient, "app2", "t2"};
  const Caller plain_{Role::kClient, "app", ""};
  const Caller admin_{Role::kAdmin, "root", ""};
  master::MasterConfig config_;
  MasterServerOptions options_;
  std::unique_ptr<master::MasterService> master_;
  std::unique_ptr<transfer::CapabilitySigner> signer_;
  std::unique_ptr<MasterHandlers> handlers_;
};

TEST_F(TenantHandlersTest, TenantsWithTheSameKeysNeverCross) {
  ASSERT_TRUE(Put(t1_, "k", 4096).ok());
  ASSERT_TRUE(Put(t2_, "k", 8192).ok());
  EXPECT_FALSE(Exists(plain_, "k"));
  EXPECT_EQ(SizeOf(t1_, "k"), 4096u);
  EXPECT_EQ(SizeOf(t2_, "k"), 8192u);
  // A put of t1's key again is t1's own duplicate, whatever t2 holds.
  EXPECT_EQ(Put(t1_, "k").code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_THAT(List(t1_), ElementsAre("k"));
  ASSERT_TRUE(Put(t1_, "only-t1").ok());
  EXPECT_THAT(List(t2_), ElementsAre("k"));
  EXPECT_THAT(List(t1_, "only"), ElementsAre("only-t1"));

  proto::KeysRequest q;
  q.add_keys("k");
  q.add_keys("only-t1");
  proto::BatchQueryPrefixResponse leading;
  handlers_->BatchQueryPrefix(t2_, q, &leading);
  EXPECT_EQ(leading.leading(), 1u);

  proto::RemoveRequest rm;
  rm.set_key("only-t1");
  rm.set_force(true);
  proto::StatusResponse removed;
  handlers_->Remove(t2_, rm, &removed);
  EXPECT_EQ(removed.status().code(), int(ErrorCode::kObjectNotFound));
  // Its message names the key as t2 named it, not the stored form.
  EXPECT_THAT(removed.status().message(), Not(HasSubstr("\x1d")));
  EXPECT_TRUE(Exists(t1_, "only-t1"));

  EXPECT_EQ(RemoveAll(t2_), 1u);
  EXPECT_TRUE(Exists(t1_, "k"));
  EXPECT_FALSE(Exists(t2_, "k"));
}

// The longest-prefix get answers in the caller's namespace: the matched key
// as the caller names it, and no other tenant's (nor the default's) key.
TEST_F(TenantHandlersTest, LongestPrefixStaysInTheCallersNamespace) {
  ASSERT_TRUE(Put(plain_, "a").ok());
  ASSERT_TRUE(Put(t1_, "a/b", 4096).ok());
  ASSERT_TRUE(Put(t2_, "a/b/c", 8192).ok());
  auto longest = [&](const Caller& c, const std::string& key) {
    proto::KeyRequest req;
    req.set_key(key);
    proto::LongestPrefixResponse r;
    handlers_->GetLongestPrefix(c, req, &r);
    return r;
  };
  proto::LongestPrefixResponse r = longest(t1_, "a/b/c/d");
  ASSERT_EQ(r.status().code(), 0) << r.status().message();
  EXPECT_EQ(r.key(), "a/b");
  EXPECT_EQ(r.read().size(), 4096u);
  ASSERT_EQ(r.read().replicas_size(), 1);
  EXPECT_EQ(longest(t2_, "a/b/c/d").key(), "a/b/c");
  EXPECT_EQ(longest(plain_, "a/b/c/d").key(), "a");
  EXPECT_EQ(longest(admin_, "a/b/c/d").key(), "a");
  r = longest(t2_, "a/b");
  EXPECT_EQ(r.status().code(), int(ErrorCode::kObjectNotFound));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("\x1d")));
  EXPECT_EQ(longest(admin_, std::string("\x1dt1\x1d") + "a/b/c").status().code(),
            int(ErrorCode::kInvalidKey));
  EXPECT_EQ(longest(t1_, "").status().code(), int(ErrorCode::kInvalidKey));
}

TEST_F(TenantHandlersTest, TheReservedByteIsRefusedFromEveryCaller) {
  const std::string forged = std::string("\x1dt1\x1d") + "k";
  ASSERT_TRUE(Put(t1_, "k").ok());
  for (const Caller* c : {&t2_, &plain_, &admin_}) {
    EXPECT_EQ(Put(*c, forged).code(), ErrorCode::kInvalidKey);
    EXPECT_EQ(SizeOf(*c, forged), 0u);
    EXPECT_FALSE(Exists(*c, forged));
  }
  proto::KeysRequest batch;
  batch.add_keys("fine");
  batch.add_keys(forged);
  proto::BatchExistsResponse r;
  handlers_->BatchExists(t2_, batch, &r);
  ASSERT_EQ(r.statuses_size(), 2);
  EXPECT_EQ(r.statuses(1).code(), int(ErrorCode::kInvalidKey));
  proto::RemoveByPrefixRequest prefix;
  prefix.set_prefix("\x1dt1");
  prefix.set_force(true);
  proto::CountResponse n;
  handlers_->RemoveByPrefix(t2_, prefix, &n);
  EXPECT_EQ(n.status().code(), int(ErrorCode::kInvalidKey));
  EXPECT_TRUE(Exists(t1_, "k"));
}

TEST_F(TenantHandlersTest, WhoSeesWhatOfTheWholeStore) {
  ASSERT_TRUE(Put(t1_, "k").ok());
  ASSERT_TRUE(Put(plain_, "k").ok());
  // A client without a tenant sees the default namespace only.
  EXPECT_THAT(List(plain_), ElementsAre("k"));
  // An admin sees every key, tenants' as stored.
  EXPECT_THAT(List(admin_), ElementsAre(std::string("\x1dt1\x1dk"), "k"));
  EXPECT_EQ(RemoveAll(plain_), 1u);
  EXPECT_TRUE(Exists(t1_, "k"));
  ASSERT_TRUE(Put(plain_, "k").ok());
  EXPECT_EQ(RemoveAll(admin_), 2u);
  EXPECT_FALSE(Exists(t1_, "k"));
}

TEST_F(TenantHandlersTest, KeyScopeMapsInAndOut) {
  const KeyScope scope(t1_);
  const std::string t1 = "\x1dt1\x1d";
  EXPECT_EQ(scope.Key("a"), t1 + "a");
  EXPECT_EQ(scope.Key("\x1dx"), "\x1d");
  EXPECT_EQ(scope.Shown(t1 + "a"), "a");
  const Status missing(ErrorCode::kObjectNotFound, "key '" + t1 + "a' not found");
  EXPECT_EQ(scope.Shown(missing).message(), "key 'a' not found");
  EXPECT_TRUE(KeyScope(admin_).whole_store());
  EXPECT_TRUE(KeyScope(Unchecked()).whole_store());
  EXPECT_TRUE(KeyScope(plain_).default_only());
  EXPECT_FALSE(KeyScope(t1_).default_only());
}

}  // namespace
}  // namespace crescent::rpc
