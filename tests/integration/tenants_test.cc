// Tenants and quotas with real processes (docs/security.md, "Tenants",
// "Quotas"): a master with an auth file that declares tenants, store nodes
// that authenticate, and clients of two tenants that use the same key
// strings: put, get, exists, prefix query, list, remove, remove by prefix and
// remove-all never cross; a tenant over its quota evicts its own objects
// while the other's stay, and is refused QUOTA_EXCEEDED when nothing of its
// own can go or the object is larger than the quota.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <regex>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

constexpr size_t kObject = 16 * 1024;

class TenantsTest : public testing::Test {
 protected:
  CommandResult Cli(const std::vector<std::string>& args, const std::string& in = "") {
    return RunCrescent(args, dir_.path(), in);
  }
  std::string AuthFile() const { return dir_.File("auth"); }
  std::string AddToken(const std::string& name, const std::string& role,
                       const std::string& tenant = "") {
    std::vector<std::string> args = {"token",  "add", "--auth-file", AuthFile(),
                                     "--name", name,  "--role",      role};
    if (!tenant.empty()) args.insert(args.end(), {"--tenant", tenant});
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }
  void SetTenant(const std::string& tenant, const std::string& quota) {
    CommandResult r = Cli({"tenant", "set", "--auth-file", AuthFile(), tenant, "--quota", quota});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string TokenFile(const std::string& name, const std::string& token) {
    const std::string path = dir_.File(name);
    EXPECT_TRUE(WriteFile(path, token + "\n"));
    EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
    return path;
  }

  // Tenants t1 (quota 64 KiB: four objects) and t2 (1 MiB), a client token
  // of each, one without a tenant, an admin's; one store node.
  void SetUp() override {
    SetTenant("t1", "64KiB");
    SetTenant("t2", "1MiB");
    const std::string node = TokenFile("node.token", AddToken("node-1", "node"));
    tokens_["t1"] = AddToken("app1", "client", "t1");
    tokens_["t2"] = AddToken("app2", "client", "t2");
    tokens_["plain"] = AddToken("app", "client");
    tokens_["admin"] = AddToken("root", "admin");
    ClusterOptions o;
    o.stores = 1;
    o.master_flags = {"--auth-file", AuthFile()};
    o.store_flags = {"--token-file", node};
    cluster_ = std::make_unique<Cluster>(o);
    ASSERT_TRUE(cluster_->Start());
  }
  std::unique_ptr<Client> As(const std::string& who) {
    ClientConfig c = cluster_->ClientConfigFor(false);
    c.token = tokens_.at(who);
    c.put_retry_ms = 0;
    auto client = Client::Connect(c);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }
  static std::string Text(const StatusOr<std::vector<std::byte>>& v) {
    if (!v.ok()) return v.status().ToString();
    return {reinterpret_cast<const char*>(v->data()), v->size()};
  }
  // PREFIX and i (std::string's own append: GCC 12 warns, wrongly, on "a" + std::string).
  static std::string Key(const char* prefix, int i) {
    std::string out(prefix);
    out.append(std::to_string(i));
    return out;
  }
  static std::vector<std::byte> Bytes(const std::string& s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + s.size()};
  }

  TempDir dir_;
  std::unique_ptr<Cluster> cluster_;
  std::map<std::string, std::string> tokens_;
};

