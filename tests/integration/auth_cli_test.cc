// `crescent token add|rm` and `crescent tenant set` as real processes: the
// token printed once authenticates (through the handshake, against the file
// the command wrote), the file keeps no copy of it and stays mode 0600, a
// revoked token no longer authenticates, and every bad input gets a clear
// error with exit code 2 and the file left as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "auth/auth_file_io.h"
#include "auth/handshake.h"
#include "integration/cluster.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
using testing::IsEmpty;

class AuthCliTest : public testing::Test {
 protected:
  CommandResult Cli(const std::vector<std::string>& args) { return RunCrescent(args, dir_.path()); }
  std::string File() const { return dir_.File("auth"); }

  // The token printed by `crescent token add ARGS`, checked to be one line.
  std::string Add(std::vector<std::string> args) {
    args.insert(args.begin(), {"token", "add", "--auth-file", File()});
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
    return r.out;
  }

  // Authenticates `token_text` against the auth file as it is now on disk.
  StatusOr<auth::Identity> Authenticate(const std::string& token_text) {
    StatusOr<auth::AuthFile> file = auth::LoadAuthFile(File());
    if (!file.ok()) return file.status();
    StatusOr<auth::Token> token = auth::ParseToken(token_text);
    if (!token.ok()) return token.status();
    auth::ServerHandshake server(std::make_shared<auth::ServerCredentials>(std::move(*file)));
    auth::ClientHandshake client(*token);
    StatusOr<std::string> proof = client.OnServerFirst(server.Step(client.Start()));
    if (!proof.ok()) return proof.status();
    return client.OnServerFinal(server.Step(*proof));
  }

  TempDir dir_;
};

