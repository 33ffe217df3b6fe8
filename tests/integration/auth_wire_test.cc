// Masters with an auth file, as real processes (docs/security.md): a client
// without a token is refused (UNAUTHENTICATED, over the lean protocol and over
// gRPC alike) and one with a valid token served, by the CLI and by the C++
// client; a token revoked with `crescent token rm` and a SIGHUP is refused
// afterwards, on a connection already open too, and a reload that fails keeps
// the credentials loaded before; `crescent serve --auth-file` authenticates
// its own store node and serves a client with a token end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Sends SIGHUP to `proc` and waits for one more line saying `answer` ("SIGHUP:
// reloaded", "cannot reload") than it had printed before.
testing::AssertionResult Hangup(Process& proc, const std::string& answer) {
  const size_t before = Count(proc.Output(), answer);
  proc.Kill(SIGHUP);
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (Count(proc.Output(), answer) == before) {
    if (std::chrono::steady_clock::now() > deadline || !proc.Running()) {
      return testing::AssertionFailure() << "no '" << answer << "' after SIGHUP:\n"
                                         << proc.Output();
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return testing::AssertionSuccess();
}

class AuthWireTest : public testing::Test {
 protected:
  CommandResult Cli(const std::vector<std::string>& args, const std::string& in = "") {
    return RunCrescent(args, dir_.path(), in);
  }
  std::string AuthFile() const { return dir_.File("auth"); }

  // `crescent token add` NAME with ROLE: the token it printed (no newline).
  std::string AddToken(const std::string& name, const std::string& role) {
    CommandResult r =
        Cli({"token", "add", "--auth-file", AuthFile(), "--name", name, "--role", role});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }
  // `token` in a file of its own, mode `mode`.
  std::string TokenFile(const std::string& name, const std::string& token, mode_t mode = 0600) {
    const std::string path = dir_.File(name);
    EXPECT_TRUE(WriteFile(path, token + "\n"));
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  // A master with the auth file (holding a node token for its store node and
  // a client token "app", in app_file_) and one store node that authenticates.
  void StartCluster() {
    node_file_ = TokenFile("node.token", AddToken("node-1", "node"));
    app_token_ = AddToken("app", "client");
    app_file_ = TokenFile("app.token", app_token_);
    ClusterOptions o;
    o.stores = 1;
    o.master_flags = {"--auth-file", AuthFile()};
    o.store_flags = {"--token-file", node_file_};
    cluster_ = std::make_unique<Cluster>(o);
    ASSERT_TRUE(cluster_->Start());
  }
  std::vector<std::string> With(std::vector<std::string> args,
                                const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    args.insert(args.end(), {"--master", cluster_->master_address()});
    return args;
  }

  TempDir dir_;
  std::unique_ptr<Cluster> cluster_;
  std::string node_file_, app_token_, app_file_;
};

TEST_F(AuthWireTest, AClientWithoutATokenIsRefusedAndOneWithATokenServed) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const std::string data = RandomString(100 * 1024, 7);

  // Without a token: the hot calls (lean protocol) and the others (gRPC).
  CommandResult r = Cli(With({"put", "k1", "-"}, {}), data);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(r.err, HasSubstr("this master needs a token"));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ls"}, {"stat"}, {"rm", "--all", "--yes"}}) {
    SCOPED_TRACE(args[0]);
    r = Cli(With(args, {}));
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));
    EXPECT_THAT(r.err, HasSubstr("authorization: Bearer"));
  }

  // With one: every verb, the gRPC-only ones over the lean protocol too.
  r = Cli(With({"put", "k1", "-"}, {"--token-file", app_file_}), data);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli(With({"get", "k1", "-"}, {"--token-file", app_file_}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == data);
  r = Cli(With({"ls"}, {"--token-file", app_file_}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "k1\n");
  r = Cli(With({"stat"}, {"--token-file", app_file_}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(cluster_->store(0).segment));
  // $CRESCENT_TOKEN, the token itself, does as well.
  r = RunCommand({"/usr/bin/env", "CRESCENT_TOKEN=" + app_token_, CrescentBin(), "exists", "k1",
                  "--master", cluster_->master_address()},
                 "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "k1\tyes\n");

  // A token the master does not hold, a token file others may read, and text
  // that is no token: each refused, saying so.
  const std::string unknown = "app:" + std::string(64, '7');
  r = Cli(With({"exists", "k1"}, {"--token-file", TokenFile("unknown.token", unknown)}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(r.err, HasSubstr("unknown token"));
  r = Cli(With({"exists", "k1"}, {"--token-file", TokenFile("open.token", app_token_, 0644)}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("has mode 0644"));
  EXPECT_THAT(r.err, HasSubstr("chmod 600"));
  r = Cli(With({"exists", "k1"}, {"--token-file", TokenFile("bad.token", "not a token")}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a token"));
}

TEST_F(AuthWireTest, GrpcCannotBypassTheToken) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  // A client that sends every call over gRPC, the hot ones included.
  ClientConfig c = cluster_->ClientConfigFor(false);
  c.lean_control = false;
  c.put_retry_ms = 0;
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const std::vector<std::byte> value = RandomBytes(1000, 3);
  Status put = client.value()->Put("grpc/k", value);
  EXPECT_EQ(put.code(), ErrorCode::kUnauthenticated) << put.ToString();
  StatusOr<bool> exists = client.value()->Exists("grpc/k");
  EXPECT_EQ(exists.status().code(), ErrorCode::kUnauthenticated) << exists.status().ToString();
  // A store node without a token cannot mount (MountSegment is refused on gRPC).
  CommandResult store =
      Cli({"store", "--master", cluster_->master_address(), "--secret-file",
           cluster_->secret_file(), "--segment-size", "16MiB", "--no-shm", "--node-id", "forged"});
  EXPECT_EQ(store.exit_code, 2) << store.out;
  EXPECT_THAT(store.err, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(store.err, HasSubstr("authorization: Bearer"));
  // A token with the lean protocol off is refused at once, not sent in clear.
  c.token = app_token_;
  auto refused = Client::Connect(c);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("lean control protocol"));
}

TEST_F(AuthWireTest, ARevokedTokenIsRefusedAfterSighup) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const std::string gone = AddToken("gone", "client");
  const std::string gone_file = TokenFile("gone.token", gone);
  // "gone" was added after the master started.
  ASSERT_TRUE(Hangup(cluster_->master(), "SIGHUP: reloaded"));

  // A client connected with the token, and the CLI, are served.
  ClientConfig c = cluster_->ClientConfigFor(false);
  c.token = gone;
  c.put_retry_ms = 0;
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE(client.value()->Put("rev/k", RandomBytes(1000, 5)).ok());
  CommandResult r = Cli(With({"exists", "rev/k"}, {"--token-file", gone_file}));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = Cli({"token", "rm", "--auth-file", AuthFile(), "--name", "gone"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(Hangup(cluster_->master(), "SIGHUP: reloaded"));
  // The open connection is closed at its next call, and a new one refused.
  StatusOr<bool> exists = client.value()->Exists("rev/k");
  EXPECT_EQ(exists.status().code(), ErrorCode::kUnauthenticated) << exists.status().ToString();
  exists = client.value()->Exists("rev/k");
  EXPECT_EQ(exists.status().code(), ErrorCode::kUnauthenticated) << exists.status().ToString();
  EXPECT_THAT(exists.status().message(), HasSubstr("unknown token"));
  r = Cli(With({"exists", "rev/k"}, {"--token-file", gone_file}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown token"));
  // The other tokens still work: the store node's (its heartbeats keep its
  // segment) and the client's.
  r = Cli(With({"exists", "rev/k"}, {"--token-file", app_file_}));
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // A reload that fails (the file exposed) keeps the credentials as they were.
  ASSERT_EQ(::chmod(AuthFile().c_str(), 0644), 0);
  ASSERT_TRUE(Hangup(cluster_->master(), "cannot reload the auth file"));
  EXPECT_THAT(cluster_->master().Output(), HasSubstr("has mode 0644"));
  r = Cli(With({"get", "rev/k", "-"}, {"--token-file", app_file_}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli(With({"exists", "rev/k"}, {"--token-file", gone_file}));
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(::chmod(AuthFile().c_str(), 0600), 0);
}

TEST_F(AuthWireTest, ServeWithAnAuthFileAuthenticatesItsOwnNode) {
  app_token_ = AddToken("app", "client");
  app_file_ = TokenFile("app.token", app_token_);
  const std::string before = ReadFileOrEmpty(AuthFile());
  ServeProcess serve;
  ASSERT_TRUE(StartServe(dir_, {"--auth-file", AuthFile()}, &serve));
  EXPECT_THAT(serve.proc->Output(), HasSubstr("1 token(s)"));
  // Its node's token lives in memory only.
  EXPECT_EQ(ReadFileOrEmpty(AuthFile()), before);

  const std::string data = RandomString(300 * 1024, 9);
  CommandResult r =
      RunCrescent({"put", "serve/k", "-", "--master", serve.master, "--token-file", app_file_},
                  dir_.path(), data);
  ASSERT_EQ(r.exit_code, 0) << r.err << serve.proc->Output();
  r = RunCrescent({"get", "serve/k", "-", "--master", serve.master, "--token-file", app_file_},
                  dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == data);
  r = RunCrescent({"get", "serve/k", "-", "--master", serve.master}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));

  // Its node keeps its segment across a reload, which keeps the node's token.
  ASSERT_TRUE(Hangup(*serve.proc, "SIGHUP: reloaded"));
  r = RunCrescent({"get", "serve/k", "-", "--master", serve.master, "--token-file", app_file_},
                  dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == data);

  serve.proc->Kill(SIGTERM);
  std::optional<ExitStatus> exit = serve.proc->Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString() << serve.proc->Output();
}

}  // namespace
}  // namespace crescent::itest