TEST_F(TenantsTest, TwoTenantsWithTheSameKeysNeverCross) {
  auto t1 = As("t1");
  auto t2 = As("t2");
  ASSERT_TRUE(t1 && t2);
  ASSERT_TRUE(t1->Put("k", Bytes("one")).ok());
  ASSERT_TRUE(t2->Put("k", Bytes("two")).ok());
  ASSERT_TRUE(t1->Put("p/0", Bytes("t1 page 0")).ok());
  ASSERT_TRUE(t1->Put("p/1", Bytes("t1 page 1")).ok());
  ASSERT_TRUE(t2->Put("p/0", Bytes("t2 page 0")).ok());
  // Reads: each its own.
  EXPECT_EQ(Text(t1->Get("k")), "one");
  EXPECT_EQ(Text(t2->Get("k")), "two");
  EXPECT_FALSE(*t2->Exists("p/1"));
  EXPECT_TRUE(*t1->Exists("p/1"));
  const std::vector<std::string> chain = {"p/0", "p/1"};
  EXPECT_EQ(*t1->BatchQueryPrefix(chain), 2u);
  EXPECT_EQ(*t2->BatchQueryPrefix(chain), 1u);
  EXPECT_THAT(*t1->List(""), ElementsAre("k", "p/0", "p/1"));
  EXPECT_THAT(*t2->List(""), ElementsAre("k", "p/0"));
  // The CLI of a tenant's token lists its keys as it named them.
  CommandResult ls = Cli({"ls", "--master", cluster_->master_address(), "--token-file",
                          TokenFile("t2.token", tokens_["t2"])});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "k\np/0\n");
  // A client without a tenant sees none of theirs.
  auto plain = As("plain");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(*plain->Exists("k"));
  EXPECT_TRUE(plain->List("")->empty());
  ASSERT_TRUE(plain->Put("k", Bytes("default")).ok());

  // Removes: t2's never reach t1's objects.
  EXPECT_EQ(t2->Remove("p/1", /*force=*/true).code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(*t2->RemoveByPrefix("p/", /*force=*/true), 1u);
  EXPECT_THAT(*t1->List("p/"), ElementsAre("p/0", "p/1"));
  EXPECT_EQ(*t2->RemoveAll(/*force=*/true), 1u);
  EXPECT_TRUE(t2->List("")->empty());
  EXPECT_EQ(Text(t1->Get("k")), "one");
  EXPECT_EQ(Text(plain->Get("k")), "default");
  // The default namespace's remove-all leaves the tenants' objects.
  EXPECT_EQ(*plain->RemoveAll(/*force=*/true), 1u);
  EXPECT_THAT(*t1->List(""), ElementsAre("k", "p/0", "p/1"));
  // A key that names another tenant's namespace is refused.
  Status forged = t2->Put(std::string("\x1dt1\x1dk"), Bytes("x"));
  EXPECT_EQ(forged.code(), ErrorCode::kInvalidKey) << forged.ToString();
  EXPECT_EQ(Text(t1->Get("k")), "one");
  // An admin's remove-all removes every tenant's.
  auto admin = As("admin");
  ASSERT_TRUE(admin);
  EXPECT_EQ(*admin->RemoveAll(/*force=*/true), 3u);
  EXPECT_TRUE(t1->List("")->empty());
}

TEST_F(TenantsTest, AQuotaEvictsTheTenantsOwnOlderObjects) {
  auto t1 = As("t1");
  auto t2 = As("t2");
  ASSERT_TRUE(t1 && t2);
  const std::vector<std::byte> value = RandomBytes(kObject, 9);
  // t2's objects are older than t1's: an eviction by the store's own order
  // would take them first.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(t2->Put(Key("b", i), value).ok());
  for (int i = 0; i < 6; ++i) {
    Status s = t1->Put(Key("a", i), value);
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
  }
  EXPECT_THAT(*t1->List(""), ElementsAre("a2", "a3", "a4", "a5"));
  EXPECT_THAT(*t2->List(""), ElementsAre("b0", "b1", "b2", "b3"));
}

TEST_F(TenantsTest, QuotaExceededWhenNothingOfTheTenantsCanGo) {
  auto t1 = As("t1");
  ASSERT_TRUE(t1);
  Status big = t1->Put("big", RandomBytes(128 * 1024, 1));
  EXPECT_EQ(big.code(), ErrorCode::kQuotaExceeded) << big.ToString();
  EXPECT_THAT(big.message(), HasSubstr("tenant 't1' has a quota of 65536 bytes"));
  EXPECT_THAT(big.message(), HasSubstr("larger than the quota"));
  // Four hard-pinned objects fill the quota: the fifth has nothing to evict.
  PutOptions pinned;
  pinned.hard_pin = true;
  const std::vector<std::byte> value = RandomBytes(kObject, 2);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(t1->Put(Key("pin", i), value, pinned).ok());
  Status more = t1->Put("more", value);
  EXPECT_EQ(more.code(), ErrorCode::kQuotaExceeded) << more.ToString();
  EXPECT_THAT(more.message(), HasSubstr("uses 65536"));
  EXPECT_THAT(more.message(), HasSubstr("none of the tenant's objects can be evicted"));
  EXPECT_EQ(t1->List("")->size(), 4u);
  // The CLI says the same, by name.
  CommandResult r = Cli({"put", "--master", cluster_->master_address(), "--token-file",
                         TokenFile("t1.token", tokens_["t1"]), "more", "-"},
                        std::string(kObject, 'x'));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("QUOTA_EXCEEDED"));
  // Another tenant is not held back.
  auto t2 = As("t2");
  ASSERT_TRUE(t2);
  EXPECT_TRUE(t2->Put("more", value).ok());
}

