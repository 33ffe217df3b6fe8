// TLS on the control plane (docs/security.md, "TLS"), as real processes, with
// certificates made here by the openssl CLI: a CA, a server certificate for
// 127.0.0.1 and localhost, a client certificate, and a second CA that signed
// neither. A client trusting the CA is served over gRPC (stat, list) and the
// lean protocol (put, get, exists); with mutual TLS a client certificate is
// needed and one of another CA refused; a client trusting the wrong CA, a
// plain client against a TLS master and a TLS client against a plain one
// each fail with a message saying so, never a hang; a token authenticates
// over TLS (on gRPC as a bearer token, each role served only its calls); a
// master refuses to start on files that do not fit.
#include "rpc/tls.h"

#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <regex>
#include <thread>

#include "integration/cluster.h"
#include "integration/roles_table.h"
#include "rpc/control_channel.h"
#include "rpc/master.grpc.pb.h"
#include "rpc/messages.pb.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Makes the certificates in `dir` (scripts/make_test_certs.sh: ca, other-ca,
// server, client, stranger; NAME.crt and NAME.key each); the script's output on
// failure.
std::string MakeCertificates(const std::string& dir) {
  CommandResult r = RunCommand({CRESCENT_SOURCE_DIR "/scripts/make_test_certs.sh", dir}, "", dir,
                               milliseconds(60000));
  return r.exit_code == 0 ? std::string() : "openssl failed:\n" + r.err;
}

uint64_t MetricValue(int http_port, const std::string& name) {
  httplib::Client http("127.0.0.1", http_port);
  auto res = http.Get("/metrics");
  if (!res || res->status != 200) return 0;
  std::smatch m;
  const std::regex re("\n" + name + " ([0-9]+)");
  return std::regex_search(res->body, m, re) ? std::stoull(m[1]) : 0;
}

class TlsTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(MakeCertificates(dir_.path()), ""); }

  std::string Crt(const std::string& name) const { return dir_.File(name + ".crt"); }
  std::string Key(const std::string& name) const { return dir_.File(name + ".key"); }
  CommandResult Cli(const std::vector<std::string>& args, const std::string& in = "") {
    return RunCrescent(args, dir_.path(), in);
  }
  // Starts serve_ with TLS (mutual with `mutual`) and EXTRA flags.
  void StartTlsServe(bool mutual, std::vector<std::string> extra = {}) {
    extra.insert(extra.end(), {"--tls-cert", Crt("server"), "--tls-key", Key("server")});
    if (mutual) extra.insert(extra.end(), {"--tls-ca", Crt("ca")});
    ASSERT_TRUE(StartServe(dir_, extra, &serve_));
    auto lean = serve_.proc->WaitForMatch(
        std::regex(R"(lean control protocol on (127\.0\.0\.1:[0-9]+))"), kStartTimeout);
    ASSERT_TRUE(lean.has_value()) << serve_.proc->Output();
    lean_ = (*lean)[1];
  }
  TlsConfig Trusting(const std::string& ca, const std::string& cert = "") const {
    TlsConfig t;
    t.ca = Crt(ca);
    if (!cert.empty()) {
      t.cert = Crt(cert);
      t.key = Key(cert);
    }
    return t;
  }
  std::unique_ptr<Client> Connect(const TlsConfig& tls, const std::string& token = "") {
    ClientConfig c;
    c.master_address = serve_.master;
    c.tls = tls;
    c.token = token;
    c.rpc_attempts = 1;
    c.put_retry_ms = 0;
    auto client = Client::Connect(c);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client.value()) : nullptr;
  }
  // A lean control connection to the master's TCP port, with TLS when
  // `tls` has a CA: Hello answered, or why not.
  Status LeanHello(const TlsConfig& tls) {
    std::shared_ptr<rpc::TlsClientContext> context;
    if (!tls.ca.empty()) {
      StatusOr<rpc::TlsPem> pem = rpc::LoadClientTls(tls);
      if (!pem.ok()) return pem.status();
      auto made = rpc::TlsClientContext::Create(*pem, "");
      if (!made.ok()) return made.status();
      context = *made;
    }
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    auto channel = rpc::ControlChannel::Connect(lean_, deadline, nullptr, {}, 64 << 20, nullptr,
                                                context.get());
    if (!channel.ok()) return channel.status();
    proto::ControlEndpointsResponse hello;
    return channel.value()->Call(rpc::ControlMethod::kHello, proto::Empty(), &hello, deadline);
  }
  // The put, get and exists (lean) and stat and list (gRPC) of a served client.
  void RoundTrip(Client& client, const std::string& key) {
    const std::vector<std::byte> value = RandomBytes(3000, 7);
    ASSERT_TRUE(client.Put(key, value).ok());
    StatusOr<std::vector<std::byte>> got = client.Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, value);
    StatusOr<bool> exists = client.Exists(key);
    ASSERT_TRUE(exists.ok()) << exists.status().ToString();
    EXPECT_TRUE(*exists);
    StatusOr<ClusterStat> stat = client.Stat();
    ASSERT_TRUE(stat.ok()) << stat.status().ToString();
    EXPECT_GE(stat->objects, 1u);
    StatusOr<std::vector<std::string>> keys = client.List(key);
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    EXPECT_EQ(*keys, std::vector<std::string>{key});
  }

  TempDir dir_;
  ServeProcess serve_;
  std::string lean_;  // the lean control protocol's HOST:PORT
};

