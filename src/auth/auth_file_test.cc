#include "auth/auth_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "auth/token.h"

namespace crescent::auth {
namespace {

using testing::HasSubstr;

UserEntry Entry(Role role, std::string tenant = "") {
  return UserEntry{role, std::move(tenant), MakeVerifier(RandomKey(), RandomKey())};
}

AuthFile Sample() {
  AuthFile f;
  EXPECT_TRUE(f.SetTenantQuota("t1", 1 << 30).ok());
  EXPECT_TRUE(f.SetTenantQuota("t2", 5).ok());
  EXPECT_TRUE(f.AddUser("root", Entry(Role::kAdmin)).ok());
  EXPECT_TRUE(f.AddUser("app", Entry(Role::kClient, "t1")).ok());
  EXPECT_TRUE(f.AddUser("plain", Entry(Role::kClient)).ok());
  EXPECT_TRUE(f.AddUser("n1", Entry(Role::kNode)).ok());
  return f;
}

void ExpectSame(const AuthFile& a, const AuthFile& b) {
  EXPECT_EQ(a.tenant_quotas, b.tenant_quotas);
  ASSERT_EQ(a.users.size(), b.users.size());
  for (const auto& [name, e] : a.users) {
    const UserEntry* o = b.FindUser(name);
    ASSERT_NE(o, nullptr) << name;
    EXPECT_EQ(o->role, e.role);
    EXPECT_EQ(o->tenant, e.tenant);
    EXPECT_EQ(o->verifier.salt, e.verifier.salt);
    EXPECT_EQ(o->verifier.stored_key, e.verifier.stored_key);
    EXPECT_EQ(o->verifier.server_key, e.verifier.server_key);
  }
}

TEST(AuthFileTest, FormatThenParseGivesTheFileBack) {
  const AuthFile f = Sample();
  const std::string text = FormatAuthFile(f);
  StatusOr<AuthFile> back = ParseAuthFile(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(f, *back);
  EXPECT_EQ(FormatAuthFile(*back), text);
  EXPECT_THAT(text, HasSubstr("\ntenant t1 1073741824\n"));
  EXPECT_THAT(text, HasSubstr("\nuser n1 node - "));
}

TEST(AuthFileTest, TheFileHoldsNoTokenSecret) {
  AuthFile f;
  const Token t = NewToken("app");
  ASSERT_TRUE(
      f.AddUser(t.name, UserEntry{Role::kClient, "", MakeVerifier(t.secret, RandomKey())}).ok());
  const std::string text = FormatAuthFile(f);
  EXPECT_EQ(text.find(ToHex(View(t.secret))), std::string::npos);
  const Verifier& v = f.FindUser("app")->verifier;
  // Neither the secret nor ClientKey (what a proof needs) is written.
  EXPECT_EQ(text.find(ToHex(View(ClientKeyOf(t.secret, v.salt)))), std::string::npos);
}

TEST(AuthFileTest, EditsAreCheckedWithClearErrors) {
  AuthFile f = Sample();
  Status s = f.AddUser("app", Entry(Role::kClient));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("a token named 'app' already exists"));
  s = f.AddUser("x", Entry(Role::kClient, "nope"));
  EXPECT_THAT(s.message(), HasSubstr("no tenant 'nope' (create it first: crescent tenant set"));
  s = f.AddUser("x", Entry(Role::kNode, "t1"));
  EXPECT_THAT(s.message(), HasSubstr("only a client token has a tenant"));
  s = f.AddUser("bad name", Entry(Role::kAdmin));
  EXPECT_THAT(s.message(), HasSubstr("token name 'bad name' may hold only"));
  s = f.RemoveUser("ghost");
  EXPECT_THAT(s.message(), HasSubstr("no token named 'ghost'"));
  EXPECT_TRUE(f.RemoveUser("app").ok());
  EXPECT_EQ(f.FindUser("app"), nullptr);
  s = f.SetTenantQuota("t1", 0);
  EXPECT_THAT(s.message(), HasSubstr("a quota must be above 0"));
  EXPECT_TRUE(f.SetTenantQuota("t1", 7).ok());
  EXPECT_EQ(f.tenant_quotas.at("t1"), 7u);
  EXPECT_EQ(ParseRole("root").status().message(),
            "unknown role 'root' (roles: admin, client, node)");
}

TEST(AuthFileTest, CommentsAndRecordOrderAreAccepted) {
  const std::string key(64, '0');
  const std::string text = "# hello\n\ncrescent-auth-file 1\n# users first\nuser a client t " +
                           key + " " + key + " " + key + "\ntenant t 10\n";
  StatusOr<AuthFile> f = ParseAuthFile(text);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->FindUser("a")->tenant, "t");
}

TEST(AuthFileTest, CorruptFilesAreRefusedNamingTheLine) {
  const std::string k(64, 'a');
  const std::string keys = " " + k + " " + k + " " + k + "\n";
  const std::string head = "crescent-auth-file 1\n";
  struct Case {
    std::string text;
    std::string want;
  };
  const Case cases[] = {
      {"", "empty"},
      {"# only a comment\n", "empty"},
      {"crescent-auth-file 2\n", "line 1: not an auth file"},
      {head + "tenant t 10", "line 2: no newline at its end"},
      {head + "tenant t\n", "line 2: a tenant line is"},
      {head + "tenant t 010\n", "line 2: the quota is not a byte count"},
      {head + "tenant t -1\n", "line 2: the quota is not a byte count"},
      {head + "tenant t 18446744073709551616\n", "line 2: the quota is not a byte count"},
      {head + "tenant t 0\n", "line 2: tenant 't': a quota must be above 0"},
      {head + "tenant t 1\ntenant t 2\n", "line 3: tenant 't' again"},
      {head + "user a admin -" + keys + "user a node -" + keys, "line 3: user 'a' again"},
      {head + "user a root -" + keys, "line 2: unknown role 'root'"},
      {head + "user a client -  " + k + " " + k + " " + k + "\n", "line 2: a user line is"},
      {head + "user a client - " + k + " " + k + " " + k.substr(1) + "\n", "not 64 lowercase hex"},
      {head + "user a client t" + keys, "line 2: user 'a' names tenant 't', which has no tenant"},
      {head + "tenant t 1\nuser a admin t" + keys, "line 3: only a client token has a tenant"},
      {head + "user a:b client -" + keys, "line 2: token name 'a:b' may hold only"},
      {head + "admin a\n", "line 2: unknown record 'admin'"},
      {head + "tenant t 1\r\n", "line 2: the quota is not a byte count"},
  };
  for (const Case& c : cases) {
    StatusOr<AuthFile> f = ParseAuthFile(c.text);
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().code(), ErrorCode::kCorruptData);
    EXPECT_THAT(f.status().message(), HasSubstr(c.want)) << c.text;
  }
}

}  // namespace
}  // namespace crescent::auth