TEST_F(TenantsTest, StatsShowATenantItsOwnFiguresAndAnAdminEveryTenants) {
  auto t1 = As("t1");
  auto t2 = As("t2");
  ASSERT_TRUE(t1 && t2);
  const std::vector<std::byte> value = RandomBytes(kObject, 4);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t1->Put(Key("a", i), value).ok());
  ASSERT_TRUE(t1->Get("a4").ok());
  EXPECT_FALSE(t1->Get("none").ok());
  ASSERT_TRUE(t2->Put("b", value).ok());

  StatusOr<ClusterStat> mine = t1->Stat();
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  ASSERT_EQ(mine->tenants.size(), 1u);
  const TenantStat& t = mine->tenants[0];
  EXPECT_EQ(t.tenant, "t1");
  EXPECT_EQ(t.quota_bytes, 64u * 1024);
  EXPECT_EQ(t.bytes, 4 * kObject);
  EXPECT_EQ(t.objects, 4u);
  EXPECT_EQ(t.hits, 1u);
  EXPECT_EQ(t.misses, 1u);
  EXPECT_EQ(t.evictions, 1u);
  // Its counters carry its own tenant's samples, none of t2's.
  EXPECT_EQ(mine->counters.count("crescent_tenant_bytes{tenant=\"t1\"}"), 1u);
  EXPECT_EQ(mine->counters.count("crescent_tenant_bytes{tenant=\"t2\"}"), 0u);

  auto admin = As("admin");
  ASSERT_TRUE(admin);
  StatusOr<ClusterStat> all = admin->Stat();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->tenants.size(), 2u);
  EXPECT_EQ(all->tenants[1].tenant, "t2");
  EXPECT_EQ(all->tenants[1].objects, 1u);
  EXPECT_EQ(all->counters.at("crescent_tenant_objects{tenant=\"t2\"}"), 1u);
  // `crescent stat` shows the section: an admin's both tenants, t2's its own.
  CommandResult r = Cli({"stat", "--master", cluster_->master_address(), "--token-file",
                         TokenFile("admin.token", tokens_["admin"])});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tenants      2\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "t1                   64.0 KiB of 64.0 KiB, 4 objects; 1 hits, 1 misses, 1 evictions"));
  r = Cli({"stat", "--master", cluster_->master_address(), "--token-file",
           TokenFile("t2.token", tokens_["t2"])});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tenants      1\n"));
  EXPECT_THAT(r.out, testing::Not(HasSubstr("t1 ")));
}

TEST_F(TenantsTest, AQuotaChangedInTheAuthFileAppliesAfterSighup) {
  auto t1 = As("t1");
  ASSERT_TRUE(t1);
  const std::vector<std::byte> value = RandomBytes(kObject, 6);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(t1->Put(Key("a", i), value).ok());
  SetTenant("t1", "32KiB");
  cluster_->master().Kill(SIGHUP);
  ASSERT_TRUE(cluster_->master().WaitForMatch(std::regex("SIGHUP: reloaded"), kStartTimeout))
      << cluster_->master().Output();
  // 64 KiB held, 32 KiB allowed: the put evicts the three oldest.
  ASSERT_TRUE(t1->Put("a4", value).ok());
  EXPECT_THAT(*t1->List(""), ElementsAre("a3", "a4"));
  StatusOr<ClusterStat> stat = t1->Stat();
  ASSERT_TRUE(stat.ok());
  ASSERT_EQ(stat->tenants.size(), 1u);
  EXPECT_EQ(stat->tenants[0].quota_bytes, 32u * 1024);
}

// The admin port's /api/status and `crescent top` show every tenant.
TEST(TenantsTopTest, TopAndTheStatusReportShowTheTenants) {
  TempDir dir;
  const std::string auth = dir.File("auth");
  ASSERT_EQ(RunCrescent({"tenant", "set", "--auth-file", auth, "t1", "--quota", "1MiB"}, dir.path())
                .exit_code,
            0);
  CommandResult token = RunCrescent(
      {"token", "add", "--auth-file", auth, "--name", "app", "--role", "client", "--tenant", "t1"},
      dir.path());
  ASSERT_EQ(token.exit_code, 0) << token.err;
  ServeProcess serve;
  ASSERT_TRUE(StartServe(dir, {"--auth-file", auth}, &serve));
  ClientConfig c;
  c.master_address = serve.master;
  c.use_shared_memory = false;
  c.token = token.out.substr(0, token.out.find('\n'));
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE(client.value()->Put("k", RandomBytes(kObject, 8)).ok());
  const std::string http = "127.0.0.1:" + std::to_string(serve.http_port);
  CommandResult top = RunCrescent({"top", "--once", "--http", http}, dir.path());
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("TENANT "));
  EXPECT_TRUE(std::regex_search(top.out, std::regex("\nt1 +\\[[#.]*\\] +16\\.0 KiB +1\\.0 MiB +1 ")))
      << top.out;
}

}  // namespace
}  // namespace crescent::itest