TEST_F(TlsTest, AClientTrustingTheCaIsServedOverGrpcAndTheLeanProtocol) {
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(false));
  std::unique_ptr<Client> client = Connect(Trusting("ca"));
  ASSERT_NE(client, nullptr);
  ASSERT_NO_FATAL_FAILURE(RoundTrip(*client, "tls/k1"));
  // The hot calls went over the lean protocol's TLS port, not gRPC.
  EXPECT_GT(MetricValue(serve_.http_port, "crescent_control_calls_total"), 0u);
  EXPECT_TRUE(LeanHello(Trusting("ca")).ok());

  // The CLI, by its flags; by name too (localhost is in the certificate).
  CommandResult r = Cli({"put", "tls/cli", "-", "--master", serve_.master, "--tls-ca", Crt("ca")},
                        "hello over tls\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string port = serve_.master.substr(serve_.master.rfind(':'));
  r = Cli({"get", "tls/cli", "--master", "localhost" + port, "--tls-ca", Crt("ca")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello over tls\n");
  // A name the certificate does not carry is refused.
  r = Cli({"exists", "tls/cli", "--master", serve_.master, "--tls-ca", Crt("ca"),
           "--tls-server-name", "elsewhere.example"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("elsewhere.example"));
}

TEST_F(TlsTest, MutualTlsNeedsAClientCertificateOfItsCa) {
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(true));
  std::unique_ptr<Client> client = Connect(Trusting("ca", "client"));
  ASSERT_NE(client, nullptr);
  ASSERT_NO_FATAL_FAILURE(RoundTrip(*client, "mtls/k1"));
  EXPECT_TRUE(LeanHello(Trusting("ca", "client")).ok());

  // No certificate, or one of another CA: refused on gRPC and on the lean port.
  CommandResult r = Cli({"exists", "mtls/k1", "--master", serve_.master, "--tls-ca", Crt("ca")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.timed_out);
  EXPECT_THAT(r.err, HasSubstr("no client certificate: give --tls-cert and --tls-key"));
  r = Cli({"exists", "mtls/k1", "--master", serve_.master, "--tls-ca", Crt("ca"), "--tls-cert",
           Crt("stranger"), "--tls-key", Key("stranger")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("client certificate no CA of its --tls-ca signed"));
  Status lean = LeanHello(Trusting("ca"));
  EXPECT_EQ(lean.code(), ErrorCode::kUnavailable) << lean.ToString();
  EXPECT_THAT(lean.message(), HasSubstr("certificate required"));
  lean = LeanHello(Trusting("ca", "stranger"));
  EXPECT_EQ(lean.code(), ErrorCode::kUnavailable) << lean.ToString();
  EXPECT_THAT(lean.message(), HasSubstr("TLS"));
}

TEST_F(TlsTest, AClientTrustingAnotherCaIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(false));
  CommandResult r = Cli({"exists", "k", "--master", serve_.master, "--tls-ca", Crt("other-ca")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.timed_out);
  EXPECT_THAT(r.err, HasSubstr("certificate verify failed"));
  EXPECT_THAT(r.err, HasSubstr("not signed by a CA of this client's --tls-ca"));
  Status lean = LeanHello(Trusting("other-ca"));
  EXPECT_EQ(lean.code(), ErrorCode::kUnavailable) << lean.ToString();
  EXPECT_THAT(lean.message(), HasSubstr("the master's certificate is not trusted"));
}

TEST_F(TlsTest, PlainAndTlsDoNotMixAndSaySo) {
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(false));
  // A plain client against the TLS master: gRPC and the lean port.
  CommandResult r = Cli({"exists", "k", "--master", serve_.master});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.timed_out);
  EXPECT_THAT(r.err, HasSubstr("give this client --tls-ca"));
  Status lean = LeanHello(TlsConfig{});
  EXPECT_EQ(lean.code(), ErrorCode::kUnavailable) << lean.ToString();
  EXPECT_THAT(lean.message(), HasSubstr("serves TLS"));

  // A TLS client against a plain master.
  serve_.proc.reset();
  TempDir plain_dir;
  ServeProcess plain;
  ASSERT_TRUE(StartServe(plain_dir, {}, &plain));
  r = Cli({"exists", "k", "--master", plain.master, "--tls-ca", Crt("ca")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.timed_out);
  EXPECT_THAT(r.err, HasSubstr("the master does not serve TLS there"));
  auto lean_line = plain.proc->WaitForMatch(
      std::regex(R"(lean control protocol on (127\.0\.0\.1:[0-9]+))"), kStartTimeout);
  ASSERT_TRUE(lean_line.has_value());
  lean_ = (*lean_line)[1];
  lean = LeanHello(Trusting("ca"));
  EXPECT_EQ(lean.code(), ErrorCode::kUnavailable) << lean.ToString();
  EXPECT_THAT(lean.message(), HasSubstr("does not serve TLS"));
  // A Unix socket address with TLS is refused before any call.
  r = Cli({"exists", "k", "--master", "unix:" + dir_.File("x.sock"), "--tls-ca", Crt("ca")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("serves no TLS"));
}

TEST_F(TlsTest, ATokenAuthenticatesOverMutualTls) {
  CommandResult r =
      Cli({"token", "add", "--auth-file", dir_.File("auth"), "--name", "app", "--role", "client"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string token = r.out.substr(0, r.out.find('\n'));
  // serve authenticates its own node too, over its private Unix sockets.
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(true, {"--auth-file", dir_.File("auth")}));
  std::unique_ptr<Client> client = Connect(Trusting("ca", "client"), token);
  ASSERT_NE(client, nullptr);
  ASSERT_NO_FATAL_FAILURE(RoundTrip(*client, "auth/k1"));
  // Without the token, TLS alone is not enough.
  std::unique_ptr<Client> anonymous = Connect(Trusting("ca", "client"));
  ASSERT_NE(anonymous, nullptr);
  EXPECT_EQ(anonymous->Exists("auth/k1").status().code(), ErrorCode::kUnauthenticated);
}

// A gRPC client of its own (another language's, grpcurl) sends its token as
// "authorization: Bearer" metadata, which the master takes over TLS: the
// token's role applies as on the lean protocol (docs/security.md, "gRPC").
TEST_F(TlsTest, AGrpcClientAuthenticatesWithABearerTokenOverTls) {
  auto add = [&](const std::string& name, const std::string& role) {
    CommandResult r =
        Cli({"token", "add", "--auth-file", dir_.File("auth"), "--name", name, "--role", role});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  };
  const std::string app = add("app", "client"), node = add("node-9", "node");
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(false, {"--auth-file", dir_.File("auth")}));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFileOrEmpty(Crt("ca"));
  ASSERT_FALSE(ssl.pem_root_certs.empty());
  auto stub = rpc::Master::NewStub(grpc::CreateChannel(serve_.master, grpc::SslCredentials(ssl)));
  auto call = [&](const std::string& token, auto method, const auto& req, auto* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    return (stub.get()->*method)(&ctx, req, resp);
  };
  proto::KeyRequest key;
  key.set_key("grpc/k1");
  proto::ExistsResponse exists;
  grpc::Status s = call(app, &rpc::Master::Stub::Exists, key, &exists);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(exists.status().code(), 0);
  proto::StatsResponse stats;
  EXPECT_TRUE(call(app, &rpc::Master::Stub::Stats, proto::Empty(), &stats).ok());
  // A node token reads no keys; a snapshot is the admin's.
  s = call(node, &rpc::Master::Stub::Exists, key, &exists);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("Exists needs the client or admin role"));
  proto::SnapshotResponse snap;
  s = call(app, &rpc::Master::Stub::Snapshot, proto::Empty(), &snap);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // No token, or a wrong one: UNAUTHENTICATED.
  s = call("", &rpc::Master::Stub::Exists, key, &exists);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  std::string wrong = app;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  s = call(wrong, &rpc::Master::Stub::Exists, key, &exists);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("unknown token"));
}

// The roles table over gRPC: an admin, a node and a client token, each as a
// bearer token under TLS, make every call of the Master service (with an
// empty request: the role is checked before the request is read), and are
// refused PERMISSION_DENIED exactly where the table says; without a token
// every call but ControlEndpoints is UNAUTHENTICATED.
TEST_F(TlsTest, EachRoleIsRefusedOverGrpcExactlyTheCallsTheRolesTableDenies) {
  std::map<std::string, std::string> tokens;
  for (const std::string role : {"admin", "node", "client"}) {
    CommandResult r = Cli({"token", "add", "--auth-file", dir_.File("auth"), "--name",
                           "matrix-" + role, "--role", role});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    tokens[role] = r.out.substr(0, r.out.find('\n'));
  }
  ASSERT_NO_FATAL_FAILURE(StartTlsServe(false, {"--auth-file", dir_.File("auth")}));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFileOrEmpty(Crt("ca"));
  grpc::GenericStub stub(grpc::CreateChannel(serve_.master, grpc::SslCredentials(ssl)));
  auto call = [&](const std::string& token, const std::string& method) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    grpc::CompletionQueue cq;
    grpc::Slice empty("");  // a request of no bytes: every field at its default
    grpc::ByteBuffer request(&empty, 1), reply;
    grpc::Status status;
    auto rpc = stub.PrepareUnaryCall(&ctx, "/crescent.rpc.Master/" + method, request, &cq);
    rpc->StartCall();
    rpc->Finish(&reply, &status, &ctx);
    void* tag = nullptr;
    bool ok = false;
    if (!cq.Next(&tag, &ok) || tag != &ctx)
      status = grpc::Status(grpc::StatusCode::INTERNAL, "lost");
    return status;
  };
  // A node's and an admin's calls first, a client's last: RemoveAll and
  // the removes by the admin then find what the others made, and no order
  // of the calls is refused for the state the others left.
  for (const std::string role : {"node", "admin", "client"}) {
    for (const std::string& method : kEveryMasterCall) {
      SCOPED_TRACE(role + " " + method);
      const grpc::Status s = call(tokens[role], method);
      if (RoleMayCall(role, method)) {
        EXPECT_NE(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
        EXPECT_THAT(s.error_message(), HasSubstr(method));
      }
    }
  }
  for (const std::string& method : kEveryMasterCall) {
    SCOPED_TRACE("no token " + method);
    const grpc::Status s = call("", method);
    if (method == "ControlEndpoints") {
      EXPECT_TRUE(s.ok()) << s.error_message();
    } else {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    }
  }
}

TEST_F(TlsTest, AStoreNodeMountsAndHeartbeatsOverMutualTls) {
  ClusterOptions o;
  o.stores = 1;
  o.master_flags = {"--tls-cert", Crt("server"), "--tls-key", Key("server"), "--tls-ca", Crt("ca")};
  o.store_flags = {"--tls-ca", Crt("ca"), "--tls-cert", Crt("client"), "--tls-key", Key("client")};
  Cluster cluster(o);
  ASSERT_TRUE(cluster.Start());
  ClientConfig c = cluster.ClientConfigFor(false);
  c.tls = Trusting("ca", "client");
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  // Mounted, and kept alive past several heartbeat TTLs (1 s).
  ASSERT_TRUE(cluster.WaitForSegments(*client.value(), 1, kStartTimeout));
  std::this_thread::sleep_for(milliseconds(2500));
  ASSERT_TRUE(cluster.WaitForSegments(*client.value(), 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(RoundTrip(*client.value(), "store/k1"));
}

TEST_F(TlsTest, AMasterRefusesFilesThatDoNotFit) {
  struct Case {
    std::vector<std::string> flags;
    std::string want;
  };
  const Case cases[] = {
      {{"--tls-cert", Crt("server"), "--tls-key", Key("client")},
       "is not the key of the certificate in --tls-cert"},
      {{"--tls-cert", Crt("server")}, "TLS needs both --tls-cert and --tls-key"},
      {{"--tls-cert", dir_.File("missing.crt"), "--tls-key", Key("server")},
       "cannot read: No such file or directory"},
      {{"--tls-cert", Key("server"), "--tls-key", Key("server")}, "holds no PEM certificate"},
      {{"--tls-cert", Crt("server"), "--tls-key", Crt("server")}, "holds no PEM private key"},
      {{"--tls-cert", Crt("server"), "--tls-key", Key("server"), "--tls-ca", Key("ca")},
       "--tls-ca '" + Key("ca") + "': holds no PEM certificate"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"serve", "--port",         "0",    "--http-port",
                                  "0",     "--segment-size", "16MiB"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << testing::PrintToString(c.flags);
    EXPECT_THAT(r.err, HasSubstr(c.want)) << testing::PrintToString(c.flags);
  }
  // A client's files are checked the same way.
  CommandResult r = Cli({"exists", "k", "--master", "127.0.0.1:1", "--tls-cert", Crt("client"),
                         "--tls-key", Key("client")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs --tls-ca"));
}

}  // namespace
}  // namespace crescent::itest