TEST_F(AuthCliTest, APrintedTokenAuthenticatesWithItsRoleAndTenant) {
  CommandResult r = Cli({"tenant", "set", "--auth-file", File(), "t1", "--quota", "1G"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string client = Add({"--name", "app", "--role", "client", "--tenant", "t1"});
  const std::string admin = Add({"--name", "root", "--role", "admin"});
  const std::string node = Add({"--name", "node-1", "--role", "node"});
  EXPECT_EQ(client.rfind("app:", 0), 0u) << client;

  StatusOr<auth::Identity> id = Authenticate(client);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->role, auth::Role::kClient);
  EXPECT_EQ(id->tenant, "t1");
  id = Authenticate(admin);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->role, auth::Role::kAdmin);
  id = Authenticate(node);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->role, auth::Role::kNode);

  const std::string text = ReadFileOrEmpty(File());
  for (const std::string& t : {client, admin, node}) {
    const std::string secret = t.substr(t.find(':') + 1, 64);
    EXPECT_EQ(text.find(secret), std::string::npos) << "the file holds a token's secret";
  }
  EXPECT_THAT(text, HasSubstr("tenant t1 1073741824\n"));
  struct stat st {};
  ASSERT_EQ(::stat(File().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // A quota changed in place keeps the tokens.
  r = Cli({"tenant", "set", "--auth-file", File(), "t1", "--quota", "2M"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFileOrEmpty(File()), HasSubstr("tenant t1 2097152\n"));
  EXPECT_TRUE(Authenticate(client).ok());
}

TEST_F(AuthCliTest, ARevokedTokenNoLongerAuthenticates) {
  const std::string a = Add({"--name", "a", "--role", "client"});
  const std::string b = Add({"--name", "b", "--role", "client"});
  CommandResult r = Cli({"token", "rm", "--auth-file", File(), "--name", "a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  StatusOr<auth::Identity> id = Authenticate(a);
  EXPECT_EQ(id.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(id.status().message(), auth::kUnknownTokenMessage);
  EXPECT_TRUE(Authenticate(b).ok());
  // A name added again gets a new token; the old one stays revoked.
  const std::string a2 = Add({"--name", "a", "--role", "client"});
  EXPECT_NE(a2, a);
  EXPECT_TRUE(Authenticate(a2).ok());
  EXPECT_FALSE(Authenticate(a).ok());
}

TEST_F(AuthCliTest, BadInputGetsAClearErrorAndLeavesTheFileAsItWas) {
  Add({"--name", "app", "--role", "client"});
  const std::string before = ReadFileOrEmpty(File());
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const std::string f = File();
  const Case cases[] = {
      {{"token", "add", "--auth-file", f, "--name", "x", "--role", "root"},
       "crescent token add: INVALID_ARGUMENT: unknown role 'root' (roles: admin, client, node)"},
      {{"token", "add", "--auth-file", f, "--name", "app", "--role", "client"},
       "a token named 'app' already exists"},
      {{"token", "add", "--auth-file", f, "--name", "x", "--role", "client", "--tenant", "nope"},
       "no tenant 'nope' (create it first: crescent tenant set"},
      {{"token", "add", "--auth-file", f, "--name", "x", "--role", "admin", "--tenant", "nope"},
       "only a client token has a tenant"},
      {{"token", "add", "--auth-file", f, "--name", "a b", "--role", "client"},
       "token name 'a b' may hold only letters, digits"},
      {{"token", "add", "--auth-file", f, "--role", "client"}, "--name is required"},
      {{"token", "rm", "--auth-file", f, "--name", "ghost"}, "no token named 'ghost'"},
      {{"token", "rm", "--auth-file", dir_.File("missing"), "--name", "app"},
       "cannot open auth file '" + dir_.File("missing") + "': No such file or directory"},
      {{"tenant", "set", "--auth-file", f, "t1", "--quota", "0"}, "a quota must be above 0"},
      {{"tenant", "set", "--auth-file", f, "t1", "--quota", "lots"}, "--quota"},
      {{"tenant", "set", "--auth-file", f, "t:1", "--quota", "1G"}, "tenant 't:1' may hold only"},
      {{"token"}, "A subcommand is required"},
  };
  for (const Case& c : cases) {
    CommandResult r = Cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << testing::PrintToString(c.args);
    EXPECT_THAT(r.err, HasSubstr(c.want)) << testing::PrintToString(c.args);
    EXPECT_THAT(r.out, IsEmpty()) << testing::PrintToString(c.args);
  }
  EXPECT_EQ(ReadFileOrEmpty(File()), before);
  EXPECT_FALSE(std::ifstream(dir_.File("missing")).good());
}

TEST_F(AuthCliTest, ACorruptOrExposedFileIsRefused) {
  Add({"--name", "app", "--role", "client"});
  ASSERT_EQ(::chmod(File().c_str(), 0644), 0);
  CommandResult r = Cli({"token", "add", "--auth-file", File(), "--name", "b", "--role", "node"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("has mode 0644: others than its owner may read or change it; "
                               "refused (chmod 600 " +
                               File() + ")"));
  EXPECT_THAT(r.out, IsEmpty());
  ASSERT_EQ(::chmod(File().c_str(), 0600), 0);
  ASSERT_TRUE(WriteFile(File(), ReadFileOrEmpty(File()) + "user broken\n"));
  r = Cli({"token", "rm", "--auth-file", File(), "--name", "app"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("auth file '" + File() + "' is corrupt: line "));
  EXPECT_THAT(r.err, HasSubstr("a user line is: user NAME ROLE"));
}

// A token that cannot be printed (stdout full) is one nobody holds: the
// command fails and the file keeps no trace of it.
TEST_F(AuthCliTest, ATokenThatCannotBePrintedIsNotAdded) {
  CommandResult r = RunCommand({"/bin/sh", "-c",
                                "exec \"$0\" token add --auth-file \"$1\" "
                                "--name app --role client > /dev/full",
                                CrescentBin(), File()},
                               "", dir_.path(), std::chrono::milliseconds(60'000));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot print the token"));
  EXPECT_THAT(r.err, HasSubstr("not added"));
  StatusOr<auth::AuthFile> file = auth::LoadAuthFile(File());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->FindUser("app"), nullptr);
  // The name is free for the next try.
  EXPECT_TRUE(Authenticate(Add({"--name", "app", "--role", "client"})).ok());
}

TEST_F(AuthCliTest, HelpDescribesTheVerbs) {
  CommandResult r = Cli({"token", "add", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--role"));
  EXPECT_THAT(r.out, HasSubstr("cannot be recovered"));
  r = Cli({"tenant", "set", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--quota"));
  r = Cli({"--help"});
  EXPECT_THAT(r.out, HasSubstr("token"));
  EXPECT_THAT(r.out, HasSubstr("tenant"));
}

}  // namespace
}  // namespace crescent::itest
